"""The experiment plan file: factors and levels, a design, the trial protocol; expanded into ordered runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import Field, ValidationError, field_validator, model_validator

from ..bench.fio import DiskSpec, DiskTest
from ..bench.iperf import IperfSpec
from ..bench.metrics import Metric, Test
from ..bench.workload import FixedWorkload
from ..config.cluster import ClusterSpec, Frozen
from ..config.yamlio import load_model
from ..hardware.emulation import check_factors, is_share
from ..errors import ConfigError
from ..design.registry import PLAN_DESIGNS, spec
from .design import NEEDS_N, DesignType, make_design, nested
from .factors import FACTORS, LAB_FACTORS, Level, RunSpec, normalize_level, realize
from .protocol import Protocol
from .search import check_search_plan, screening_points
from ..config.yamlio import validation_message
from ..gluster.volume import VolumeConfig, plan_volume

_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"


class HardwareDesign(Frozen):
    """The outer design of a nested plan: which lab hardware settings to build (each a campaign).

    ``list`` builds the ``settings`` given, e.g. settings chosen to cover a question's candidates; a factor a
    setting leaves out takes its first level.
    """

    type: Literal["grid", "fractional", "lhs", "sobol", "list"] = "lhs"
    n: int | None = Field(default=None, ge=1, le=1000, description="hardware settings (lhs, sobol)")
    seed: int = 0
    settings: list[dict[str, Any]] = Field(default=[], max_length=1000, description="list: the settings to build")
    again: bool = Field(default=False, description="measure the first setting (today) again after the others: "
                        "its drift over the plan sets the interval's campaign-to-campaign term")
    # A descent (campaign.descent): after the settings, each knob lowered from today through its levels in turn,
    # until the stage it feeds has bound every metric at past + 1 of them.
    descend: dict[str, list[Any]] = Field(default={}, description="list: after the settings, lower each knob of "
                                          "today (the first setting) through these levels, one knob at a time, "
                                          "stopping once every metric fell by `binds` at past + 1 of them")
    binds: float = Field(default=0.15, gt=0, lt=1, description="descend: the fall below today that counts as "
                         "the knob's stage binding (0.15: 15%)")
    past: int = Field(default=1, ge=0, le=10, description="descend: levels taken after the first that binds")

    @field_validator("settings")
    @classmethod
    def _settings(cls, v: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for i, setting in enumerate(v):
            norm: dict[str, Any] = {}
            for name, value in setting.items():
                if name not in LAB_FACTORS:
                    raise ValueError(f"settings[{i}]: {name!r} is not a lab hardware factor "
                                     f"(use {', '.join(LAB_FACTORS)})")
                try:
                    norm[name] = normalize_level(FACTORS[name], value)
                except ValueError as exc:
                    raise ValueError(f"settings[{i}].{name}: {exc}") from None
            out.append(norm)
        return out

    @field_validator("descend")
    @classmethod
    def _descend(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        out: dict[str, list[Any]] = {}
        for name, levels in v.items():
            if name not in LAB_FACTORS:
                raise ValueError(f"descend: {name!r} is not a lab hardware factor (use {', '.join(LAB_FACTORS)})")
            if not isinstance(levels, list) or not levels:
                raise ValueError(f"descend.{name}: give a list of levels below today's, e.g. [50%, 25%, 12%]")
            try:
                out[name] = [normalize_level(FACTORS[name], x) for x in levels]
            except ValueError as exc:
                raise ValueError(f"descend.{name}: {exc}") from None
        return out

    @model_validator(mode="after")
    def _list(self) -> HardwareDesign:
        if (self.type == "list") != bool(self.settings):
            raise ValueError("a hardware design of type list needs settings, and only it takes them")
        if self.descend and self.type != "list":
            raise ValueError("descend lowers the first setting of a list: give type: list and today as its first "
                             "setting")
        return self

    def all_settings(self, fixed: Mapping[str, Level]) -> list[dict[str, Level]]:
        """The settings given (each on top of ``fixed``), then each descent's steps: today with one knob lowered."""
        given = [{**fixed, **st} for st in self.settings]
        return given + [{**given[0], name: level} for name, levels in self.descend.items() for level in levels]


class Design(Frozen):
    type: DesignType = "grid"
    n: int | None = Field(default=None, ge=1, le=100000, description="points (lhs, sobol; optional for fractional)")
    seed: int = 0
    # adaptive: start with `initial` I-optimal runs, then add `batch` at a time where a committee of models
    # disagrees, until `budget` runs or the stopping rule (see gluster_model.campaign.adaptive).
    initial: int | None = Field(default=None, ge=2, le=100000, description="adaptive: runs before the first fit "
                                "(default: the model's parameters + 2)")
    budget: int | None = Field(default=None, ge=2, le=100000, description="adaptive, search: at most this many "
                               "runs (search: 40 at most, its default)")
    batch: int = Field(default=4, ge=1, le=1000, description="adaptive: runs chosen per round")
    confirm: int = Field(default=2, ge=1, le=10, description="search: the confirmation's looks at most (the best "
                         "candidate and the defaults side by side, in alternating order); past the first, all are "
                         "measured when the first look cannot decide, and judged once")
    metric: Metric | None = Field(
        default=None, description="adaptive: the metric the committee models (default: the first test's)")
    tolerance: float = Field(default=0.02, gt=0, le=1, description="adaptive: stop when predictions move less "
                             "than this share")
    patience: int = Field(default=2, ge=1, le=100, description="adaptive: ... for this many rounds in a row, with "
                          "the importance ranking unchanged")
    # nested: the lab hardware factors get a design of their own (settings chosen to vary independently), and
    # this design runs within each setting, re-seeded per setting (a split-plot: hardware is hard to change).
    hardware: HardwareDesign | None = None
    # replicates: measure again only a seeded sample of this many of the design's runs (the same points and config
    # hashes as a campaign of the full design), for run-to-run noise.
    subset: int | None = Field(default=None, ge=1, le=100000, description="only a random sample of this many of "
                               "the design's runs (seeded by seed), e.g. to replicate part of a campaign")

    # interleaved: the plan's runs at each of the two levels of factor `sides` are the two sides of a comparison,
    # measured in `looks` campaigns a side in alternating pairs (A B B A ...), for `glmodel compare --against
    # sides`: a drift through the session falls on both sides alike.
    sides: str | None = Field(default=None, description="a factor of two levels: its first level is side A, its "
                              "second side B, each measured in `looks` campaigns, interleaved A B B A")
    looks: int = Field(default=2, ge=1, le=20, description="sides: campaigns a side (2: A B B A)")

    @field_validator("type")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in PLAN_DESIGNS:
            raise ValueError(f"{v!r} is not a design (use {', '.join(PLAN_DESIGNS)})")
        return v

    @model_validator(mode="after")
    def _adaptive(self) -> Design:
        kind = spec(self.type)
        a = "an" if self.type[0] in "aeiou" else "a"
        if self.confirm != 2 and self.type != "search":
            raise ValueError("confirm (the confirmation's looks) belongs to a search design")
        if self.sides is not None and (kind.rounds or self.hardware is not None):
            raise ValueError("an interleaved comparison (sides) runs a fixed set of runs in alternating campaigns; "
                             "it cannot be adaptive, a search, or nested in a hardware design")
        if kind.needs_budget and self.budget is None:
            raise ValueError(f"{a} {self.type} design needs a budget (the most runs it may spend)")
        if self.initial is not None and self.budget is not None and self.initial > self.budget:
            raise ValueError(f"initial {self.initial} is more than the budget {self.budget}")
        if kind.rounds and self.hardware is not None:
            raise ValueError(f"{a} {self.type} design chooses runs within one campaign; it cannot be nested in a "
                             "hardware design")
        if self.subset is not None and kind.rounds:
            raise ValueError(f"{a} {self.type} design chooses its runs as it goes; it has no set of runs to sample")
        if self.hardware is not None and self.hardware.type in ("lhs", "sobol") and self.hardware.n is None:
            raise ValueError(f"the hardware design {self.hardware.type} needs n (the number of hardware settings)")
        return self


class CampaignDisk(DiskSpec):
    """A campaign's disk baseline: by default the sequential figures the models take (``disk_read_mbps``,
    ``disk_write_mbps``); random 4 KB tests when asked for (``tests``), which measure hosts one at a time
    where they share a machine: beside each other they slow each other (``bench.fio.measuring_order``)."""

    tests: list[DiskTest] = Field(default=["seq_write", "seq_read"], min_length=1)


class Baselines(Frozen):
    network: bool = True
    disk: bool = True
    iperf: IperfSpec = IperfSpec()
    fio: CampaignDisk = CampaignDisk(size="64MB", runtime=5)
    at_once: bool | Literal["auto"] = Field(
        default="auto", description="measure the network and disk baselines at once where limits hold every link "
        "and brick device (a figure held back then falls short of its limit and is measured again alone); auto: "
        "only on hosts with machines of their own (on a shared machine, such as the lab, each took 1-2% from the "
        "other); true: there too; false: one after the other")
    keep: bool = Field(
        default=True, description="a hardware setting that changed only knobs that cannot move a baseline's "
        "figures (the disks for the network's, the link and latency for the disks') keeps that baseline from "
        "the last setting that measured it, instead of measuring it again; false: every setting measures both")

    @field_validator("at_once", mode="before")
    @classmethod
    def _at_once(cls, value: object) -> object:
        if value is True or value is False or value == "auto":
            return value
        raise ValueError(f"{value!r} is not one of true, false, auto")


Study = Literal["read_cost", "concurrent_reads", "block_size_sweep", "replication_overhead", "study_hardware",
                "study_gluster"]


class Variant(Frozen):
    """Another scale of the same plan (e.g. ``quick`` for the lab): what it changes, the rest is inherited.
    A factor set to null is removed; protocol keys override one by one; design, baselines and workload replace."""

    description: str = ""
    factors: dict[str, Any] = {}
    design: Design | None = None
    protocol: dict[str, Any] = {}
    baselines: Baselines | None = None
    workload: dict[str, Any] | None = None  # replaces the plan's (e.g. random I/O where the plan runs small files)


class PlanFile(Frozen):
    name: str = Field(pattern=_NAME)
    description: str = ""
    study: Study | None = Field(default=None, description="which methodology study's tables the report draws")
    factors: dict[str, list[Any]]
    design: Design = Design()
    protocol: Protocol = Protocol()
    workload: FixedWorkload = FixedWorkload()
    volume_options: dict[str, str] = Field(default={}, description="other `gluster volume set` options for every volume")
    baselines: Baselines = Baselines()
    variants: dict[str, Variant] = {}

    def variant(self, name: str, source: str = "plan") -> PlanFile:
        """The plan at another scale, named ``<name>.<variant>`` (a campaign of its own)."""
        v = self.variants.get(name)
        if v is None:
            known = ", ".join(self.variants) or "none"
            raise ConfigError(source, "variants", f"no variant '{name}' (this plan has: {known})")
        base = self.model_dump(mode="json", exclude={"variants"})
        factors = dict(base["factors"])
        for key, levels in v.factors.items():
            if levels is None:
                factors.pop(key, None)
            else:
                factors[key] = levels
        data = {**base, "name": f"{self.name}.{name}"[:64], "factors": factors,
                "description": v.description or base["description"],
                "protocol": {**base["protocol"], **v.protocol}}
        if v.design is not None:
            data["design"] = v.design.model_dump(mode="json")
        if v.baselines is not None:
            data["baselines"] = v.baselines.model_dump(mode="json")
        if v.workload is not None:
            data["workload"] = v.workload
        try:
            return PlanFile.model_validate(data)
        except ValidationError as exc:
            err = validation_message(exc, source, PlanFile)
            raise ConfigError(source, f"variants.{name}.{err.key}", err.problem) from None

    @field_validator("factors", mode="before")
    @classmethod
    def _factors(cls, v: Any) -> Any:
        if not isinstance(v, dict) or not v:
            raise ValueError("factors must map factor names to a level or a list of levels")
        out: dict[str, list[Level]] = {}
        for name, levels in v.items():
            factor = FACTORS.get(str(name))
            if factor is None:
                raise ValueError(f"unknown factor '{name}'; known: {', '.join(FACTORS)}")
            raw = levels if isinstance(levels, list) else [levels]
            if not raw:
                raise ValueError(f"factor '{name}' has no levels")
            norm: list[Level] = []
            for item in raw:
                try:
                    value = normalize_level(factor, item)
                except ValueError as exc:
                    raise ValueError(f"factor '{name}': {exc}") from None
                if value in norm:
                    raise ValueError(f"factor '{name}': level {item!r} given twice")
                norm.append(value)
            out[str(name)] = norm
        return out

    @field_validator("volume_options")
    @classmethod
    def _options(cls, v: dict[str, str]) -> dict[str, str]:
        try:
            VolumeConfig(options=v)  # same checks as a volume file
        except ValidationError as exc:
            raise ValueError(str(exc.errors()[0]["msg"]).removeprefix("Value error, ")) from None
        return v

    @model_validator(mode="after")
    def _design(self) -> PlanFile:
        if self.design.type in NEEDS_N and self.design.n is None:
            raise ValueError(f"design {self.design.type} needs n (the number of points)")
        return self


def load_plan(path: str | Path, variant: str | None = None) -> PlanFile:
    plan = load_model(path, PlanFile, "with name, factors, design, protocol")
    return plan.variant(variant, str(path)) if variant else plan


@dataclass
class Expanded:
    """A plan made concrete for one cluster: runs in execution order, grouped by volume."""

    runs: list[RunSpec]
    skipped: list[tuple[dict[str, Level], str]] = field(default_factory=list)  # impossible points, why
    duplicates: int = 0
    notes: list[str] = field(default_factory=list)  # how the plan adapted to the cluster (levels left out)

    @property
    def volumes(self) -> list[str]:
        return list(dict.fromkeys(r.volume_key for r in self.runs))

    @property
    def lab_settings(self) -> list[tuple[tuple[str, str], ...]]:
        """The lab hardware settings the runs need, in execution order (``[()]`` for a plan without any)."""
        return list(dict.fromkeys(r.lab for r in self.runs))

    def with_setting(self, setting: tuple[tuple[str, str], ...]) -> Expanded:
        """The runs that need one lab hardware setting."""
        return Expanded([r for r in self.runs if r.lab == setting])


def check_sides(plan: PlanFile, source: str = "plan") -> None:
    """An interleaved comparison's side factor: a factor of the plan with exactly two levels, not lab hardware
    (a hardware setting is a campaign of its own already)."""
    side = plan.design.sides
    levels = plan.factors.get(side or "", [])
    if side not in plan.factors:
        raise ConfigError(source, "design.sides", f"{side!r} is not a factor of the plan; name the factor whose two "
                          f"levels are the sides (factors: {', '.join(plan.factors) or 'none'})")
    if len(levels) != 2:
        raise ConfigError(source, "design.sides", f"factor {side} has {len(levels)} level(s); the sides are its "
                          "first and second level: give exactly two")
    if side in LAB_FACTORS:
        raise ConfigError(source, "design.sides", f"{side} is lab hardware, which a plan sets per campaign already; "
                          "compare two campaigns of a hardware plan instead (--against CAMPAIGN)")


def side_runs(expanded: Expanded, side: str, level: Level) -> Expanded:
    """The runs of one side of an interleaved comparison: those at ``level`` of factor ``side``."""
    return Expanded([r for r in expanded.runs if r.features.get(side) == level])


def expand(plan: PlanFile, cluster: ClusterSpec, source: str = "plan") -> Expanded:
    """Design points -> runs, impossible ones set aside with the reason, duplicates merged, volume-major order.

    Runs that share a volume are adjacent, so each volume is created once and torn down after its last run.
    """
    if cluster.lab_dir is None:  # a real cluster: hardware factors only as emulation it allows
        check_factors(cluster, [n for n in LAB_FACTORS if n in plan.factors], source)
    else:
        descend = plan.design.hardware.descend if plan.design.hardware is not None else {}
        shares = [(n, v) for n in LAB_FACTORS for v in [*plan.factors.get(n, []), *descend.get(n, [])]
                  if is_share(v)]
        if shares:
            name, value = shares[0]
            raise ConfigError(source, f"factors.{name}", f"{value!r} is a share of each host's own hardware, for a "
                              "cluster that allows emulation; on a glmodel lab give the setting itself (e.g. 500mbit, "
                              "60MB/s, 1GB, 0.5)")
    if plan.design.type == "search":
        check_search_plan(plan.factors, plan.protocol.repetitions, plan.design.budget, source)
    if plan.design.sides is not None:
        check_sides(plan, source)
    if spec(plan.design.type).rounds:
        varied_lab = [n for n in LAB_FACTORS if len(plan.factors.get(n, [])) > 1]
        if varied_lab:
            a = "an" if plan.design.type[0] in "aeiou" else "a"
            raise ConfigError(source, f"factors.{varied_lab[0]}", f"{a} {plan.design.type} design chooses runs "
                              "within one campaign; vary lab hardware with a grid or space-filling design, or fix "
                              "it here")

    def identity(point: dict[str, Level]) -> str | None:
        try:
            run = realize(point, fixed, plan.volume_options)
            check_buildable(run, cluster, source)
        except (ValueError, ConfigError):
            return None
        return run.config_hash

    fixed = plan.workload
    notes: list[str] = []
    for name, have in (("servers", len(cluster.servers)), ("clients", len(cluster.clients))):
        # A recipe written for a larger cluster adapts: the levels this cluster cannot hold are left out, and
        # said so; a plan none of whose levels fit is a mistake, refused.
        levels = plan.factors.get(name, [])
        too_many = [v for v in levels if isinstance(v, int) and v > have]
        if too_many and len(too_many) == len(levels):
            raise ConfigError(source, f"factors.{name}", f"level {too_many[0]} asks for more {name} than "
                              f"{cluster.name} has ({have}); allowed: 1 to {have}")
        if too_many:
            plan = plan.model_copy(update={"factors": {**plan.factors,
                                                       name: [v for v in levels if v not in too_many]}})
            notes.append(f"{name} {', '.join(map(str, too_many))} left out of the design: {cluster.name} has {have}")
    try:
        points = design_points(plan, identity)
    except ValueError as exc:
        raise ConfigError(source, "design", str(exc)) from None
    out = Expanded([], notes=notes)
    seen: set[str] = set()
    for point in points:
        try:
            run = realize(point, fixed, plan.volume_options)
            check_buildable(run, cluster, source)  # now, so nothing impossible reaches a server
        except (ValueError, ConfigError) as exc:
            bad = _bad_level(exc, point)
            if bad is not None:  # a level invalid on its own (threads: 5000) is a mistake, not a point to skip
                raise ConfigError(source, f"factors.{bad[0]}", f"level {bad[1]!r}: {bad[2]}") from None
            out.skipped.append((point, _reason(exc)))
            continue
        if run.config_hash in seen:
            out.duplicates += 1
            continue
        seen.add(run.config_hash)
        out.runs.append(run)
    if plan.design.subset is not None and plan.design.subset < len(out.runs):
        out.runs = sample_runs(out.runs, plan.design.subset, plan.design.seed)
    out.runs = execution_order(out.runs)
    if not out.runs:
        why = out.skipped[0][1] if out.skipped else "the design has no points"
        raise ConfigError(source, "factors", f"no point of the design can run on {cluster.name}: {why}")
    return out


def sample_runs(runs: list[RunSpec], k: int, seed: int) -> list[RunSpec]:
    """``k`` of the runs drawn without replacement (seeded), in design order."""
    keep = set(np.random.default_rng(seed + 7919).choice(len(runs), size=k, replace=False).tolist())
    return [r for i, r in enumerate(runs) if i in keep]


def execution_order(runs: list[RunSpec]) -> list[RunSpec]:
    """Lab hardware changes are slow (a reformat, a new baseline): group by setting, then by volume, keeping
    the given order within a volume."""
    settings: dict[tuple[tuple[str, str], ...], int] = {}
    volumes: dict[str, int] = {}
    for r in runs:
        settings.setdefault(r.lab, len(settings))
        volumes.setdefault(r.volume_key, len(volumes))
    return sorted(runs, key=lambda r: (settings[r.lab], volumes[r.volume_key]))


def check_buildable(run: RunSpec, cluster: ClusterSpec, source: str) -> None:
    """Raise ValueError/ConfigError when the cluster cannot hold the run's volume or its clients."""
    plan_volume(run.volume, cluster, None, source)
    _check_cluster(run, cluster)


def design_points(plan: PlanFile, identity: Callable[[dict[str, Level]], str | None] | None = None
                  ) -> list[dict[str, Level]]:
    """The plan's design points; with a hardware design, lab factors outside and the rest inside (nested,
    each setting's inner points topped up to n distinct runs, ``identity`` naming the run a point becomes)."""
    d = plan.design
    if d.type == "search":  # its first round; the search chooses the rest as it goes (campaign.search)
        return screening_points(plan.factors)
    if d.hardware is None:
        return make_design(plan.factors, d.type, d.n, d.seed)
    outer = {k: v for k, v in plan.factors.items() if k in LAB_FACTORS}
    inner = {k: v for k, v in plan.factors.items() if k not in LAB_FACTORS}
    if d.hardware.type != "list" and not any(len(v) > 1 for v in outer.values()):
        raise ValueError("a hardware design needs at least one lab factor (link, disk, ram, cpu, ...) with "
                         "several levels")
    if d.hardware.type == "list":
        missing = sorted({k for st in d.hardware.settings for k in outer if k not in st and len(outer[k]) > 1})
        if missing:
            raise ValueError(f"every hardware setting must give {', '.join(missing)} (the plan varies it)")
        loose = [k for k in d.hardware.descend if k not in outer]
        if loose:
            raise ValueError(f"descend lowers {', '.join(loose)}, which the plan's factors do not give: list "
                             "each as a factor (its first level is today's unless the first setting says)")
        fixed = {k: v[0] for k, v in outer.items()}
        return nested({}, inner, "list", None, d.hardware.seed, d.type, d.n, d.seed, identity,
                      settings=d.hardware.all_settings(fixed))
    return nested(outer, inner, d.hardware.type, d.hardware.n, d.hardware.seed, d.type, d.n, d.seed, identity)


def _check_cluster(run: RunSpec, cluster: ClusterSpec) -> None:
    servers = run.features.get("servers")
    if isinstance(servers, int) and servers > len(cluster.servers):
        raise ValueError(f"servers={servers} but the cluster has {len(cluster.servers)}")
    clients = run.workload.clients
    if clients is not None and clients > len(cluster.clients):
        raise ValueError(f"clients={clients} but the cluster has {len(cluster.clients)}")


def _bad_level(exc: Exception, point: dict[str, Level]) -> tuple[str, Level, str] | None:
    """(factor, level, why) when pydantic refused one field of the point by itself (a field's own bounds or
    format, not a rule between fields)."""
    if not isinstance(exc, ValidationError):
        return None
    for err in exc.errors():
        loc = err.get("loc", ())
        if loc and str(loc[0]) in point:
            return str(loc[0]), point[str(loc[0])], str(err.get("msg", "")).removeprefix("Value error, ")
    return None


def _reason(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        return str(first.get("msg", exc)).removeprefix("Value error, ")
    if isinstance(exc, ConfigError):
        return exc.problem
    return str(exc)

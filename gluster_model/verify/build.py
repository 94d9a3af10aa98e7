"""Turning a what-if question into runs of the training plan: each scenario's configuration, on a glmodel lab
its hardware (from its ``lab:`` settings or translated from the inputs it sets), the verify.* plan they run under,
and every refusal that needs no host (a scenario the cluster cannot build, a model input verify cannot set)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..bench.metrics import TEST_METRICS
from ..errors import ConfigError, GlmodelError
from ..model.features import HARDWARE_INPUTS, HELD_BY_SETTINGS, Feature, InputValue, Inputs
from ..hardware.settings import moved_by
from ..plan.factors import FACTORS, LAB_FACTORS, Level, RunSpec, normalize_level, realize
from ..plan.file import Expanded, PlanFile, check_buildable, execution_order
from ..predict.scenarios import Question, Scenario
from ..predict.whatif import resolve
from ..campaign.records import campaign_name, setting_campaign

if TYPE_CHECKING:
    from ..config.cluster import ClusterSpec
    from ..model.artifact import ModelFile

# Inputs a cluster has rather than is given: measured by baselines and host facts, set only on a lab.
MEASURED_INPUTS = (*HARDWARE_INPUTS, "regime")
# Model inputs that are plan factors of the same name.
FACTOR_INPUTS = tuple(n for n, f in FACTORS.items() if f.family != "lab")


@dataclass(frozen=True)
class Target:
    """One scenario made a run (``run`` is None when the cluster cannot build it, ``why`` says why)."""

    scenario: Scenario
    values: Inputs  # the scenario's full configuration (reference <- baseline <- candidate)
    run: RunSpec | None
    why: str = ""


def lab_settings(values: Mapping[str, InputValue], asked: Mapping[str, str]) -> dict[str, str]:
    """The lab settings that build a configuration: those asked for (``lab:``), then translations of its
    hardware inputs (link from network_gbps, disk from disk_*_mbps, RAM from client_ram_gb, bricks from
    base_filesystem). CPU has no translation: its input is a measured score, so it comes from ``lab: {cpu}``."""
    out: dict[str, str] = {}
    if "network_gbps" in values:
        out["link"] = f"{max(1, round(float(values['network_gbps']) * 1000))}mbit"
    rates = {k: f"{float(values[f'{k}_mbps']):.4g}MB/s" for k in ("disk_read", "disk_write") if f"{k}_mbps" in values}
    if len(rates) == 2 and rates["disk_read"] == rates["disk_write"]:
        out["disk"] = rates["disk_read"]
    else:
        out.update(rates)
    if "client_ram_gb" in values:
        out["ram"] = f"{max(1, round(float(values['client_ram_gb']) * 1024))}MB"
    if values.get("base_filesystem") in ("ext4", "xfs"):
        out["brick_backing"] = str(values["base_filesystem"])
    given = dict(asked)
    if "disk" in given:  # a pair given as one replaces both translations
        out.pop("disk_read", None), out.pop("disk_write", None)
    if "disk_read" in given or "disk_write" in given:
        out.pop("disk", None)
    out.update(given)
    return {k: str(normalize_level(FACTORS[k], v)) for k, v in out.items()}


def built_by(measured: str, asked: Mapping[str, str]) -> bool:
    """Whether a lab setting asked for moves the measured input ``measured``: then it builds that input, and the
    baseline, or a candidate that does not set the input itself, is not also given a throttle at the figure it
    resolves to (the baseline's are a measured setting's figures; a disk with no IOPS limit, asked as such, read
    1.58 GB/s through its loop device's cache in one campaign and 755 MB/s the next: a throttle at the first is
    faster than the device, which emulation refuses)."""
    return any(name in moved_by(measured) for name in asked)


def scenario_point(values: Mapping[str, InputValue], plan: PlanFile, lab: Mapping[str, str] | None,
                   ) -> tuple[dict[str, Level], list[str]]:
    """The plan factors of one configuration (lab settings included when ``lab`` is given) and the varied plan
    factors the configuration leaves open."""
    point: dict[str, Level] = {k: v[0] for k, v in plan.factors.items() if len(v) == 1}
    if lab is None:  # a real cluster: its hardware is what it is
        point = {k: v for k, v in point.items() if k not in LAB_FACTORS}
    for name in FACTOR_INPUTS:
        v = values.get(name)
        if v is None:
            continue
        if FACTORS[name].kind in ("int", "size"):
            if float(v) <= 0:  # the table's 0: does not apply here (shard_block_size without shards, disperse)
                continue
            v = int(v)
        point[name] = normalize_level(FACTORS[name], v)
    if "layout" not in values and "replica" in values:  # the hardware family says copies, not the layout
        copies = int(values["replica"])
        point["layout"] = "replicate" if copies >= 2 else "distribute"
        if copies < 2:
            point.pop("replica", None)
    if lab is not None:
        if any(k in lab for k in ("disk", "disk_read", "disk_write")):  # a rate given replaces the plan's pair
            for k in ("disk", "disk_read", "disk_write"):
                point.pop(k, None)
        point.update(lab)
    determined = set(point)
    if {"disk_read", "disk_write"} <= determined or "disk" in determined:
        determined |= {"disk", "disk_read", "disk_write"}
    open_ = [k for k, v in plan.factors.items() if len(v) > 1 and k not in determined
             and not (k == "replica" and point.get("layout") != "replicate")
             and (lab is not None or k not in LAB_FACTORS)]
    return point, open_


SAME_SETTING = 1.10  # measured figures within 10% of each other: one hardware setting measured more than once


def set_apart(f: Feature) -> bool:
    """Whether the data varied a measured hardware input on purpose, not only measured it more than once.

    Each campaign measures its own baselines, so one 1 Gbit/s setting is 0.996 in one and 0.998 in the next;
    building "996mbit" for verify would add a throttle the training data never had (an 8 KB O_SYNC write
    measured 5.4 MB/s under a 1.8 GB/s disk throttle against 12 without).
    """
    if f.kind == "categorical":
        return len(f.levels) > 1
    return f.low is not None and f.high is not None and (f.low <= 0 or f.high / f.low > SAME_SETTING)


def targets(mf: ModelFile, q: Question, plan: PlanFile, cluster: ClusterSpec, metrics: Sequence[str]) -> list[Target]:
    """Each scenario of the question as a run of the plan on this cluster; one error line for what cannot be.

    A glmodel lab builds each scenario's hardware with its own throttles, and a cluster that allows emulation
    (``emulation: {allow: true}``) with the same plan factors, applied on its hosts as a collect applies them
    (shares of what each host has, or absolute values no faster than it): the path a user's proof takes. Any
    other cluster is measured as it is, and a scenario that changes its hardware is left out, saying why."""
    on_lab = cluster.lab_dir is not None or cluster.emulation.allow
    domain = mf.domain(metrics[0])
    names = {f.name for m in metrics for f in mf.domain(m).inputs}
    unknown = sorted(names - set(MEASURED_INPUTS) - set(FACTOR_INPUTS))
    if unknown:
        raise ConfigError(mf.path, "inputs", f"verify cannot build {', '.join(unknown)} on a cluster (it sets plan "
                          f"factors and lab hardware only)")
    base_lab = dict(q.baseline.lab)
    # A measured input the fit left out as held by every setting (its spread was the cluster's own noise) is not
    # built either: the plan never set it, and a throttle at one campaign's figure could even be faster than the
    # device measures the next time (emulation refuses that).
    held = {name for m in metrics for name, why in mf.schema(m).dropped if why.startswith(HELD_BY_SETTINGS)}
    varied = {f.name for m in metrics for f in mf.domain(m).varied
              if (f.name not in MEASURED_INPUTS or set_apart(f)) and f.name not in held}
    base_values = resolve(domain, q.baseline, q.baseline)
    out: list[Target] = []
    for i, s in enumerate(q.scenarios):
        where = f"{q.source or 'scenarios'}: {'baseline' if s.baseline else f'candidates[{i - 1}]'} ({s.name})"
        values: Inputs = {}
        for m in metrics:
            values.update(resolve(mf.domain(m), q.baseline, s))
        lab: dict[str, str] | None = None
        if on_lab:
            if "cpu_score" in names and "cpu" not in {**base_lab, **s.lab} and "cpu" not in plan.factors:
                raise ConfigError(where, "lab.cpu", "cpu_score is a measured score; say which CPU quota builds it "
                                  "(e.g. lab: {cpu: 0.5} on the baseline)")
            try:
                # Only hardware the data varied is built from the inputs: one the data held constant (the link
                # of a Gluster-options dataset, kept for the physical model) is whatever the plan's lab setting
                # gives, as in training.
                asked = {**base_lab, **s.lab}
                lab = lab_settings({k: v for k, v in values.items() if k in MEASURED_INPUTS and k in varied
                                    and ((k in s.values and not s.baseline) or not built_by(k, asked))}, asked)
            except ValueError as exc:
                raise ConfigError(where, "lab", str(exc)) from None
            if "cpu" not in lab and "cpu" in plan.factors and len(plan.factors["cpu"]) > 1:
                raise ConfigError(where, "lab.cpu", "the plan varied cpu; say which CPU quota builds this scenario "
                                  "(lab: {cpu: CORES})")
        elif not s.baseline:
            changed = [k for k in MEASURED_INPUTS if k in values and values.get(k) != base_values.get(k)]
            if changed or s.lab:
                out.append(Target(s, values, None, f"changes {', '.join(changed or list(s.lab))}, which only a "
                                  f"glmodel lab or a cluster that allows emulation can set; {cluster.name} is "
                                  "measured as it is"))
                continue
        try:
            point, open_ = scenario_point(values, plan, lab)
        except ValueError as exc:
            raise ConfigError(where, "", f"cannot be made a run of plan {plan.name}: {exc}") from None
        if open_:
            raise ConfigError(where, open_[0], f"plan {plan.name} varies {open_[0]}, and neither the model's inputs "
                              f"nor the scenario say which level to build")
        try:
            run = realize(point, plan.workload, plan.volume_options)
            check_buildable(run, cluster, where)
        except ConfigError as exc:
            raise ConfigError(where, "", f"{cluster.name} cannot build it: {exc.problem}") from None
        except ValueError as exc:
            raise ConfigError(where, "", f"{cluster.name} cannot build it: {_first_line(exc)}") from None
        out.append(Target(s, values, run))
    return out


def _first_line(exc: Exception) -> str:
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        return str(exc.errors()[0].get("msg", exc)).removeprefix("Value error, ")
    return str(exc).splitlines()[0]


VERIFY_PREFIX = "verify."  # a verification plan's name: the training plan's with this in front (a label only)


def trained_plan(verification_plan_name: str) -> str:
    """The name of the training plan a verification plan was made from."""
    return verification_plan_name.removeprefix(VERIFY_PREFIX)


def verification_plan(plan: PlanFile) -> PlanFile:
    """The training plan under a ``verify.`` name: same protocol, baselines and workload; campaigns of its own."""
    data = plan.model_dump(mode="json", exclude={"variants"})
    data["name"] = f"{VERIFY_PREFIX}{plan.name}"[:64]
    data["description"] = f"verification of models fitted on {plan.name}"
    return PlanFile.model_validate(data)


@dataclass(frozen=True)
class Work:
    """What a verification will build and measure: its runs, in execution order, and their campaigns."""

    metrics: list[str]
    targets: list[Target]
    plan: PlanFile  # the training plan under its verify. name
    base: str
    expanded: Expanded
    campaigns: list[str]


def prepare(cluster: ClusterSpec, mf: ModelFile, q: Question, plan: PlanFile,
            metrics: Sequence[str] | None = None) -> Work:
    """Every check that needs no host: the metrics, each scenario's run (or why not), the campaigns."""
    asked = _metrics(mf, plan, metrics)
    found = targets(mf, q, plan, cluster, asked)
    runs = list({t.run.config_hash: t.run for t in found if t.run is not None}.values())
    vplan = verification_plan(plan)
    base = campaign_name(vplan, cluster)
    expanded = Expanded(execution_order(runs))
    names = [setting_campaign(base, s) for s in expanded.lab_settings] if runs else []
    return Work(asked, found, vplan, base, expanded, names)


def _metrics(mf: ModelFile, plan: PlanFile, metrics: Sequence[str] | None) -> list[str]:
    """The model's metrics that the plan's tests measure (or those asked, which must be both)."""
    tests = set(plan.workload.tests)
    measured: set[str] = {m for t in tests for m in TEST_METRICS[t]}
    asked = list(metrics) if metrics else [m for m in mf.metrics if m in measured]
    bad = [m for m in asked if m not in mf.metrics]
    if bad:
        raise GlmodelError(f"--metric: {', '.join(bad)} not in {mf.path} (it has {', '.join(mf.metrics)})")
    unmeasured = [m for m in asked if m not in measured]
    if unmeasured or not asked:
        raise GlmodelError(f"plan {plan.name} does not measure {', '.join(unmeasured or mf.metrics)} (its tests: "
                           f"{', '.join(plan.workload.tests)}); verify needs the plan the model was trained on")
    return asked

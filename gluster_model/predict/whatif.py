"""Answer a what-if question from a model file: per metric and scenario, the prediction with its interval, the
change against the baseline with an interval of its own, whether it rests on measurements, what the scenario's
hardware can carry, the bottleneck at the baseline, and a ranking of the candidates by MB/s gained per price.

Basis of a prediction:

- ``measured``: the scenario is a measured configuration (the measured mean is shown beside the prediction);
- ``interpolated``: its hardware is a measured setting or a mix of measured ones, every input inside its measured
  range, and its workload no further from a measured one than the measured ones are from each other;
- ``bounded``: an upgrade: it leaves the measured data only by a faster link or disk than the baseline's, and
  another stage whose capacity was measured bounds what the upgrade can give. Answered by the bottleneck model
  (model/bottleneck.py: throughput follows the binding stage, elasticity 1, until the next stage binds), with
  the bound and the stage that binds after the upgrade;
- ``extrapolated``: anything else (model/domain.py says how each is judged), including an upgrade of every stage
  at once, which nothing measured bounds. Such a number is a guess, and is marked as one.

A candidate is ranked only when it is priced, interpolated, bounded or measured, not predicted above what its own
hardware can carry, and its gain is positive with an interval that excludes zero; every other candidate is
listed with the reason it is not ranked. Rank 1 is the best upgrade.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import GlmodelError
from ..model.artifact import config_columns
from ..model.domain import EXACT, Domain
from ..bench.metrics import shown_unit
from ..model.bottleneck import LOWER_IS_BETTER, NEW_CAMPAIGN_SD, RESOURCE_STAGES
from ..model.features import Feature, InputValue, Inputs, label, show_value as show_value, with_derived
from ..model.physics import OP_STAGES, STAGES, model_stages, read_bins
from ..model.learners import CHANGE_REFITS
from ..gluster.read_placement import ReadSpread, read_spread
from .capacity import layout_of, usable_fraction
from .scenarios import Question, Scenario
from ..model.artifact import json_safe

if TYPE_CHECKING:
    import numpy as np

    from ..model.artifact import ModelFile

Basis = Literal["measured", "interpolated", "bounded", "extrapolated"]


@dataclass
class Prediction:
    scenario: str
    value: float  # MB/s
    low: float
    high: float
    basis: Basis
    distance: float  # to the nearest measured configuration (unit-free, see model/domain.py)
    flags: list[str] = field(default_factory=list)
    measured_mean: float | None = None  # the metric measured at this very configuration
    measured_trials: int = 0
    delta: float | None = None  # against the baseline, MB/s
    delta_pct: float | None = None
    delta_low: float | None = None  # interval of the change itself (not of two predictions); None: unknown
    delta_high: float | None = None
    ceiling: float | None = None  # MB/s the scenario's own hardware can carry (its slowest stage)
    ceiling_stage: str = ""
    price: float | None = None
    price_per_gain: float | None = None  # price / MB/s gained
    gain_per_cost: float | None = None  # MB/s gained per unit of price
    rank: int | None = None  # by gain per price among the candidates that qualify, 1 = best
    reason: str = ""  # why it is not ranked, a key of NOT_RANKED ("" when ranked, and for the baseline)
    not_ranked: str = ""  # the same as a sentence
    bound: float | None = None  # bounded upgrade: MB/s the stages it does not upgrade let through (measured)
    bound_stage: str = ""  # the stage that sets that bound
    binds_after: str = ""  # the stage that limits the scenario (the bottleneck model's answer)
    capacity_from: str = ""  # bounded/extrapolated upgrades: where its hardware figures come from
    tied_with: list[str] = field(default_factory=list)  # rank 1: the ranked candidates it cannot be told from
    unit: str = "MB/s"  # the metric's unit (files/s for a small-file rate), of value, delta, bound

    @property
    def unmoved(self) -> bool:
        """Predicted as the baseline (within ``UNMOVED_PCT``): what it upgrades does not bind."""
        return abs(self.delta_pct or 0.0) < UNMOVED_PCT

    @property
    def above_ceiling(self) -> bool:
        return self.ceiling is not None and self.value > self.ceiling * (1 + CEILING_TOL)

    @property
    def effect(self) -> str:
        """``baseline``, ``gain``, ``loss``, or ``no measurable effect`` (the change's interval holds zero or
        is unknown)."""
        if self.delta is None:
            return "baseline"
        if self.delta_low is None or self.delta_high is None or self.delta_low <= 0 <= self.delta_high:
            return "no measurable effect"
        return "gain" if self.delta > 0 else "loss"


CEILING_TOL = 0.01  # a prediction within 1% of its hardware's ceiling is at it, not above it
# A bounded candidate predicted to move its metric by less than this (%) leaves the binding stage as it was.
UNMOVED_PCT = 0.5
# Training data that never exceeded their own hardware's ceiling by more than this (uncached I/O) make the
# ceiling a hard limit for predictions too; data above it (reads from page cache) make it no limit at all.
CEILING_OBEYED = 1.1


@dataclass
class Lever:
    """How the prediction at the baseline moves with one input (between its neighbouring measured values)."""

    feature: str
    kind: Literal["elasticity", "switch"]
    effect_pct: float  # +10% of a numeric input, or the switch to ``to``
    elasticity: float | None = None  # d ln ŷ / d ln x
    to: str = ""
    off_data: bool = False  # the step leaves the measured region (e.g. one of two inputs always varied together)


@dataclass
class Headroom:
    """How far one resource (its hardware inputs scaled together) can fall below the baseline's before the metric
    drops by ``HEADROOM_DROP``."""

    resource: str  # a key of RESOURCES
    share: float  # the lowest share of today's figures that keeps the drop within HEADROOM_DROP (1: none)
    floor: dict[str, float]  # each of its inputs at that share
    ends: Literal["drop", "least", "data"]  # what ended the scan: a drop, the least measured value, or the data
    # ("data": lowering this resource alone leaves the measured settings)

    @property
    def limited(self) -> bool:
        return self.ends == "drop"


# What a host has, as the inputs that measure it: a disk's read and write rates fall together when it is slower.
RESOURCES: dict[str, tuple[str, ...]] = {"network link": ("network_gbps",),
                                         "disks": ("disk_read_mbps", "disk_write_mbps", "disk_randread_iops",
                                                   "disk_randwrite_iops"),
                                         "client RAM": ("client_ram_gb",), "CPU": ("cpu_score",)}
HEADROOM_DROP = 0.05  # a fall smaller than this is within run-to-run noise on the lab (CV 2.5-15%)
_HEADROOM_STEPS = 24


@dataclass
class MetricAnswer:
    metric: str
    model: str
    radius: float
    predictions: list[Prediction]
    levers: list[Lever]
    bottleneck: Lever | None
    best_upgrade: str | None  # rank 1
    headroom: list[Headroom] = field(default_factory=list)
    # What limits the baseline, one answer for the headline, the tables, --details, the JSON and the report:
    # the binding stage of the model at the baseline where the model has stages, else the input whose +10%
    # moves the metric most; "" where neither (nothing raises it here).
    limit: str = ""
    # A stage the model puts within its own error of ``limit`` at the baseline (its capacity less than the
    # interval's factor above it): either may be what binds, so an upgrade of it alone is no sure "no gain".
    close_behind: str = ""

    @property
    def limit_text(self) -> str:
        """``limit`` as every rendering says it, with the stage close behind it named."""
        if not self.limit or not self.close_behind:
            return self.limit
        return f"{self.limit}, with the {self.close_behind} within the model's error of them"

    @property
    def unit(self) -> str:
        return self.predictions[0].unit if self.predictions else shown_unit(self.metric)

    @property
    def best(self) -> Prediction | None:
        return next((p for p in self.predictions if p.rank == 1), None)

    @property
    def ranked(self) -> list[Prediction]:
        return sorted((p for p in self.predictions if p.rank), key=lambda p: p.rank or 0)

    @property
    def top_gain(self) -> Prediction | None:
        """What limits the baseline, as the question's own candidates show it: the one that gains most (MB/s,
        whatever its price) with a gain clear of zero inside the data (measured, interpolated or bounded);
        None when no candidate of the file moves the metric. The same contrasts the tables show, so the headline
        never names a lever whose candidate has no effect."""
        gains = [p for p in self.predictions[1:] if p.effect == "gain" and p.basis != "extrapolated"]
        return max(gains, key=lambda p: p.delta or 0.0, default=None)

    @property
    def all_guesses(self) -> bool:
        """Every candidate (the baseline aside) is extrapolated: there is no answer inside the data."""
        return all(p.basis == "extrapolated" for p in self.predictions[1:])

    @property
    def no_best(self) -> str:
        """Why no candidate is ranked, in one sentence ("" when one is)."""
        if self.best is not None:
            return ""
        if self.all_guesses:
            return "every candidate lies outside the measured data"
        outside = [p.scenario for p in self.predictions[1:] if p.basis == "extrapolated" and (p.delta or 0) > 0]
        return "no priced candidate gains measurably inside the data" + (
            f"; predicted to gain but outside it: {', '.join(outside)}" if outside else "")


def parts_of(a: Answer, combined: str) -> list[str]:
    """The candidates whose changes together make up ``combined``'s (each part alone), where the question has
    them: '1 Gbit/s and SSDs' -> ['1 Gbit/s links', 'SSD-class disks']; [] for a single change."""
    base = a.scenarios[a.baseline]

    def changed(name: str) -> frozenset[str]:
        return frozenset(k for k, v in a.scenarios[name].items() if v != base.get(k))

    whole = changed(combined)
    target = a.scenarios[combined]
    # a part changes some of the combined's inputs to the combined's very values (CPU x4 is no part of CPU x2
    # and link x2, though it moves the same input)
    parts = [n for n in a.scenarios if n not in (a.baseline, combined) and changed(n) and changed(n) < whole
             and all(a.scenarios[n][k] == target[k] for k in changed(n))]
    covered = frozenset().union(*(changed(n) for n in parts)) if parts else frozenset()
    return parts if len(parts) >= 2 and covered == whole else []


@dataclass
class Capacity:
    scenario: str
    layout: str
    raw_tb: float | None
    usable_tb: float | None


@dataclass
class Answer:
    model_file: str
    level: float
    currency: str
    baseline: str
    scenarios: dict[str, Inputs]  # the full configuration each scenario was predicted at
    filled: list[str]  # inputs no scenario set: the model's reference configuration supplied them
    varied: list[str]  # inputs the data varied (for any metric asked)
    capacity: list[Capacity]
    prices: dict[str, float | None]
    metrics: list[MetricAnswer]
    notes: list[str] = field(default_factory=list)
    source: str = ""  # the scenario file asked, if any

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = json_safe(asdict(self))
        for m, mj in zip(self.metrics, out["metrics"]):
            for p, pj in zip(m.predictions, mj["predictions"]):
                pj["effect"], pj["above_ceiling"] = p.effect, p.above_ceiling
        return out

    def trade_offs(self) -> dict[str, dict[str, float]]:
        """Candidates that gain on one metric and lose on another (each change clear of zero): name -> metric ->
        MB/s change."""
        changes: dict[str, dict[str, float]] = {}
        for m in self.metrics:
            for p in m.predictions[1:]:
                if p.effect in ("gain", "loss") and p.delta is not None:
                    changes.setdefault(p.scenario, {})[m.metric] = p.delta
        return {n: c for n, c in changes.items() if min(c.values()) < 0 < max(c.values())}

    def gives_up(self) -> dict[str, str]:
        """Candidates that give up redundancy against the baseline (fewer copies, or fewer redundancy bricks):
        name -> what they give up, in words. Listed apart from purchases whatever they gain."""
        base = self.scenarios.get(self.baseline, {})
        out: dict[str, str] = {}
        for name, v in self.scenarios.items():
            if name == self.baseline:
                continue
            copies, before = float(v.get("replica", 1) or 1), float(base.get("replica", 1) or 1)
            if copies < before:
                out[name] = (f"redundancy: {copies:g} cop{'y' if copies == 1 else 'ies'}, not {before:g}"
                             + (", so a failed brick loses data" if copies == 1 else ""))
            elif float(v.get("redundancy", 0) or 0) < float(base.get("redundancy", 0) or 0):
                out[name] = "redundancy: fewer bricks of a dispersed set may fail"
        return out

    @property
    def extrapolated(self) -> list[str]:
        """Scenarios extrapolated for any metric."""
        return sorted({p.scenario for m in self.metrics for p in m.predictions if p.basis == "extrapolated"})


def model_inputs(mf: ModelFile, metrics: Sequence[str]) -> dict[str, Feature]:
    """Every input of the metrics' models, the union of their measured values (for checking a question)."""
    out: dict[str, Feature] = {}
    for m in metrics:
        for f in mf.domain(m).inputs:
            seen = out.get(f.name)
            out[f.name] = f if seen is None else Feature(
                f.name, f.kind, tuple(dict.fromkeys((*seen.levels, *f.levels))),
                min(x for x in (seen.low, f.low) if x is not None) if f.kind != "categorical" else None,
                max(x for x in (seen.high, f.high) if x is not None) if f.kind != "categorical" else None,
                tuple(sorted({*seen.values, *f.values})))
    return out


def numeric_settings(domain: Domain) -> list[dict[str, float]]:
    """The hardware settings one metric's data measured, one mapping each, over the numeric inputs (a brick
    filesystem, a name, is left out)."""
    cols = {k: v for k, v in domain.settings.items()
            if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)}
    return [{k: float(v[i]) for k, v in cols.items()} for i in range(domain.n_settings)] if cols else []


def measured_settings(mf: ModelFile, metrics: Sequence[str]) -> list[dict[str, float]]:
    """The hardware settings the metrics' data measured, one mapping each (for "max"/"min" in scenario files)."""
    rows: list[dict[str, float]] = []
    for m in metrics:
        rows += [row for row in numeric_settings(mf.domain(m)) if row not in rows]
    return rows


def resolve(domain: Domain, base: Scenario, s: Scenario) -> Inputs:
    """The full configuration of a scenario: reference ← baseline ← candidate (inputs of this domain only)."""
    names = {f.name for f in domain.inputs}
    values = dict(domain.reference)
    values.update({k: v for k, v in base.values.items() if k in names})
    values.update({k: v for k, v in s.values.items() if k in names})
    return values


def flags_for(values: Mapping[str, InputValue], domain: Domain, metric: str) -> list[str]:
    """Inputs outside what was measured: beyond their range, or changed although the data never varied them."""
    out: list[str] = []
    for f in domain.inputs:
        v = values[f.name]
        if f.kind == "categorical":
            continue  # unseen levels are refused when the question is read
        x = float(v)
        if len(f.values) == 1:
            if x != f.values[0]:
                out.append(f"{label(f.name)} {show_value(f.name, v)}, but the {metric} data only have "
                           f"{show_value(f.name, f.values[0])}: its effect was never measured")
        elif f.low is not None and f.high is not None and not f.low <= x <= f.high:
            out.append(f"{label(f.name)} {show_value(f.name, v)} is outside the measured "
                       f"{show_value(f.name, f.low)}–{show_value(f.name, f.high)}")
    return out


def judge(domain: Domain, configs: Sequence[Mapping[str, InputValue]], metric: str
          ) -> tuple[list[Basis], list[list[str]], Any]:
    """Each configuration's basis (measured, interpolated, extrapolated) with the reasons it is outside the
    data, and the domain's placement of them (distances, nearest measured configuration)."""
    at = domain.place(config_columns(configs))
    region = domain.reasons(at)
    bases: list[Basis] = []
    flags: list[list[str]] = []
    for k, c in enumerate(configs):
        found = flags_for(c, domain, metric)
        # An input out of range says it already; a hardware-setting or workload reason adds what it does not.
        found += [r for r in region[k] if not (found and r.startswith("a workload"))]
        bases.append("extrapolated" if found else ("measured" if float(at.dist[k]) <= EXACT else "interpolated"))
        flags.append(found)
    return bases, flags, at


def upgrades_of(domain: Domain, configs: Sequence[Mapping[str, InputValue]], bases: Sequence[Basis], metric: str
                ) -> dict[int, tuple[str, ...]]:
    """The candidates that leave the measured data only by a faster link or disk than the baseline's: index →
    the stage inputs it raises. A candidate qualifies when the data varied each input it raises (so how
    throughput follows that resource was measured, if only below), with those inputs put back to the
    baseline's it is inside the data (measured or interpolated), and the baseline itself is inside. The
    resources are every one a stage can use (``RESOURCE_STAGES``), whether or not the model has that stage: a
    resource acts through the stages only, never as a main effect, so raising one that no stage of the model uses
    (a link for a stat, which moves no bytes) leaves every stage where it was."""
    if not configs or bases[0] == "extrapolated":
        return {}
    names = {f.name for f in domain.inputs} & set(RESOURCE_STAGES)
    varied = {f.name for f in domain.varied}
    base = configs[0]
    out: dict[int, tuple[str, ...]] = {}
    raised_at: dict[int, Inputs] = {}
    for k in range(1, len(configs)):
        if bases[k] != "extrapolated":
            continue
        c = configs[k]
        raised = tuple(n for n in sorted(names) if better(n, c[n], base[n]))
        lowered = [n for n in names if better(n, base[n], c[n])]
        # a resource the data never varied has no measured response to stand on, even below
        if raised and not lowered and set(raised) <= varied:
            raised_at[k] = {**c, **{n: base[n] for n in raised}}
            out[k] = raised
    if not out:
        return {}
    keys = list(raised_at)
    back, _, _ = judge(domain, [raised_at[k] for k in keys], metric)
    return {k: out[k] for k, b in zip(keys, back) if b != "extrapolated"}


def better(name: str, new: InputValue, old: InputValue) -> bool:
    """Whether ``new`` is an upgrade of resource ``name`` over ``old`` (more of it, or a shorter round trip)."""
    a, b = float(new), float(old)
    return a < b * (1 - 1e-9) if name in LOWER_IS_BETTER else a > b * (1 + 1e-9)


# An upgrade answered at more than this many times the most any configuration measured rests on stages far
# from where they were seen (the IOPS proof's NVMe-class writes: 19x the most measured, predicted 13,547 IOPS,
# measured 4,802, bound by the CPU and round trips no setting below today had made bind).
FAR_BEYOND = 2.0


def stage_cautions(value: float, most: float, binds_after: str, never_bound: set[str],
                   unlowered: Sequence[str]) -> list[str]:
    """What a bounded upgrade's answer rests on that no measurement showed: the stage that binds after it bound
    no setting (its efficiency assumed), or an answer far above anything measured while the CPU or round-trip
    stages never bound (they may stop the gain sooner). Words for the answer's flags; [] when neither."""
    out = []
    if binds_after in never_bound and binds_after in OP_STAGES:
        out.append(f"after it the {binds_after} bind, which no two settings measured made bind: its capacity is the "
                   "lab's calibrated cost of an operation, not measured here (docs/reference.md)")
    elif binds_after in never_bound:
        out.append(f"after it the {binds_after} bind, which bound no setting measured: their efficiency is assumed")
    if unlowered and most > 0 and value > FAR_BEYOND * most:
        out.append(f"{value / most:.1f}x the most any run measured, and the {' and the '.join(unlowered)} bound "
                   "no setting: they may stop the gain sooner (a descent of CPU and delay measures them: "
                   "docs/reference.md)")
    return out


def upgrade_bound(limits: Sequence[float], raised: Sequence[str], names: Sequence[str] = STAGES
                  ) -> tuple[float, str] | None:
    """What an upgrade of the ``raised`` inputs can give at most: the least of the stages it does not feed
    (each stage's measured capacity times its efficiency, ``limits``, in the order of the model's stages
    ``names``), and that stage; None when it feeds every stage (nothing measured bounds it). The bottleneck
    model's prediction is the minimum over all stages, so it never exceeds this bound."""
    fed = stages_fed(raised)
    rest = [(float(limits[i]), name) for i, name in enumerate(names) if name not in fed]
    return min(rest) if rest else None


def stages_fed(inputs: Iterable[str]) -> set[str]:
    """The model stages whose capacity the resources ``inputs`` set (``RESOURCE_STAGES``)."""
    return {s for n in inputs for s in RESOURCE_STAGES.get(n, ())}


def byte_stages(frame: Any, metric: str) -> np.ndarray:
    """The links' and disks' capacities in the metric's unit (stages × rows; infinite where an operation moves no
    bytes)."""
    out: np.ndarray = model_stages(frame, metric)[:len(STAGES)]
    return out


def ceilings(domain: Domain, configs: Sequence[Mapping[str, InputValue]], metric: str
             ) -> list[tuple[float, str] | None]:
    """What each configuration's hardware can carry (in the metric's unit: MB/s, or files/s of a small-file
    metric, whose files cross the links and disks), and the stage, where the model has the inputs for it and its
    own training data never ran above their ceiling (``CEILING_OBEYED``); else None."""
    import numpy as np

    names = {f.name for f in domain.inputs}
    if not {"network_gbps", "servers", "clients"} <= names or len(domain.means) == 0:
        return [None] * len(configs)
    n = len(domain.means)
    measured = {f.name: domain.configs[f.name] if f.name in domain.configs else [domain.reference[f.name]] * n
                for f in domain.inputs}
    with np.errstate(invalid="ignore", divide="ignore"):
        seen = np.nanmin(byte_stages(measured, metric), axis=0)
        ratio = np.asarray(domain.means) / seen
    if not np.isfinite(ratio).any() or np.nanmax(ratio) > CEILING_OBEYED:
        return [None] * len(configs)
    st = byte_stages(config_columns(configs), metric)
    out: list[tuple[float, str] | None] = []
    for j in range(st.shape[1]):
        col = st[:, j]
        if not np.isfinite(col).any():
            out.append(None)
            continue
        i = int(np.nanargmin(col))
        out.append((float(col[i]), STAGES[i]))
    return out


def _levers(mf: ModelFile, use: str | None, domain: Domain, base: Inputs, metric: str) -> list[Lever]:
    """Local sensitivity at the baseline, stepping each varied input to its neighbouring measured values (so
    the step stays inside the data, and tree models, flat between splits, still show an effect)."""
    probes: list[Inputs] = [base]
    plan: list[tuple[Feature, Any, Any]] = []  # feature, low/level value, high value (None for a switch)
    for f in domain.varied:
        x0 = base[f.name]
        if f.kind == "categorical":
            for lv in f.levels:
                if lv != x0:
                    plan.append((f, lv, None))
                    probes.append({**base, f.name: lv})
        elif f.kind == "bool":
            plan.append((f, not bool(x0), None))
            probes.append({**base, f.name: not bool(x0)})
        else:
            x = float(x0)
            below = [v for v in f.values if v < x]
            above = [v for v in f.values if v > x]
            lo = below[-1] if below else x
            hi = above[0] if above else x
            if lo <= 0 or hi == lo:
                continue
            plan.append((f, lo, hi))
            probes.extend([{**base, f.name: lo}, {**base, f.name: hi}])
    cols = config_columns(probes)
    y = mf.predict(probes, metric=metric, use=use).value
    # A step is off the data when it lands further outside the measured region than the baseline itself is.
    off = domain.further_out(cols, than=0)
    y0 = float(y[0])
    levers: list[Lever] = []
    best_level: dict[str, Lever] = {}
    i = 1
    for f, a, b in plan:
        if b is None:
            effect = (float(y[i]) / y0 - 1) * 100 if y0 > 0 else math.nan
            lever = Lever(f.name, "switch", effect, to=show_value(f.name, a), off_data=bool(off[i]))
            i += 1
            if f.kind == "categorical":
                prev = best_level.get(f.name)
                if prev is None or (prev.off_data, -prev.effect_pct) > (lever.off_data, -effect):
                    best_level[f.name] = lever
                continue
            levers.append(lever)
            continue
        ya, yb = float(y[i]), float(y[i + 1])
        e = math.log(yb / ya) / math.log(b / a) if ya > 0 and yb > 0 else math.nan
        levers.append(Lever(f.name, "elasticity", (1.1 ** e - 1) * 100 if e == e else math.nan, e,
                            off_data=bool(off[i] or off[i + 1])))
        i += 2
    levers.extend(best_level.values())
    levers.sort(key=lambda lv: (lv.off_data, -abs(lv.effect_pct) if lv.effect_pct == lv.effect_pct else 0.0))
    return levers


def headroom(mf: ModelFile, use: str | None, domain: Domain, base: Inputs, metric: str) -> list[Headroom]:
    """For each resource whose inputs the data varied: how low a share of the baseline's figures it can fall to
    before the metric falls by more than ``HEADROOM_DROP``.

    The model is scanned on a log grid from the baseline towards the measured hardware setting with the least
    of that resource (its lowest measured level) and the rest most like the baseline (in a design that throttles one resource at a time,
    the setting that throttled it): the path between two measured settings stays inside the data, where
    lowering the resource's own figures alone would leave it (each setting measures all its hardware anew).
    Without measured settings the resource's figures are scaled alone, down to the least measured. The
    bottleneck has little headroom; the others say how much cheaper they could be before they limit instead.
    """
    import numpy as np

    varied = {f.name: f for f in domain.varied if f.kind == "numeric" and f.values}
    settings = numeric_settings(domain)
    cols = {k: [st[k] for st in settings] for k in (settings[0] if settings else {})}
    span = {k: math.log(max(v) / min(v)) for k, v in cols.items() if min(v) > 0 and max(v) > min(v)}

    def positive(k: str, v: Any) -> bool:
        return k in span and isinstance(v, (int, float)) and v > 0

    plan: list[tuple[str, dict[str, float], list[dict[str, float]], list[float]]] = []
    probes: list[Inputs] = [base]
    for resource, names in RESOURCES.items():
        today = {n: float(base[n]) for n in names if n in varied and float(base.get(n) or 0) > 0}
        if not today:
            continue
        # the settings where this resource is at its least (within 10%), below the baseline's
        lower = [st for st in settings if all(n in st and st[n] < 0.999 * x0 and st[n] <= 1.1 * min(cols[n])
                                              for n, x0 in today.items())]
        if lower:
            def unlike(st: dict[str, float]) -> float:  # how far its other hardware is from the baseline's
                return sum(((math.log(st[k]) - math.log(float(base[k]))) / span[k]) ** 2 for k in st
                           if k not in today and positive(k, base.get(k)) and st[k] > 0)
            end = min(lower, key=lambda st: (round(unlike(st), 6), sum(st[n] / today[n] for n in today)))
            ends_at = {k: v for k, v in end.items() if v > 0 and positive(k, base.get(k))}
        else:
            least = max(float(min(varied[n].values)) / x0 for n, x0 in today.items())  # all stay in range
            if not 0 < least < 1:
                continue
            ends_at = {n: x0 * least for n, x0 in today.items()}
        steps = np.linspace(0.0, 1.0, _HEADROOM_STEPS)[1:]
        path = [{k: math.exp(math.log(float(base[k])) + t * (math.log(v) - math.log(float(base[k]))))
                 for k, v in ends_at.items()} for t in steps]
        shares = [float(np.exp(np.mean([math.log(p[n] / x0) for n, x0 in today.items()]))) for p in path]
        plan.append((resource, today, path, shares))
        probes.extend({**base, **p} for p in path)
    if not plan:
        return []
    y = mf.predict(probes, metric=metric, use=use).value
    off = domain.further_out(config_columns(probes), than=0)
    y0 = float(y[0])
    out, i = [], 1
    for resource, today, path, shares in plan:
        ys, outside = y[i:i + len(path)], off[i:i + len(path)]
        i += len(path)
        share, floor, ends = 1.0, dict(today), "least"
        for p, f, yv, o in zip(path, shares, ys, outside):  # downwards from today: a fall past the threshold,
            if o:  # or the data's end, ends the headroom
                ends = "data"
                break
            if y0 > 0 and float(yv) < (1 - HEADROOM_DROP) * y0:
                ends = "drop"
                break
            share, floor = f, {n: p[n] for n in today}
        out.append(Headroom(resource, share, floor, ends))  # type: ignore[arg-type]
    return sorted(out, key=lambda h: h.share, reverse=True)


def what_if(mf: ModelFile, q: Question, *, metrics: Sequence[str] | None = None, level: float | None = None,
            use: str | None = None, observed_change: bool = False, trials: float = 1) -> Answer:
    """Predict every scenario of ``q`` for each metric of the model file (or those named). A change against the
    baseline has the interval of the expected change, or with ``observed_change`` (what ``verify`` checks a
    benchmark against) of the change between one measurement of each; intervals are for a mean of ``trials``
    trials where the model can tell (``ModelFile.predict``)."""
    asked_metrics = list(metrics) if metrics else mf.metrics
    unknown = [m for m in asked_metrics if m not in mf.metrics]
    if unknown:
        raise GlmodelError(f"--metric: {', '.join(unknown)} not in {mf.path} (it has {', '.join(mf.metrics)})")
    lvl = level if level is not None else (q.level if q.level is not None else 0.9)
    asked = {k for s in q.scenarios for k in s.values}
    answers: list[MetricAnswer] = []
    varied: set[str] = set()
    resolved: dict[str, Inputs] = {}
    notes: list[str] = []
    for metric in asked_metrics:
        domain = mf.domain(metric)
        varied.update(f.name for f in domain.varied)
        names = {f.name for f in domain.inputs}
        ignored = sorted(asked - names)
        if ignored:
            notes.append(f"{metric}: {', '.join(ignored)} not an input of this model; ignored")
        configs = [resolve(domain, q.baseline, s) for s in q.scenarios]
        for s, c in zip(q.scenarios, configs):
            resolved.setdefault(s.name, {}).update(c)
        bases, all_flags, at = judge(domain, configs, metric)
        has_stages = "bottleneck" in mf.models(metric)
        stage_names: Sequence[str] = (getattr(mf.model(metric, "bottleneck"), "stages", STAGES) if has_stages
                                      else STAGES)
        upgrades = upgrades_of(domain, configs, bases, metric) if has_stages else {}
        answer_with = use or ("bottleneck" if upgrades else None)
        if upgrades and use is None:
            notes.append(f"{metric}: answered by the bottleneck model, as {len(upgrades)} candidate(s) upgrade a "
                         "resource beyond the measured hardware (throughput follows the slowest stage until the "
                         "next measured one binds)")
            stage_model = mf.model(metric, "bottleneck")
            joint = tuple(getattr(stage_model, "joint", ()))
            if joint:
                notes.append(f"{metric}: the {' and the '.join(joint)} hold the runs back together (fitted as one "
                             "closed network of the run's threads): an upgrade of one of them gains less than in "
                             "full, and one of another gains something")
            drift = getattr(stage_model, "drift", None)
            if drift is not None:
                notes.append(f"{metric}: today measured again at the plan's end moved {math.expm1(drift):+.1%} "
                             f"({getattr(stage_model, 'drift_runs', 0)} run(s)); the another-campaign term of each "
                             f"interval is {getattr(stage_model, 'new_campaign_sd', NEW_CAMPAIGN_SD):.2%} from it "
                             f"(at least the lab's {NEW_CAMPAIGN_SD:.2%})")
        # a measured change (verify) is judged against an interval for it from every model, the trees' too
        predicted = mf.predict(configs, lvl, metric=metric, use=answer_with, observed_change=observed_change,
                               change_refits=CHANGE_REFITS if observed_change else 0, trials=trials,
                               new_campaign=answer_with == "bottleneck")
        yhat, lo, hi, dlo, dhi = (predicted.value, predicted.low, predicted.high, predicted.delta_low,
                                  predicted.delta_high)
        limits_after = (mf.model(metric, "bottleneck").stage_limits(  # type: ignore[attr-defined]
            with_derived(config_columns(configs), metric)) if upgrades else None)
        never_bound = {n for n, a in zip(stage_names, getattr(mf.model(metric, "bottleneck"), "assumed", ()))
                       if a} if upgrades else set()
        unlowered = [what for what, stages in (("CPU", ("client CPU", "server CPU")), ("round trips", ("round trips",)))
                     if not any(n in stage_names and n not in never_bound for n in stages)]
        dist, idx = at.dist, at.index
        limits = ceilings(domain, configs, metric)
        preds = []
        for k, (s, c) in enumerate(zip(q.scenarios, configs)):
            flags, basis, d = all_flags[k], bases[k], float(dist[k])
            value = float(yhat[k])
            # Throughput is never negative; an OLS interval on the MB/s scale can be, so it stops at zero.
            low = max(float(lo[k]), 0.0) if value >= 0 else float(lo[k])
            p = Prediction(s.name, value, low, float(hi[k]), basis, d, flags, price=s.price, unit=shown_unit(metric))
            if k and math.isfinite(float(dlo[k])) and math.isfinite(float(dhi[k])):
                p.delta_low, p.delta_high = float(dlo[k]), float(dhi[k])
            if limits[k] is not None:
                p.ceiling, p.ceiling_stage = limits[k]  # type: ignore[misc]
                if p.above_ceiling:
                    unit = shown_unit(metric)
                    p.flags.append(f"predicted {value:,.0f} {unit}, above the {p.ceiling:,.0f} {unit} its "
                                   f"{p.ceiling_stage} can carry")
            if basis == "measured":
                p.measured_mean, p.measured_trials = domain.means[int(idx[k])], domain.trials[int(idx[k])]
            if limits_after is not None:
                col = limits_after[:, k]
                p.binds_after = stage_names[int(col.argmin())]
                if k in upgrades:
                    bound = upgrade_bound(col, upgrades[k], stage_names)
                    if bound is None:
                        p.flags.append("it upgrades every stage a byte crosses: no measured stage bounds the gain")
                    else:
                        p.basis, p.flags = "bounded", []
                        p.bound, p.bound_stage = bound
                        p.flags += stage_cautions(value, max(domain.means, default=0.0), p.binds_after,
                                                  never_bound, unlowered)
                    p.capacity_from = (f"measured: {s.measured_by}" if s.measured_by
                                       else "spec values from the what-if file")
            preds.append(p)
        close = (close_behind(mf.model(metric, "bottleneck"), limits_after[:, 0], stage_names, lvl)
                 if limits_after is not None else "")
        _costs(preds, q.scenarios)
        if close:
            for k, p in enumerate(preds):
                if (p.reason == "no effect" and p.unmoved and close in stages_fed(upgrades.get(k, ()))
                        and p.binds_after == preds[0].binds_after):
                    p.not_ranked = (f"no gain if the {p.binds_after} bind today, but the {close} are within the "
                                    "model's error of them: if they bind, it gains")
        as_iops(preds, configs, metric)
        policy = read_policy_note(configs[0], metric)
        if policy and policy not in notes:
            notes.append(policy)
        levers = _levers(mf, use, domain, configs[0], metric)
        numeric = [lv for lv in levers
                   if lv.kind == "elasticity" and lv.elasticity == lv.elasticity and not lv.off_data]
        top = max(numeric, key=lambda lv: lv.elasticity or 0.0, default=None)
        bottleneck = top if top is not None and (top.elasticity or 0.0) > 0.05 else None
        best = next((p.scenario for p in preds if p.rank == 1), None)
        # the stage the fitted bottleneck model says binds today (a round trip or a CPU too), else the least raw
        # capacity of the links and disks, else the input with the largest elasticity
        limit = (preds[0].binds_after or preds[0].ceiling_stage
                 or (label(bottleneck.feature) if bottleneck is not None else ""))
        answers.append(MetricAnswer(metric, predicted.model, domain.radius, preds, levers, bottleneck, best,
                                    headroom(mf, use, domain, configs[0], metric), limit,
                                    close if limit == preds[0].binds_after else ""))
    filled = sorted(k for k in resolved[q.baseline.name] if k not in asked)
    answer = Answer(mf.path, lvl, q.currency, q.baseline.name, resolved, filled, sorted(varied),
                    _capacity(q, resolved), {s.name: s.price for s in q.scenarios}, answers, notes, q.source)
    _unrank_give_ups(answer)
    for ma in answer.metrics:  # a number per price is a claim to rank by: only ranked candidates carry one
        for p in ma.predictions:
            if p.rank is None:
                p.gain_per_cost = p.price_per_gain = None
    return answer


def close_behind(model: Any, limits: np.ndarray, names: Sequence[str], level: float) -> str:
    """The next stage fed by another resource (server links move with client links: one link) whose capacity at
    the baseline (``limits``: each stage's there) is above the binding one's by less than the model's error of
    a long-run mean at ``level`` (its conformal quantile for the binding stage), or ""."""
    import numpy as np

    def fed_by(stage: str) -> frozenset[str]:
        return frozenset(n for n, fed in RESOURCE_STAGES.items() if stage in fed)

    order = [int(i) for i in np.argsort(limits)]
    if not order or not limits[order[0]] > 0:
        return ""
    first = names[order[0]]
    q = model.quantile(first, level, math.inf)
    other = next((i for i in order[1:] if not fed_by(names[i]) <= fed_by(first)), None)
    if other is None or not math.isfinite(q) or not np.isfinite(limits[other]):
        return ""
    return names[other] if limits[other] / limits[order[0]] < math.exp(q) else ""


def _unrank_give_ups(a: Answer) -> None:
    """A candidate that gives up redundancy is not a purchase: never ranked against them, whatever it gains."""
    gives = a.gives_up()
    for m in a.metrics:
        for p in m.predictions[1:]:
            if p.scenario in gives and (p.rank is not None or p.reason in ("free", "no price")):
                p.rank, p.reason, p.not_ranked = None, "gives up", f"gives up {gives[p.scenario]}"
        for r, p in enumerate(sorted((p for p in m.predictions if p.rank), key=lambda p: p.rank or 0), 1):
            p.rank = r
        m.best_upgrade = next((p.scenario for p in m.predictions if p.rank == 1), None)


def _costs(preds: list[Prediction], scenarios: Sequence[Scenario]) -> None:
    """Change against the baseline; price per MB/s gained and MB/s gained per unit price; the ranking by gain per
    price of the candidates that qualify, and why each other candidate does not."""
    base = preds[0].value
    for p in preds[1:]:
        p.delta = p.value - base
        p.delta_pct = (p.value / base - 1) * 100 if base > 0 else None
    for p, s in zip(preds[1:], scenarios[1:]):
        if s.price is not None and s.price > 0 and p.delta is not None:
            p.gain_per_cost = p.delta / s.price
            p.price_per_gain = s.price / p.delta if p.delta > 0 else None
        p.reason = _why_not_ranked(p, preds[0])
        p.not_ranked = NOT_RANKED[p.reason].format(stage=p.ceiling_stage) if p.reason else ""
        if p.reason == "no effect" and p.basis == "bounded" and p.binds_after:
            if p.unmoved:
                # an upgrade of a stage that does not bind: it says which one still does
                p.not_ranked = f"no gain: after it the {p.binds_after} still limit (the change's interval includes zero)"
            else:  # it moves the stage that binds, by less than the model can vouch for: never "no gain"
                p.not_ranked = (f"gain not sure: {p.delta_pct:+.0f}% predicted, after it the {p.binds_after} limit, "
                                "but the change's interval includes zero")
    ranked = sorted((p for p in preds[1:] if not p.reason), key=lambda p: -(p.gain_per_cost or 0.0))
    for r, p in enumerate(ranked, 1):
        p.rank = r
    if ranked:
        ranked[0].tied_with = [p.scenario for p in ranked[1:] if tied(ranked[0], p)]


def tied(first: Prediction, other: Prediction) -> bool:
    """Whether ``other``'s gain per price may be as large as ``first``'s: the best end of its change's interval,
    per unit of its price, reaches the worst end of ``first``'s. Two intervals that overlap, not the interval of
    their difference (no model here gives one across candidates): the rule leans to calling a tie, so a best buy
    is named alone only when it is clear."""
    if not (first.price and other.price and first.delta_low is not None and other.delta_high is not None):
        return False
    return other.delta_high / other.price >= first.delta_low / first.price


def read_policy_note(base: Mapping[str, InputValue], metric: str) -> str:
    """For a read of a replicated volume under Gluster's default read policy, what makes its figure a draw, with
    the draw's levels where the configuration says how many files are read at once (``read_placement``)."""
    if metric not in ("read", "reread", "random_read", "file_read"):
        return ""
    copies = float(base.get("replica") or 1)
    mode = base.get("read_hash_mode")
    if copies <= 1 or (mode is not None and float(mode) not in (1.0, 2.0)):
        return ""
    spread = _spread(base, metric, int(copies))
    draw = f" ({spread.describe()})" if spread is not None else ""
    return ("reads: with cluster.read-hash-mode 1 (Gluster's default) each file is read from the copy its GFID "
            f"hashes to, so a run's read rate depends on where its files fell, a placement draw{draw} its interval "
            "holds; more files a thread (large_files) narrow it, and read-hash-mode 3 reads from the least busy "
            "copy instead")


def _spread(base: Mapping[str, InputValue], metric: str, copies: int) -> ReadSpread | None:
    """The placement draw of the files a run reads: every thread's file, or with ``large_files`` its files (at once
    for random records, one after another for a sequential pass), one shared file when every client reads the
    same one, the small files of a small-file read; over one replica set or every brick of several."""
    import numpy as np

    try:
        threads = int(float(base.get("threads") or 0))
        spread = int(float(base.get("large_files") or 1))
        small = int(float(base.get("files") or 0))
        shape = {k: np.array([float(base[k])]) for k in ("replica", "servers", "disperse", "read_hash_mode")
                 if base.get(k) is not None}
    except (TypeError, ValueError):
        return None
    shared = str(base.get("shared_read")).lower() in ("1", "1.0", "true")
    if threads < 1:
        return None
    # the bins a read's files are hashed onto, as the bottleneck's placement loss counts them
    bricks = int(read_bins(shape)[0]) if "servers" in shape else copies
    if metric == "file_read":
        return read_spread(threads * small, bricks) if small >= 1 else None
    if shared:
        return read_spread(1, bricks)
    if metric == "random_read":
        return read_spread(threads * spread, bricks)
    return read_spread(threads, bricks, rounds=spread)


IOPS_RECORD_MAX = 64 << 10  # random I/O of records up to this size is read in IOPS, as admins size it
_PER_UNIT = ("value", "low", "high", "delta", "delta_low", "delta_high", "measured_mean", "ceiling", "bound",
             "gain_per_cost")


def as_iops(preds: Sequence[Prediction], configs: Sequence[Mapping[str, InputValue]], metric: str) -> None:
    """Random reads and writes of small records (``IOPS_RECORD_MAX``) in operations a second, where every
    scenario has one record size: each figure times 2^20 / record (the model and the store keep MB/s; the
    ranking does not change with the unit)."""
    if metric not in ("random_read", "random_write"):
        return
    sizes = {float(c.get("record_size") or 0) for c in configs}
    size = sizes.pop() if len(sizes) == 1 else 0.0
    if not 0 < size <= IOPS_RECORD_MAX:
        return
    scale = (1 << 20) / size
    for p in preds:
        for name in _PER_UNIT:
            value = getattr(p, name)
            if value is not None:
                setattr(p, name, value * scale)
        if p.price_per_gain is not None:
            p.price_per_gain /= scale
        p.unit = "IOPS"


# Why a candidate is not ranked: a short word (the rank column's) and the sentence (--details, JSON, CSV).
NOT_RANKED = {
    "guess": "extrapolated: outside the measured data",
    "base guess": "the baseline itself is extrapolated",
    "over ceiling": "predicted above what its {stage} can carry",
    "loss?": "loses throughput by the prediction, with no interval for the change to say how surely",
    "loss": "loses throughput",
    "no effect": "no measurable effect (the change's interval includes zero)",
    "no interval": "no interval for the change with this model",
    "no price": "no price given",
    "free": "free: a gain at no price, not ranked against purchases",
    "gives up": "gives up redundancy",
}


def _why_not_ranked(p: Prediction, base: Prediction) -> str:
    """The first reason (a key of NOT_RANKED) a candidate cannot be recommended, or "" when it can."""
    if p.basis == "extrapolated":
        return "guess"
    if base.basis == "extrapolated":
        return "base guess"
    if p.above_ceiling:
        return "over ceiling"
    if (p.delta or 0.0) <= 0:
        # one vocabulary: a drop clear of zero is a loss, one whose interval holds zero has no effect, and a drop
        # the model gives no interval for is a loss it cannot vouch for (never "no gain", which read as none)
        if p.effect == "loss":
            return "loss"
        if p.delta_low is None and (p.delta or 0.0) < 0:
            return "loss?"
        return "no effect" if p.delta_low is not None else "no interval"
    if p.effect != "gain":
        return "no effect" if p.delta_low is not None else "no interval"
    if p.price is None:
        return "no price"
    if p.price == 0:
        return "free"
    return ""


def _capacity(q: Question, resolved: Mapping[str, Mapping[str, InputValue]]) -> list[Capacity]:
    """Raw and usable TB per scenario; a candidate without its own capacity figure has the baseline's."""
    out = []
    for s in q.scenarios:
        v = resolved[s.name]
        raw_tb = s.raw_tb if s.raw_tb is not None else (None if s.server_tb is not None else q.baseline.raw_tb)
        server_tb = s.server_tb if s.server_tb is not None else (None if s.raw_tb is not None
                                                                 else q.baseline.server_tb)
        if raw_tb is None and server_tb is not None and "servers" in v:
            raw_tb = server_tb * float(v["servers"])
        lay, rep, dis = v.get("layout"), v.get("replica"), v.get("disperse")
        layout = layout_of(None if lay is None else str(lay), None if rep is None else float(rep),
                           None if dis is None else float(dis))
        usable = None
        if raw_tb is not None:
            usable = raw_tb * usable_fraction(layout, float(v.get("replica", 1) or 1),
                                              float(v.get("disperse", 0) or 0), float(v.get("redundancy", 0) or 0))
        out.append(Capacity(s.name, layout, raw_tb, usable))
    return out


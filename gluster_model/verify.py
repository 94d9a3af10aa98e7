"""Check a model's answers by measuring them: build each scenario of a what-if question on a cluster, measure it
with the protocol of the training data, and set prediction beside measurement.

The steps:

1. every scenario becomes a run of the training plan (its fixed factors, protocol and baselines), with the
   scenario's layout, servers, clients and workload; on a glmodel lab also its hardware, from the scenario's
   ``lab:`` settings or translated from the inputs it sets (link from ``network_gbps``, disk rates from
   ``disk_*_mbps``, RAM from ``client_ram_gb``). A real cluster builds only what it can: a scenario that
   changes hardware there is skipped, with the reason;
2. the runs are collected as campaigns of their own (``verify.<plan>`` plans), which ``glmodel fit`` never
   pools with training data, and an interrupted verification resumes like any campaign;
3. the model predicts each scenario at the hardware *as measured* by the verification campaign's baselines
   (a 1 Gbit/s link that measures 0.95 is predicted at 0.95), so the check is of the model, not of how well a
   setting hits its nominal value; the basis (measured / interpolated / extrapolated) is the predictor's;
4. per metric: absolute percentage error per scenario, MAPE, the share of measurements inside the prediction
   intervals (coverage), and whether the candidate with the best predicted gain per price also measured best.

References
----------
Hyndman, R. J., Koehler, A. B. (2006), "Another look at measures of forecast accuracy", International Journal of
Forecasting 22(4) (MAPE and its limits: undefined at zero, which throughput never is here).
Gneiting, T., Raftery, A. E. (2007), "Strictly proper scoring rules, prediction, and estimation", JASA 102(477)
(empirical coverage of central prediction intervals as a calibration check).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from .bench.metrics import TEST_METRICS
from .dataset import VERIFY_PREFIX
from .errors import ConfigError, GlmodelError
from .model.features import HARDWARE_INPUTS, Feature
from .plan.factors import FACTORS, LAB_FACTORS, Level, RunSpec, normalize_level, realize
from .plan.file import Expanded, PlanFile, check_buildable, execution_order
from .predict.scenarios import Question, Scenario
from .predict.whatif import resolve, what_if

if TYPE_CHECKING:
    import pandas as pd

    from .campaign.progress import PlanReporter
    from .config.cluster import ClusterSpec
    from .model.artifact import ModelFile
    from .remote.executor import Executor
    from .store.store import Store

# Inputs a cluster has rather than is given: measured by baselines and host facts, set only on a lab.
MEASURED_INPUTS = (*HARDWARE_INPUTS, "regime")
# Model inputs that are plan factors of the same name.
FACTOR_INPUTS = tuple(n for n, f in FACTORS.items() if f.family != "lab")


@dataclass(frozen=True)
class Target:
    """One scenario made a run (``run`` is None when the cluster cannot build it, ``why`` says why)."""

    scenario: Scenario
    values: dict[str, Any]  # the scenario's full configuration (reference <- baseline <- candidate)
    run: RunSpec | None
    why: str = ""


@dataclass
class Check:
    scenario: str
    predicted: float
    low: float
    high: float
    measured: float
    trials: int
    error_pct: float  # (predicted - measured) / measured, %
    inside: bool
    basis: str  # as `glmodel predict` labels the scenario asked (the same function on the same values)
    predicted_as_asked: float  # at the scenario's own hardware figures, not the measured ones
    basis_measured: str = ""  # the label at the hardware as measured
    # Against the measured baseline (None for the baseline, or without one): the predicted change with the
    # interval a measured change falls in (the change's own uncertainty and both runs' noise), and the change
    # measured.
    gain_predicted: float | None = None
    gain_low: float | None = None
    gain_high: float | None = None
    gain_measured: float | None = None
    gain_inside: bool | None = None  # the measured change inside the interval of a measured change

    def __post_init__(self) -> None:
        if self.gain_measured is not None and self.gain_low is not None and self.gain_high is not None:
            self.gain_inside = self.gain_low <= self.gain_measured <= self.gain_high


@dataclass
class MetricVerdict:
    metric: str
    model: str
    n: int
    mape: float | None
    coverage: float | None
    checks: list[Check]
    best_predicted: str | None = None  # best gain per price among priced candidates, by the model
    best_measured: str | None = None
    ranking_held: bool | None = None


@dataclass
class Verification:
    model_file: str
    scenarios_file: str
    plan: str
    level: float
    campaigns: list[str]
    measured_hardware: dict[str, dict[str, Any]]  # per scenario: the measured values of MEASURED_INPUTS
    skipped: dict[str, str]  # scenario -> why it was not measured
    metrics: list[MetricVerdict]
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        from .model.artifact import json_safe

        out: dict[str, Any] = json_safe(asdict(self))
        return out


# -- scenarios -> runs (pure) ---------------------------------------------------------------------------------

def lab_settings(values: Mapping[str, Any], asked: Mapping[str, str]) -> dict[str, str]:
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


def scenario_point(values: Mapping[str, Any], plan: PlanFile, lab: Mapping[str, str] | None,
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
    """Each scenario of the question as a run of the plan on this cluster; one error line for what cannot be."""
    on_lab = cluster.lab_dir is not None
    domain = mf.domain(metrics[0])
    names = {f.name for m in metrics for f in mf.domain(m).inputs}
    unknown = sorted(names - set(MEASURED_INPUTS) - set(FACTOR_INPUTS))
    if unknown:
        raise ConfigError(mf.path, "inputs", f"verify cannot build {', '.join(unknown)} on a cluster (it sets plan "
                          f"factors and lab hardware only)")
    base_lab = dict(q.baseline.lab)
    varied = {f.name for m in metrics for f in mf.domain(m).varied
              if f.name not in MEASURED_INPUTS or set_apart(f)}
    base_values = resolve(domain, q.baseline, q.baseline)
    out: list[Target] = []
    for i, s in enumerate(q.scenarios):
        where = f"{q.source or 'scenarios'}: {'baseline' if s.baseline else f'candidates[{i - 1}]'} ({s.name})"
        values: dict[str, Any] = {}
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
                lab = lab_settings({k: v for k, v in values.items() if k in MEASURED_INPUTS and k in varied},
                                   {**base_lab, **s.lab})
            except ValueError as exc:
                raise ConfigError(where, "lab", str(exc)) from None
            if "cpu" not in lab and "cpu" in plan.factors and len(plan.factors["cpu"]) > 1:
                raise ConfigError(where, "lab.cpu", "the plan varied cpu; say which CPU quota builds this scenario "
                                  "(lab: {cpu: CORES})")
        elif not s.baseline:
            changed = [k for k in MEASURED_INPUTS if k in values and values.get(k) != base_values.get(k)]
            if changed or s.lab:
                out.append(Target(s, values, None, f"changes {', '.join(changed or list(s.lab))}, which only a "
                                  f"glmodel lab can set; {cluster.name} is measured as it is"))
                continue
        try:
            point, open_ = scenario_point(values, plan, lab)
        except ValueError as exc:
            raise ConfigError(where, "", f"cannot be made a run of plan {plan.name}: {exc}") from None
        if open_:
            raise ConfigError(where, open_[0], f"plan {plan.name} varies {open_[0]}, and neither the model's inputs "
                              f"nor the scenario say which level to build")
        try:
            run = realize(point, plan.workload.model_dump(), plan.volume_options)
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


def verification_plan(plan: PlanFile) -> PlanFile:
    """The training plan under a ``verify.`` name: same protocol, baselines and workload; campaigns of its own."""
    data = plan.model_dump(mode="json", exclude={"variants"})
    data["name"] = f"{VERIFY_PREFIX}{plan.name}"[:64]
    data["description"] = f"verification of models fitted on {plan.name}"
    return PlanFile.model_validate(data)


# -- measuring -------------------------------------------------------------------------------------------------

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
    from .campaign.records import campaign_name, setting_campaign

    asked = _metrics(mf, plan, metrics)
    found = targets(mf, q, plan, cluster, asked)
    runs = list({t.run.config_hash: t.run for t in found if t.run is not None}.values())
    vplan = verification_plan(plan)
    base = campaign_name(vplan, cluster)
    expanded = Expanded(execution_order(runs))
    names = [setting_campaign(base, s) for s in expanded.lab_settings] if runs else []
    return Work(asked, found, vplan, base, expanded, names)


def verify(cluster: ClusterSpec, mf: ModelFile, q: Question, plan: PlanFile, store: str | Store,
           executor: Executor | None = None, *, metrics: Sequence[str] | None = None, level: float | None = None,
           fail_fast: bool = False, reporter: PlanReporter | None = None) -> Verification:
    """Measure every buildable scenario of ``q`` on ``cluster`` and compare with ``mf``'s predictions.

    ``store`` is an open store or a store's name (opened here, created if new); without ``executor`` an SSH
    session to the cluster is opened. Every refusal (a scenario the cluster cannot build, a model input verify
    cannot set, a metric the plan does not measure) comes before either is opened.
    """
    from contextlib import ExitStack

    from .campaign.plan_run import run_plan
    from .remote.executor import SSHExecutor
    from .store import open_store

    work = prepare(cluster, mf, q, plan, metrics)
    asked, found, vplan, base, expanded, names = (work.metrics, work.targets, work.plan, work.base, work.expanded,
                                                  work.campaigns)
    runs = expanded.runs
    with ExitStack() as stack:
        st = stack.enter_context(open_store(store)) if isinstance(store, str) else store
        if runs:
            ex = executor if executor is not None else stack.enter_context(SSHExecutor(cluster))
            run_plan(cluster, vplan, expanded, st, ex, base=base, fail_fast=fail_fast, reporter=reporter)
        frame = measured_frame(st, names)
    return compare(mf, q, found, frame, asked, level, plan=plan.name, campaigns=names)


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


def measured_frame(store: Store, campaigns: Sequence[str]) -> pd.DataFrame:
    import pandas as pd

    from .dataset import trial_frame

    parts = [trial_frame(store, c) for c in campaigns]
    parts = [p for p in parts if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def from_store(store: Store, mf: ModelFile, q: Question) -> Verification | None:
    """The verification of ``q`` that `glmodel verify` already measured into ``store``, rebuilt from its
    campaigns (each records its plan and cluster), or None when no verification campaign measured this question."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for c in store.campaigns():
        if str(c["name"]).startswith(VERIFY_PREFIX):
            groups.setdefault(str(c["plan_name"]), []).append(c)
    for plan_name, camps in groups.items():
        try:
            plan = PlanFile.model_validate(camps[0]["plan"])
            on_lab = any("@" in str(c["name"]) and ":" in str(c["name"]).split("@", 1)[1] for c in camps)
            cluster = stored_cluster(camps[0]["cluster"], on_lab)
            metrics = _metrics(mf, plan, None)
            found = targets(mf, q, plan, cluster, metrics)
        except (GlmodelError, ValueError, KeyError, TypeError):
            continue  # verification of another question or model
        names = [str(c["name"]) for c in camps]
        frame = measured_frame(store, names)
        hashes = set(frame["config_hash"]) if not frame.empty else set()
        if not any(t.run is not None and t.run.config_hash in hashes for t in found):
            continue
        return compare(mf, q, found, frame, metrics, None, plan=plan_name.removeprefix(VERIFY_PREFIX),
                       campaigns=names)
    return None


def stored_cluster(record: Mapping[str, Any], on_lab: bool) -> ClusterSpec:
    """A cluster as a campaign recorded it (hosts, roles, bricks; no SSH settings), enough to rebuild runs."""
    from .config.cluster import cluster_from_data

    hosts = record["hosts"]
    data: dict[str, Any] = {"name": record["name"],
                            "servers": [{"host": h["address"], "brick_paths": list(h["brick_paths"])}
                                        for h in hosts if "server" in h["roles"]],
                            "clients": [{"host": h["address"]} for h in hosts if "client" in h["roles"]]}
    if on_lab:
        data["lab"] = {"state_dir": "."}
    return cluster_from_data(data, "stored cluster", Path("."))


# -- comparing (pure given the frame) -----------------------------------------------------------------------

def compare(mf: ModelFile, q: Question, found: Sequence[Target], frame: pd.DataFrame, metrics: Sequence[str],
            level: float | None, *, plan: str = "", campaigns: Sequence[str] = ()) -> Verification:
    """Predictions at the measured hardware beside the measured means, per metric; MAPE, coverage, ranking."""
    lvl = level if level is not None else (q.level if q.level is not None else 0.9)
    skipped = {t.scenario.name: t.why for t in found if t.run is None}
    hardware: dict[str, dict[str, Any]] = {}
    rows: dict[str, Any] = {}  # scenario -> its trials
    for t in found:
        if t.run is None:
            continue
        sub = frame[frame["config_hash"] == t.run.config_hash] if not frame.empty else frame
        if sub.empty:
            skipped[t.scenario.name] = "no finished trial (the run failed; see glmodel runs list)"
            continue
        rows[t.scenario.name] = sub
        hardware[t.scenario.name] = {k: _scalar(sub[k]) for k in MEASURED_INPUTS if k in sub}
    measured = [t for t in found if t.scenario.name in rows]
    notes: list[str] = []
    if not any(t.scenario.baseline for t in measured):
        notes.append("the baseline was not measured: no gain per price can be compared")
    verdicts: list[MetricVerdict] = []
    if not measured:
        return Verification(mf.path, q.source, plan, lvl, list(campaigns), hardware, skipped, [], notes)
    # The question as asked, over the scenarios measured: what predict says of them (basis, value, rank 1).
    asked_answer = what_if(mf, Question(q.baseline, [t.scenario for t in measured if not t.scenario.baseline] or
                                        [q.baseline]), metrics=metrics, level=lvl)
    asked_by_metric = {a.metric: a for a in asked_answer.metrics}
    for metric in metrics:
        ok = [t for t in measured if metric in rows[t.scenario.name] and rows[t.scenario.name][metric].notna().any()]
        if not ok:
            notes.append(f"{metric}: not measured in any scenario")
            continue
        inputs = {f.name for f in mf.domain(metric).inputs}
        at_measured = [Scenario(t.scenario.name, {**{k: v for k, v in t.values.items() if k in inputs},
                                                  **{k: v for k, v in hardware[t.scenario.name].items()
                                                     if k in inputs and v is not None}},
                                t.scenario.price, baseline=t.scenario.baseline) for t in ok]
        base = next((s for s in at_measured if s.baseline), Scenario("(none)", {}, baseline=True))
        cands = [s for s in at_measured if not s.baseline]
        if not cands:  # what_if needs a candidate; the baseline alone is still checked
            cands, base = [base], Scenario("(none)", {}, baseline=True)
        # At the hardware measured; a measured change carries both runs' noise, so it is judged against the
        # interval of a measured change, not the narrower one of the expected change that tune ranks by.
        answer = what_if(mf, Question(base, cands, lvl), metrics=[metric], level=lvl, observed_change=True)
        as_asked = {p.scenario: p for p in asked_by_metric[metric].predictions}
        preds = {p.scenario: p for p in answer.metrics[0].predictions}
        checks: list[Check] = []
        base_rows = rows[base.name][metric].dropna() if base.name in rows else None
        base_pred = preds.get(base.name)
        base_run = next((t.run for t in ok if t.scenario.name == base.name), None)
        for t in ok:
            p = preds[t.scenario.name]
            asked = as_asked.get(t.scenario.name)
            values = rows[t.scenario.name][metric].dropna()
            m = float(values.mean())
            # A scenario built as the baseline's very volume (tune's advice to keep the defaults) was measured
            # in the baseline's run: its change is nil by construction, not a measured one to judge.
            same = t.scenario.baseline or (t.run is not None and base_run is not None
                                           and t.run.config_hash == base_run.config_hash)
            if same and not t.scenario.baseline:
                note = f"{t.scenario.name}: the baseline's own configuration, measured in its run: no change to judge"
                notes += [note] if note not in notes else []
            gain = (m - float(base_rows.mean()) if base_rows is not None and not base_rows.empty
                    and not same else None)
            low, high = p.delta_low, p.delta_high
            if low is None and base_pred is not None and p is not base_pred:
                # No interval of the change from this model (boosted trees): bounded by the two predictions'
                # intervals, which hold the noise of both runs.
                low, high = p.low - base_pred.high, p.high - base_pred.low
            checks.append(Check(t.scenario.name, p.value, p.low, p.high, m, int(values.size),
                                (p.value - m) / m * 100 if m > 0 else math.nan, p.low <= m <= p.high,
                                asked.basis if asked else p.basis, asked.value if asked else math.nan, p.basis,
                                p.delta if gain is not None else None, low if gain is not None else None,
                                high if gain is not None else None, gain))
        errors = [abs(c.error_pct) for c in checks if math.isfinite(c.error_pct)]
        verdict = MetricVerdict(metric, answer.metrics[0].model, len(checks),
                                statistics.fmean(errors) if errors else None,
                                sum(c.inside for c in checks) / len(checks), checks)
        # The recommendation is predict's rank 1 for the question as asked; the measured best is the priced
        # candidate with the largest measured gain per price (a positive one).
        has_base = any(t.scenario.baseline for t in ok)
        verdict.best_predicted = asked_by_metric[metric].best_upgrade if has_base else None
        verdict.best_measured = _best_measured(checks, ok)
        if verdict.best_predicted is not None and verdict.best_measured is not None:
            verdict.ranking_held = verdict.best_predicted == verdict.best_measured
        verdicts.append(verdict)
    return Verification(mf.path, q.source, plan, lvl, list(campaigns), hardware, skipped, verdicts, notes)


def _best_measured(checks: Sequence[Check], found: Sequence[Target]) -> str | None:
    """The priced candidate whose measured gain over the measured baseline, per unit price, is largest (and
    positive); None without a measured baseline or a priced candidate that gained."""
    base = next((c for c, t in zip(checks, found) if t.scenario.baseline), None)
    if base is None:
        return None
    gains = [((c.measured - base.measured) / float(t.scenario.price), c.scenario) for c, t in zip(checks, found)
             if not t.scenario.baseline and t.scenario.price and c.measured > base.measured]
    return max(gains)[1] if gains else None


def _scalar(col: pd.Series) -> Any:
    values = col.dropna()
    if values.empty:
        return None
    first = values.iloc[0]
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return float(values.astype(float).median())
    return first

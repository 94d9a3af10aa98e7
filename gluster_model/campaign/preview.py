"""What ``collect --dry-run`` shows before anything runs: volumes, runs, trials, the estimated duration (calibrated
on the store's earlier trials of the cluster), lab settings, merged and impossible design points, and the change
two campaigns of the plan can tell apart (``stats.power``, with the noise the store has seen on the cluster)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config.cluster import ClusterSpec
from ..plan.factors import Level, RunSpec, show_features
from ..plan.file import Baselines, Expanded, PlanFile, side_runs
from ..store.identity import Look
from ..store.store import open_store, store_exists
from ..plan.search import MAX_BUDGET
from ..bench.metrics import TEST_METRICS
from ..stats.power import ASSUMED_WITHIN_SD, BETWEEN_RUN_SD, Detectable, detectable_change
from .estimate import (RunKey, TrialCost, estimate_seconds, measured_trial_seconds, run_key, stored_trial_cost,
                       trial_count)
from .descent import steps_of
from .records import LabSetting, again_campaign, interleaved_order, setting_campaign, side_campaign


@dataclass
class Preview:
    campaign: str
    volumes: int
    runs: list[RunSpec]
    trials: tuple[int, int]  # fewest and most the protocol may run, warm-ups included
    seconds: float
    cost_source: str
    adaptive: tuple[int, int] | None = None  # (at most this many runs chosen, per round after the first)
    settings: list[tuple[str, int]] = field(default_factory=list)  # (campaign of a lab setting, its runs)
    duplicates: int = 0
    skipped: list[tuple[dict[str, Level], str]] = field(default_factory=list)
    cluster: str = ""
    servers: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (name, brick directories)
    clients: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # how the plan adapted to the cluster
    search_budget: int | None = None  # a search plan: at most this many runs measured, screening included
    # per test: its metric, the least slowdown `glmodel compare` calls between two campaigns of the plan, and
    # where the trials' noise came from (the store's trials of the cluster, or the assumed figure)
    detectable: list[tuple[str, Detectable, str]] = field(default_factory=list)
    sides: tuple[str, str, str, int] | None = None  # an interleaved comparison: factor, side A, side B, looks


def preview(cluster: ClusterSpec, plan: PlanFile, expanded: Expanded, base: str, store: str) -> Preview:
    """The plan's campaign as it would run; reads the store only to calibrate the estimate (never creates it)."""
    cost = TrialCost()
    noise: dict[str, tuple[float, int]] = {}
    measured: dict[RunKey, float] = {}
    if store_exists(store):
        # A store collect could not write to is refused here too, before anyone waits for the real run.
        with open_store(store, create=False) as st:
            cost = stored_trial_cost(st, cluster.name) or cost
            rows = st.trial_table()
            noise = within_run_sd(rows, cluster.name)
            measured = measured_trial_seconds(rows, cluster.name)
    d = plan.design
    settings = expanded.lab_settings
    campaigns = [(setting_campaign(base, s), len(expanded.with_setting(s).runs)) for s in settings] \
        if settings != [()] else []
    seconds = estimate_seconds(expanded, plan.protocol, plan.baselines, cost=cost, measured=measured)
    found = Baselines(network=False, disk=False)  # a campaign at hardware measured before finds its baselines
    if campaigns and d.hardware is not None and d.hardware.again:  # today again at the end (its drift)
        campaigns.append((again_campaign(campaigns[0][0]), campaigns[0][1]))
        seconds += estimate_seconds(expanded.with_setting(settings[0]), plan.protocol, found, cost=cost,
                                    measured=measured)
    looks, compared = 1, expanded
    trials = trial_count(expanded, plan.protocol)
    if d.sides is not None:  # an interleaved comparison: each side's runs in `looks` campaigns, A B B A
        levels = dict(zip("AB", plan.factors[d.sides]))
        parts = {s: side_runs(expanded, d.sides, levels[s]) for s in "AB"}
        compared_base = setting_campaign(base, settings[0])
        order = interleaved_order(compared_base, d.looks)
        campaigns = [(side_campaign(Look(compared_base, s, k)), len(parts[s].runs)) for s, k in order]
        seconds = sum(estimate_seconds(parts[s], plan.protocol, found if i else plan.baselines, cost=cost,
                                       measured=measured) for i, (s, _) in enumerate(order))
        compared, looks = parts["A"], d.looks  # what compare matches: one side's configurations
        counts = [trial_count(parts[s], plan.protocol) for s, _ in order]
        trials = (sum(c[0] for c in counts), sum(c[1] for c in counts))
    return Preview(
        base, len(expanded.volumes), expanded.runs, trials,
        seconds, _source(expanded, cost, measured),
        (min(d.budget or 0, len(expanded.runs)), d.batch) if d.type == "adaptive" else None,
        campaigns,
        expanded.duplicates, expanded.skipped, cluster.name, [(h.name, h.brick_paths) for h in cluster.servers],
        [h.name for h in cluster.clients], list(expanded.notes) + _descent_note(plan, settings),
        (d.budget or MAX_BUDGET) if d.type == "search" else None,
        detectable(compared, plan.protocol.repetitions, noise, looks) if d.type != "search" else [],
        _sides(plan))


def _descent_note(plan: PlanFile, settings: list[LabSetting]) -> list[str]:
    """What a descent may leave out: its steps are counted above as if every one ran."""
    hw = plan.design.hardware
    if hw is None or not hw.descend:
        return []
    steps = steps_of(settings, list(hw.descend))
    return [f"descent: {len(steps)} of the {len(settings)} settings lower one knob below today ("
            f"{', '.join(hw.descend)}); a knob stops once every metric fell {hw.binds:.0%} or more at "
            f"{hw.past + 1} of its settings, so the duration above is the most it takes"]


def _sides(plan: PlanFile) -> tuple[str, str, str, int] | None:
    """An interleaved comparison's factor, its two sides as people read them (on, off, 4MB), and its looks."""
    side = plan.design.sides
    if side is None:
        return None
    a, b = (show_features({side: v}).split("=", 1)[1] for v in plan.factors[side][:2])
    return side, a, b, plan.design.looks


def _source(expanded: Expanded, cost: TrialCost, measured: dict[RunKey, float]) -> str:
    """Where the estimate's trial times come from, in words."""
    known = sum(run_key(r.config_hash, r.lab) in measured for r in expanded.runs)
    if not known:
        return cost.source
    rest = len(expanded.runs) - known
    return (f"{known} of {len(expanded.runs)} run(s) as their trials took in the store; "
            + (f"the rest {cost.source}" if rest else f"a new one {cost.source}"))


def within_run_sd(rows: list[dict[str, object]], cluster_name: str) -> dict[str, tuple[float, int]]:
    """Per metric, the trials' log SD inside a run (the pure error of log values within runs), pooled over the
    cluster's runs of two trials or more (kept trials only), and its degrees of freedom."""
    import math

    import numpy as np

    from ..stats.pure_error import pure_error

    by_metric: dict[str, tuple[list[float], list[object]]] = {}
    for r in rows:
        v = r.get("value")
        if (r.get("cluster") == cluster_name and r.get("trial_status") == "ok" and not r.get("warmup")
                and not r.get("outlier") and isinstance(v, (int, float)) and v > 0):
            logs, runs = by_metric.setdefault(str(r["metric"]), ([], []))
            logs.append(math.log(v))
            runs.append(r["run_id"])
    out = {}
    for metric, (logs, runs) in by_metric.items():
        pe = pure_error(np.array(logs), np.array(runs))
        if pe.df >= 2:
            out[metric] = (math.sqrt(pe.ms), pe.df)
    return out


def detectable(expanded: Expanded, trials: int, noise: dict[str, tuple[float, int]], runs: int = 1
               ) -> list[tuple[str, Detectable, str]]:
    """Per test of the plan's runs, the least slowdown two campaigns of it tell apart (``stats.power``): ``runs``
    runs of ``trials`` trials a configuration on each side, Holm over every configuration and metric compared."""
    tests = list(dict.fromkeys(t for r in expanded.runs for t in r.workload.tests))
    rows = sum(len(TEST_METRICS[t]) for r in expanded.runs for t in r.workload.tests)
    out: list[tuple[str, Detectable, str]] = []
    if trials < 2 or not rows:
        return out
    for test in tests:
        metric = TEST_METRICS[test][0]
        sd, dof = noise.get(metric, (ASSUMED_WITHIN_SD, 0))
        source = (f"the trials' {sd * 100:.1f}% within a run the store has seen on this cluster ({dof} df)" if dof
                  else f"an assumed {sd * 100:.0f}% within a run: the store has no {metric} trials of this cluster")
        out.append((metric, detectable_change(trials, sd, BETWEEN_RUN_SD, rows, runs=runs), source))
    return out

"""How long a campaign will take and how many trials it may run, for ``collect --dry-run`` and progress ETAs.

The cost of a trial is calibrated on the store's earlier trials of the same cluster when it has enough of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..bench.engine_specs import ENGINE_SPECS
from ..bench.engines import TRIAL_ENGINES
from ..plan.file import Expanded
from ..plan.protocol import Protocol
from ..store.store import Store
from ..units import parse_size

BASELINE_S = 20.0  # facts, network and disk baselines of one hardware setting (17.5 s on 8 lab nodes)


@dataclass(frozen=True)
class TrialCost:
    """What a trial costs: fixed start-up seconds plus bytes moved (per test pass) at a rate."""

    startup_s: float = 2.0  # a distributed iozone trial of one test on the lab: its children's SSH start-up
    bytes_per_s: float = 100 * 2**20
    volume_s: float = 9.0
    source: str = "lab defaults"


def fit_trial_cost(samples: list[tuple[float, float]], volume_s: float = 9.0) -> TrialCost | None:
    """Least-squares fit of seconds = startup + bytes / rate over stored trials, as (bytes moved, seconds).

    Needs at least three trials and two distinct sizes; a fit that makes no physical sense (negative start-up
    or rate) falls back to the median start-up with the rate left at its default.
    """
    if len(samples) < 3 or len({b for b, _ in samples}) < 2:
        return None
    import numpy as np

    x = np.array([b for b, _ in samples], dtype=float)
    y = np.array([sec for _, sec in samples], dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    source = f"fitted on {len(samples)} stored trial(s)"
    if slope <= 0 or intercept < 0:
        return TrialCost(startup_s=float(np.median(y)), volume_s=volume_s, source=source + " (start-up only)")
    return TrialCost(startup_s=float(intercept), bytes_per_s=float(1 / slope), volume_s=volume_s, source=source)


def stored_trial_cost(store: Store, cluster_name: str) -> TrialCost | None:
    """Calibrate the estimate on earlier measured trials of the same cluster, if the store has enough."""
    names = {c["name"] for c in store.campaigns() if c["cluster_name"] == cluster_name}
    per_trial: dict[int, list[Any]] = {}
    for r in store.trial_table():
        if r["campaign"] in names and r["trial_status"] == "ok" and r["seconds"] and r["metric"]:
            e = per_trial.setdefault(r["trial_id"], [r["trial_file_size"] * r["threads"], r["seconds"], 0])
            e[2] += 1
    return fit_trial_cost([(size * passes, sec) for size, sec, passes in per_trial.values()])


def estimate_seconds(expanded: Expanded, p: Protocol, baselines: bool = True, cost: TrialCost = TrialCost()) -> float:
    """Campaign duration: per trial, the start-up plus the data of every test pass at the cost's rate (or the
    auto-sizing target); per volume, creating, mounting and removing it; ``BASELINE_S`` for the facts and
    baselines of each lab hardware setting."""
    per_trial = 0.0
    for run in expanded.runs:
        w = run.workload
        data = parse_size(w.file_size) * w.threads
        large = [t for t in w.tests if t not in w.file_tests]
        # passes that move the data: the large-file tests (iozone and dd write first), small files written, read
        passes = len(large) + bool(large and "write" not in large and ENGINE_SPECS[w.engine].writes_first)
        passes_small = len({"file_create", "file_read"} & set(w.file_tests))
        io = (passes + passes_small * w.files) * data / cost.bytes_per_s
        if p.target_seconds:
            io = max(io, p.target_seconds)
        startup = TRIAL_ENGINES[w.engine].overhead_seconds(w, cost.startup_s)
        per_trial += (startup + io) * (p.warmups + p.repetitions)
    total = per_trial + cost.volume_s * len(expanded.volumes)
    # Each lab hardware setting is a campaign with baselines of its own.
    return total + (BASELINE_S * len(expanded.lab_settings) if baselines else 0)


def trial_count(expanded: Expanded, p: Protocol) -> tuple[int, int]:
    """(minimum, maximum) trials the protocol may run, warm-ups included."""
    n = len(expanded.runs)
    low = n * (p.warmups + p.repetitions)
    per_rerun = 1 + (p.warmups if p.rewarm else 0)
    high = n * (p.warmups + p.cap + (p.max_reruns * per_rerun if p.outlier_rule != "none" else 0))
    return low, high


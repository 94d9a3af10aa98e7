"""How long a campaign will take and how many trials it may run, for ``collect --dry-run`` and progress ETAs.

A run the store has measured before on the cluster, at the same hardware setting, takes what its trials took
then. Any other trial costs a start-up plus its data at a rate: the rate fitted on the store's earlier trials of
the cluster when it has enough of them, else the lab's default, never faster than the slowest stage the run's
own hardware setting allows (a throttled link or disk of the plan: ``model.physics``).
``benchmarks/estimate_accuracy.py`` sets the estimates beside the shipped campaigns' recorded trial times.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from ..bench.engine_specs import ENGINE_SPECS
from ..bench.engines import TRIAL_ENGINES
from ..hardware.disk import parse_disk_rate
from ..hardware.emulation import is_share
from ..hardware.link import parse_rate
from ..model.physics import stages
from ..plan.factors import RunSpec
from ..plan.file import Baselines, Expanded
from ..plan.protocol import Protocol
from ..store.store import Store
from ..units import parse_size
from .records import LabSetting, knobs_moving

# A stage carries this share of its nominal rate in a trial (the shipped proofs measured 0.85-0.95 of the
# throttled link or disk; iozone's passes start and end unevenly across children)
STAGE_EFFICIENCY = 0.95
# What a hardware setting costs before its first trial beyond measuring (benchmarks/setting_cost.py, 8 lab nodes):
# applied, its facts and CPU score and its first volume about 3 s; iperf3's servers started, the shared start and
# the servers stopped, with the round trips, 0.9-1.5 s beside its measuring (seconds + omitted); fio's start and
# its file laid out about 1 s beside its tests. A setting that keeps a baseline (``baselines.keep``) pays nothing
# for it.
SETTING_S = 4.0
OVERHEAD_S = {"network": 1.5, "disk": 1.0}
BASELINE_KINDS = ("network", "disk")


def baseline_seconds(kind: str, wanted: Baselines) -> float:
    """What measuring one baseline ``kind`` costs with the plan's specs: iperf3's pass (its seconds and those
    left out) or fio's tests (each its runtime), plus the fixed part (``OVERHEAD_S``)."""
    if kind == "network":
        return wanted.iperf.seconds + wanted.iperf.omit + OVERHEAD_S[kind]
    return len(wanted.fio.tests) * wanted.fio.runtime + OVERHEAD_S[kind]


@dataclass(frozen=True)
class TrialCost:
    """What a trial costs: fixed start-up seconds plus bytes moved (per test pass) at a rate."""

    # The stated defaults, set on the shipped campaigns' trial times (benchmarks/estimate_accuracy.py): a
    # distributed iozone trial's first test, from the caches dropped to its children started over SSH and its
    # result parsed, took 7-9 s on the lab (2 s was the figure before; the 192 trials of hardware_grid, which
    # move little data, took 19 s each for two tests). Small records' random passes are not modelled: the
    # configuration study, where they are a third of the runs, is estimated 22% short.
    startup_s: float = 7.5
    bytes_per_s: float = 100 * 2**20
    volume_s: float = 9.0
    source: str = "stated per-engine costs, set on the shipped campaigns' trial times"


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
    names = {c.name for c in store.campaigns() if c.cluster_name == cluster_name}
    per_trial: dict[int, list[Any]] = {}
    for r in store.trial_table():
        if r["campaign"] in names and r["trial_status"] == "ok" and r["seconds"] and r["metric"]:
            e = per_trial.setdefault(r["trial_id"], [r["trial_file_size"] * r["threads"], r["seconds"], 0])
            e[2] += 1
    return fit_trial_cost([(size * passes, sec) for size, sec, passes in per_trial.values()])


RunKey = tuple[str, tuple[tuple[str, str], ...]]  # a run's identity without its campaign, and its hardware setting


def run_key(config_hash: str, setting: Mapping[str, Any] | Sequence[tuple[str, str]]) -> RunKey:
    items = setting.items() if isinstance(setting, Mapping) else setting
    return config_hash, tuple(sorted((str(k), str(v)) for k, v in items))


def measured_trial_seconds(rows: Sequence[Mapping[str, Any]], cluster_name: str) -> dict[RunKey, float]:
    """Mean seconds of a trial of each run the store measured on the cluster (trial-table rows, one per metric:
    each trial counted once; failed trials and warm-ups, auto-sizing's smaller steps among them, left out), by
    the run's identity and hardware setting."""
    seen: dict[Any, tuple[RunKey, float]] = {}
    for r in rows:
        if (r.get("cluster") == cluster_name and r.get("trial_status") == "ok" and r.get("seconds")
                and not r.get("warmup")):
            seen[r["trial_id"]] = (run_key(r["config_hash"], r.get("setting") or {}), float(r["seconds"]))
    by_run: dict[RunKey, list[float]] = {}
    for key, sec in seen.values():
        by_run.setdefault(key, []).append(sec)
    return {k: fmean(v) for k, v in by_run.items()}


def stage_rate(run: RunSpec, test: str) -> float | None:
    """Bytes per second the run's hardware setting lets one test pass move at most: the slowest stage
    (``model.physics.stages``) its absolute link and disk levels give, times ``STAGE_EFFICIENCY``; None where the
    setting names neither (or gives them as shares of hosts whose hardware the dry run does not know)."""
    import numpy as np

    lab = dict(run.lab)
    link = lab.get("link")
    disk_write, disk_read = (lab.get("disk_write", lab.get("disk")), lab.get("disk_read", lab.get("disk")))

    def absolute(text: str | None, parse: Any, scale: float) -> float:
        value = parse(text) if text is not None and not is_share(text) else None
        return float(value) / scale if value else float("nan")

    f = run.features
    frame = {"network_gbps": [absolute(link, parse_rate, 1e9)],
             "disk_write_mbps": [absolute(disk_write, parse_disk_rate, 1e6)],
             "disk_read_mbps": [absolute(disk_read, parse_disk_rate, 1e6)],
             "servers": [float(f.get("servers", 1))], "clients": [float(run.workload.clients or f.get("clients", 1))],
             "replica": [float(f.get("replica", 1)) if f.get("layout") == "replicate" else 1.0],
             "disperse": [float(f.get("disperse", 0))], "redundancy": [float(f.get("redundancy", 0))]}
    metric = "write" if test in ("write", "random", "rewrite", "random_write", "file_create") else "read"
    limits = stages(frame, metric)[:, 0]
    limits = limits[np.isfinite(limits)]
    return float(limits.min()) * 1e6 * STAGE_EFFICIENCY if limits.size else None  # the stages count MB of 10^6


def setting_seconds(settings: Sequence[LabSetting], wanted: Baselines) -> float:
    """What the plan's hardware settings cost before their first trials, in the order they run: each its fixed
    ``SETTING_S``, and each baseline kind the plan wants (``baseline_seconds``) where no earlier setting measured
    it under the same knobs of its kind (``records.knobs_moving``; with ``keep`` off, every setting's)."""
    seen: dict[str, set[tuple[tuple[str, str], ...]]] = {kind: set() for kind in BASELINE_KINDS}
    total = 0.0
    for setting in settings:
        total += SETTING_S
        for kind in BASELINE_KINDS:
            seconds = baseline_seconds(kind, wanted)
            moved = tuple(sorted(knobs_moving(kind, setting).items()))
            if getattr(wanted, kind) and not (wanted.keep and moved in seen[kind]):
                total += seconds
                seen[kind].add(moved)
    return total


def estimate_seconds(expanded: Expanded, p: Protocol, baselines: Baselines | None = Baselines(),
                     cost: TrialCost = TrialCost(), measured: Mapping[RunKey, float] | None = None) -> float:
    """Campaign duration: per trial, what the run's trials took when the store measured it before
    (``measured``), else the start-up plus the data of every test pass at the cost's rate, capped by the run's
    hardware (``stage_rate``), or the auto-sizing target; per volume, creating, mounting and removing it;
    ``setting_seconds`` for the facts and ``baselines`` of the lab hardware settings (None: none)."""
    per_trial = 0.0
    trials = p.warmups + p.repetitions
    for run in expanded.runs:
        before = (measured or {}).get(run_key(run.config_hash, run.lab))
        if before is not None:
            per_trial += before * trials
            continue
        w = run.workload
        data = parse_size(w.file_size) * w.threads
        large = [t for t in w.tests if t not in w.file_tests]
        if large and "write" not in large and ENGINE_SPECS[w.engine].writes_first:
            large = ["write", *large]  # iozone and dd write the files first
        # each large-file pass moves the data once (iozone's "random" twice: reads, then writes), at its rate
        io = sum(data * (1 + (t == "random")) / min(cost.bytes_per_s, stage_rate(run, t) or cost.bytes_per_s)
                 for t in large)
        # small files written, read: each pass moves every thread's files
        io += len({"file_create", "file_read"} & set(w.file_tests)) * w.files * data / cost.bytes_per_s
        if p.target_seconds:
            io = max(io, p.target_seconds)
        startup = TRIAL_ENGINES[w.engine].overhead_seconds(w, cost.startup_s)
        per_trial += (startup + io) * trials
    total = per_trial + cost.volume_s * len(expanded.volumes)
    # Each lab hardware setting is a campaign, with baselines where its change can move them.
    return total + (setting_seconds(expanded.lab_settings, baselines) if baselines is not None else 0)


def trial_count(expanded: Expanded, p: Protocol) -> tuple[int, int]:
    """(minimum, maximum) trials the protocol may run, warm-ups included."""
    n = len(expanded.runs)
    low = n * (p.warmups + p.repetitions)
    per_rerun = 1 + (p.warmups if p.rewarm else 0)
    high = n * (p.warmups + p.cap + (p.max_reruns * per_rerun if p.outlier_rule != "none" else 0))
    return low, high


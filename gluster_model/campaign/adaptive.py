"""An adaptive campaign: run a few configurations, fit, run next where the models are least sure, stop when more
runs stop changing the answer.

The plan's grid is the set of candidates. Round 0 runs an I-optimal start; every later round fits the committee
of :func:`gluster_model.design.committee.next_batch` on what was measured and runs the batch it picks. After each
round the additive model's predictions over every candidate are compared with the previous round's: when they
move by less than ``tolerance`` (mean |change| / mean prediction) and the inputs' importance ranking stays the
same for ``patience`` rounds in a row, more runs are no longer changing the answer and the campaign stops
(Vlachos 2008 stops active learning on the same idea: the predictions have stabilised). The budget caps it.

Every decision is written to the store before its runs start (``design_log``: each chosen run with its reason,
each round's figures), in one transaction per round, and each round's choice is seeded by (seed, round): an
interrupted campaign resumes the same sequence, and never runs a configuration twice.

References
----------
Vlachos, A. (2008), A stopping criterion for active learning, *Computer Speech & Language* 22(3).
Settles, B. (2012), *Active Learning*, Morgan & Claypool — ch. 3 (query by committee) and 7 (stopping).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..bench.metrics import first_metric
from ..gluster.volume import VolumeConfig
from ..plan.factors import FACTORS, RunSpec
from ..plan.file import Expanded, PlanFile
from ..remote.executor import Executor
from ..store.identity import StoredDecision
from ..store.store import Store
from .collector import Collector
from .progress import CampaignSummary, PlanReporter
from .records import ensure_campaign, runs_done
from ..design.committee import next_batch
from ..design.matrix import RIDGE, with_intercept
from ..design.registry import Space, choose
from ..dataset import trial_frame

if TYPE_CHECKING:
    import numpy as np


def candidate_matrix(runs: Sequence[RunSpec], factors: Mapping[str, Sequence[Any]]) -> tuple[np.ndarray, list[str]]:
    """Candidates as numbers, one column per varied factor (one per level beyond the first for a choice):
    sizes on a log2 scale, switches 0/1. A factor that does not apply to a run (replica on a distribute volume)
    takes the smallest value of its column."""
    import numpy as np

    columns: list[list[float]] = []
    names: list[str] = []
    for name, levels in factors.items():
        factor = FACTORS[name]
        if len(levels) < 2 or factor.family == "lab":
            continue
        values = [r.features.get(name) for r in runs]
        if factor.kind == "choice":
            for level in sorted({str(v) for v in values if v is not None})[1:]:
                columns.append([1.0 if str(v) == level else 0.0 for v in values])
                names.append(f"{name}={level}")
            continue
        nums = [None if v is None else float(v) for v in values]
        if factor.kind == "size":
            nums = [None if v is None else math.log2(v) for v in nums]
        low = min((v for v in nums if v is not None), default=0.0)
        columns.append([low if v is None else v for v in nums])
        names.append(name)
    keep = [j for j, col in enumerate(columns) if len(set(col)) > 1]
    x = np.array([columns[j] for j in keep], dtype=float).T if keep else np.zeros((len(runs), 0))
    return x, [names[j] for j in keep]


def round_figures(x: np.ndarray, names: Sequence[str], chosen: Sequence[int], measured: Sequence[float],
                  previous: Sequence[float] | None) -> dict[str, Any]:
    """The additive model on the runs so far: how much its predictions over every candidate moved since the
    last round, its importance ranking (|effect| across each input's range), and its leave-one-out R²."""
    import numpy as np


    z = with_intercept(x)
    y = np.asarray(measured, dtype=float)
    zc = z[list(chosen)]
    m = zc.T @ zc + RIDGE * np.eye(z.shape[1])
    coef = np.linalg.solve(m, zc.T @ y)
    pred = z @ coef
    hat = np.einsum("ij,jk,ik->i", zc, np.linalg.inv(m), zc)
    loo = (y - zc @ coef) / np.maximum(1.0 - hat, 1e-9)
    loo_r2 = 1.0 - float(np.mean(loo ** 2)) / float(np.var(y)) if np.var(y) > 0 and len(y) > z.shape[1] else None
    effect: dict[str, float] = {}
    for name, c in zip(names, coef[1:]):  # a choice's levels add up to its factor's effect
        key = name.split("=")[0]
        effect[key] = effect.get(key, 0.0) + abs(float(c))
    change = None
    if previous is not None:
        change = float(np.mean(np.abs(pred - np.asarray(previous))) / max(float(np.mean(np.abs(pred))), 1e-12))
    return {"runs": len(chosen), "change": change, "loo_r2": loo_r2,
            "ranking": sorted(effect, key=lambda k: -effect[k]), "predictions": [float(v) for v in pred]}


def stop_reason(history: Sequence[Mapping[str, Any]], tolerance: float, patience: int) -> str | None:
    """Why to stop now (None: go on): predictions moved less than ``tolerance`` and the ranking held, for
    ``patience`` rounds in a row."""
    if len(history) < patience + 1:
        return None
    recent = history[-patience:]
    steady = all(h["change"] is not None and h["change"] < tolerance for h in recent)
    same = all(h["ranking"] == history[-patience - 1]["ranking"] for h in recent)
    if steady and same:
        return (f"predictions moved less than {tolerance:.0%} and the ranking held for {patience} round(s): "
                f"more runs no longer change the answer")
    return None


@dataclass
class _Progress:
    chosen: list[int]
    summaries: list[dict[str, Any]]  # each round's figures, in order
    stopped: str | None


def _replay(log: Sequence[StoredDecision], index: Mapping[str, int]) -> _Progress:
    chosen: list[int] = []
    summaries: list[dict[str, Any]] = []
    stopped = None
    for entry in log:
        if entry.config_hash is None:
            summaries.append(dict(entry.figures))
            if entry.figures.get("stopped"):
                stopped = entry.reason
        elif entry.config_hash in index:
            chosen.append(index[entry.config_hash])
    return _Progress(chosen, summaries, stopped)


def run_adaptive(executor: Executor, plan: PlanFile, expanded: Expanded, store: Store, *,
                 name: str, fail_fast: bool, reporter: PlanReporter, plan_volumes: list[VolumeConfig],
                 setting: tuple[tuple[str, str], ...] = ()) -> list[CampaignSummary]:
    """Run an adaptive plan's campaign round by round (module docstring); resumes from the store's design log.
    ``reporter`` is told each round's runs and, in one line, its figures and choice."""
    import numpy as np

    cluster = executor.cluster


    d = plan.design
    runs = expanded.runs
    index = {r.config_hash: i for i, r in enumerate(runs)}
    x, names = candidate_matrix(runs, plan.factors)
    budget = min(int(d.budget or len(runs)), len(runs))
    metric = d.metric or _first_metric(plan)
    existing = store.campaign(name)
    state = _replay(store.design_log(existing.id), index) if existing is not None else _Progress([], [], None)
    summaries: list[CampaignSummary] = []
    cid: int | None = existing.id if existing is not None else None
    if not state.chosen:
        start = min(budget, d.initial or x.shape[1] + 3)
        state.chosen = choose("iopt", Space.of_rows(x), start, np.random.default_rng([d.seed, 0]))
        cid = ensure_campaign(store, cluster, plan, name, setting=setting)  # the first choice is logged before its runs
        store.add_design_log(cid, 0, [(runs[i].config_hash, f"initial I-optimal design ({k + 1} of {start})", {})
                                      for k, i in enumerate(state.chosen)])
    assert cid is not None  # a log exists only in a campaign
    while True:
        part = Expanded([runs[i] for i in state.chosen])
        with reporter.campaign(name, len(part.runs), runs_done(store, name, part), store.where) as rep:
            summaries.append(Collector(executor, plan, part, store, campaign=name, fail_fast=fail_fast,
                                       reporter=rep, plan_volumes=plan_volumes, setting=setting).run())
        reporter.finished(summaries[-1])
        if state.stopped:
            break
        measured = _means(trial_frame(store, name), metric)
        have = [i for i in state.chosen if runs[i].config_hash in measured]
        ys = [measured[runs[i].config_hash] for i in have]
        previous = state.summaries[-1]["predictions"] if state.summaries else None
        figures = round_figures(x, names, have, ys, previous) if len(have) >= 2 else \
            {"runs": len(have), "change": None, "loo_r2": None, "ranking": [], "predictions": None}
        round_ = len(state.summaries) + 1
        history = [*state.summaries, figures]
        why = stop_reason(history, d.tolerance, d.patience)
        if why is None and len(state.chosen) >= budget:
            why = f"budget of {budget} run(s) spent"
        picks: list[int] = []
        reasons: list[tuple[str | None, str, dict[str, Any]]] = []
        if why is None:
            picks, scores = next_batch(x, have, ys, min(d.batch, budget - len(state.chosen)),
                                       np.random.default_rng([d.seed, round_]))
            picks = [p for p in picks if p not in state.chosen]
            reasons = [(runs[p].config_hash, f"committee disagreement {s['disagreement']:.2f}, I-optimal gain "
                        f"{s['gain']:.2f} (score {s['score']:.2f})", s) for p, s in zip(picks, scores)]
            if not picks:
                why = "every candidate has run"
        line = (f"round {round_}: {figures['runs']} run(s) measured; predictions moved "
                f"{'–' if figures['change'] is None else format(figures['change'], '.1%')}; ranking "
                f"{' > '.join(figures['ranking'][:4]) or '–'}")
        summary = {**figures, "stopped": why is not None}
        store.add_design_log(cid, round_, [(None, why or line, summary), *reasons])  # before the runs start
        state.summaries.append(summary)
        reporter.note(line + (f"; stopped: {why}" if why else f"; next {len(picks)}: " +
                     ", ".join(runs[p].label for p in picks)))
        if why is not None:
            break
        state.chosen += picks
    return summaries


def _first_metric(plan: PlanFile) -> str:
    return first_metric(plan.workload.tests)


def _means(frame: Any, metric: str) -> dict[str, float]:
    """Mean of ``metric`` per configuration over its measured trials."""
    if frame.empty or metric not in frame:
        return {}
    means = frame.groupby("config_hash", observed=True)[metric].mean().dropna()
    return {str(k): float(v) for k, v in means.items()}

"""A hardware plan that lowers each knob from today until the stage it feeds binds (``design.hardware.descend``).

A purchase answer from data measured below today can size an upgrade only up to the next stage that some
setting made bind: a stage never seen binding is known only from below (it carried at least what was measured),
and an upgrade that moves the bottleneck onto it is sized by a guess. A fixed list of settings may stop short
of where a cluster's CPU or round trips start to limit, or spend campaigns far below it. A descent instead
lowers one knob at a time from today (the plan's first setting) through the levels given, and stops that knob
once every metric of the plan has fallen at least ``binds`` below today's at ``past + 1`` of its levels: the
stage has then bound at two points (with ``past: 1``), enough to place its efficiency and, for the round trips,
the service time beside the delay. A knob under which some metric never falls runs to its last level: that
stage does not bind the metric down to there, which the model then knows as well. A level at which nothing was
measured (every run failed: a cluster that cannot run that low) ends the knob's descent there.

The decisions read the store (each setting's trials, as the models read them), so an interrupted plan resumes
to the same choices. The fall of a metric at a setting is 1 − the geometric mean, over the runs both settings
measured, of the ratio of the run's mean to today's (runs matched by their configuration).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..bench.metrics import METRICS
from ..plan.file import HardwareDesign
from ..store.store import Store
from .records import LabSetting


def steps_of(settings: Sequence[LabSetting], knobs: Sequence[str]) -> dict[LabSetting, str]:
    """The plan's settings that are a descent's steps, each with its knob: today (the first setting) with exactly
    one of ``knobs`` changed. The order of ``settings`` is each knob's order of descent."""
    if not settings or not knobs:
        return {}
    today = dict(settings[0])
    out: dict[LabSetting, str] = {}
    for s in settings[1:]:
        here = dict(s)
        changed = [k for k in {*today, *here} if here.get(k) != today.get(k)]
        if len(changed) == 1 and changed[0] in knobs:
            out[s] = changed[0]
    return out


def falls(today: Mapping[str, Mapping[str, float]], step: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """Per metric, how far a setting fell below today: 1 − the geometric mean over the runs both measured of the
    run's mean at the setting over its mean today (``{run: {metric: mean}}`` each). Metrics no run has on both
    sides are left out; a fall below 0 is a rise."""
    logs: dict[str, list[float]] = {}
    for run, means in step.items():
        for metric, value in means.items():
            base = today.get(run, {}).get(metric)
            if base is not None and base > 0 and value > 0 and math.isfinite(value) and math.isfinite(base):
                logs.setdefault(metric, []).append(math.log(value / base))
    return {m: 1 - math.exp(sum(v) / len(v)) for m, v in logs.items()}


@dataclass
class Descent:
    """One knob's descent: how many of its levels have made each metric fall at least ``binds``; done once
    every metric today measured has ``past + 1`` such levels."""

    knob: str
    metrics: tuple[str, ...]
    binds: float
    past: int
    bound: dict[str, list[str]] = field(default_factory=dict)  # metric -> the settings (campaigns) it bound at
    # a setting at which no metric was measured (every run failed: a cluster that cannot run that low): the
    # levels below it are left out
    failed_at: str | None = None

    def record(self, campaign: str, fell: Mapping[str, float]) -> list[str]:
        """Count a measured setting; returns the metrics it bound. A setting that measured none of the metrics
        ends the descent."""
        if self.metrics and not any(m in fell for m in self.metrics):
            self.failed_at = campaign
        hit = [m for m in self.metrics if fell.get(m, 0.0) >= self.binds]
        for m in hit:
            self.bound.setdefault(m, []).append(campaign)
        return hit

    @property
    def done(self) -> bool:
        return self.failed_at is not None or \
            (bool(self.metrics) and all(len(self.bound.get(m, [])) > self.past for m in self.metrics))


class Descents:
    """A plan's descents as it runs (``campaign.plan_run``): which setting to leave out, and what each measured
    step showed, both as the notes collect prints. Today's means are read once, after its campaign; a plan
    without ``descend`` has no steps and every call answers None."""

    def __init__(self, store: Store, today: str, settings: Sequence[LabSetting], hw: HardwareDesign | None,
                 keys: Sequence[str]) -> None:
        self.store, self.today, self.keys = store, today, list(keys)
        self.binds, self.past = (hw.binds, hw.past) if hw is not None else (0.15, 1)
        self.steps = steps_of(settings, list(hw.descend)) if hw is not None else {}
        self.knobs: dict[str, Descent] = {}
        self._today: dict[str, dict[str, float]] | None = None

    def _descent(self, knob: str) -> Descent:
        if self._today is None:  # today has been measured by now: every step is held to its runs
            self._today = run_means(self.store, self.today, self.keys)
        if knob not in self.knobs:
            metrics = tuple(sorted({m for r in self._today.values() for m in r}))
            self.knobs[knob] = Descent(knob, metrics, self.binds, self.past)
        return self.knobs[knob]

    def left_out(self, setting: LabSetting) -> str | None:
        """Why ``setting`` is not measured (its knob's descent is done), or None: it runs."""
        knob = self.steps.get(setting)
        if knob is None or not self._descent(knob).done:
            return None
        d = self.knobs[knob]
        why = (f"nothing was measured at {d.failed_at}" if d.failed_at else
               f"every metric fell {self.binds:.0%} or more below today at {self.past + 1} of its settings")
        return f"descent of {knob}: {knob}={dict(setting)[knob]} left out: {why}"

    def measured(self, setting: LabSetting, campaign: str) -> str | None:
        """Count a step's campaign once measured; how far each metric fell and what bound (None: not a step)."""
        knob = self.steps.get(setting)
        if knob is None:
            return None
        d = self._descent(knob)
        assert self._today is not None
        fell = falls(self._today, run_means(self.store, campaign, self.keys))
        hit = d.record(campaign, fell)
        return (f"descent of {knob}: at {knob}={dict(setting)[knob]} " +
                ", ".join(f"{m} {-100 * fell[m]:+.0f}%" for m in sorted(fell)) +
                (f" (bound: {', '.join(hit)})" if hit else " (nothing bound)"))


def run_means(store: Store, campaign: str, keys: Sequence[str]) -> dict[str, dict[str, float]]:
    """``{run: {metric: mean over its trials}}`` of one campaign, from the trials a model reads (finished runs, no
    warm-ups or outliers); a run is named by its values of ``keys`` (the plan's factors other than hardware, which
    match a run across settings: its configuration hash holds the setting too)."""
    from ..dataset import trial_frame

    frame = trial_frame(store, campaign)
    if frame.empty:
        return {}
    metrics = [m for m in METRICS if m in frame]
    names = [k for k in keys if k in frame]
    run = frame[names].astype(str).agg("|".join, axis=1) if names else frame.index.map(lambda _: "all")
    means = frame[metrics].groupby(run).mean()
    return {str(r): {m: float(v) for m, v in row.items() if isinstance(v, (int, float)) and math.isfinite(v)}
            for r, row in means.iterrows()}

"""Predictions beside measurements (pure given the measured frame): per scenario the error and whether the
measurement fell inside its interval, the measured change against the interval a measured change falls in; per
metric MAPE, coverage and whether the best candidate per price measured best.

References
----------
Hyndman, R. J., Koehler, A. B. (2006), "Another look at measures of forecast accuracy", International Journal of
Forecasting 22(4) (MAPE and its limits: undefined at zero, which throughput never is here).
Gneiting, T., Raftery, A. E. (2007), "Strictly proper scoring rules, prediction, and estimation", JASA 102(477)
(empirical coverage of central prediction intervals as a calibration check).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..predict.scenarios import Question, Scenario
from ..predict.whatif import Prediction, what_if
from .build import MEASURED_INPUTS, Target
from ..model.artifact import json_safe
from ..model.features import InputValue, label
from ..stats.accuracy import coverage, mape, percent_error

if TYPE_CHECKING:
    import pandas as pd

    from ..model.artifact import ModelFile

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
    tied_with: list[str] = field(default_factory=list)  # what predict said the best buy was tied with
    by_price: bool = True  # best by gain per price; False: an unpriced question, best by throughput

    @property
    def measured_best_was_tied(self) -> bool:
        """The ranking did not hold, but the measured best was a candidate predict called tied with its best buy."""
        return self.ranking_held is False and self.best_measured in self.tied_with


@dataclass
class Verification:
    model_file: str
    scenarios_file: str
    plan: str
    level: float
    campaigns: list[str]
    measured_hardware: dict[str, dict[str, InputValue | None]]  # per scenario: its measured MEASURED_INPUTS
    skipped: dict[str, str]  # scenario -> why it was not measured
    metrics: list[MetricVerdict]
    notes: list[str] = field(default_factory=list)
    clusters: list[str] = field(default_factory=list)  # where it was measured (the campaigns' clusters)

    @property
    def not_held(self) -> list[MetricVerdict]:
        """The metrics whose recommended buy did not measure best (and was not tied with the one that did)."""
        return [m for m in self.metrics if m.ranking_held is False and not m.measured_best_was_tied]

    @property
    def exit_status(self) -> int:
        """1 when a recommendation did not hold, else 0 (a measurement outside its interval is reported, and
        at a 90% level one in ten is expected: no failure by itself)."""
        return 1 if self.not_held else 0

    def failure_line(self) -> str:
        return "; ".join(f"{m.metric}: the recommended {m.best_predicted} did not measure best ({m.best_measured} did)"
                         for m in self.not_held)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = json_safe(asdict(self))
        out["exit_status"] = self.exit_status
        return out


# -- scenarios -> runs (pure) ---------------------------------------------------------------------------------

# -- comparing (pure given the frame) -----------------------------------------------------------------------

def compare(mf: ModelFile, q: Question, found: Sequence[Target], frame: pd.DataFrame, metrics: Sequence[str],
            level: float | None, *, plan: str = "", campaigns: Sequence[str] = (),
            clusters: Sequence[str] = ()) -> Verification:
    """Predictions at the measured hardware beside the measured means, per metric; MAPE, coverage, ranking."""
    lvl = level if level is not None else (q.level if q.level is not None else 0.9)
    skipped = {t.scenario.name: t.why for t in found if t.run is None}
    hardware: dict[str, dict[str, InputValue | None]] = {}
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
    notes: list[str] = [n for t in measured for n in built_apart(t.scenario, hardware[t.scenario.name])]
    if not any(t.scenario.baseline for t in measured):
        notes.append("the baseline was not measured: no gain per price can be compared")
    verdicts: list[MetricVerdict] = []
    if not measured:
        return Verification(mf.path, q.source, plan, lvl, list(campaigns), hardware, skipped, [], notes,
                            sorted(set(clusters)))
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
        # interval of a measured change, not the narrower one of the expected change that tune ranks by. Each is
        # a mean of the trials run (the fewest of any scenario: a wider interval where they differ).
        trials = min(int(rows[t.scenario.name][metric].notna().sum()) for t in ok)
        # Judged with the model predict answered the question with: an upgrade's answer is the bottleneck
        # model's, and the hardware as measured (a capacity a little past the data's, a CPU score that moved)
        # must not hand the check to another model.
        use = "bottleneck" if asked_by_metric[metric].model == "bottleneck" else None
        answer = what_if(mf, Question(base, cands, lvl), metrics=[metric], level=lvl, use=use, observed_change=True,
                         trials=trials)
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
                # No interval of the change from this model (trees read from a file without their training
                # data): bounded by the two predictions' intervals, which hold the noise of both runs.
                low, high = p.low - base_pred.high, p.high - base_pred.low
            checks.append(Check(t.scenario.name, p.value, p.low, p.high, m, int(values.size),
                                percent_error(p.value, m), p.low <= m <= p.high,
                                asked.basis if asked else p.basis, asked.value if asked else math.nan, p.basis,
                                p.delta if gain is not None else None, low if gain is not None else None,
                                high if gain is not None else None, gain))
        verdict = MetricVerdict(metric, answer.metrics[0].model, len(checks), mape([c.error_pct for c in checks]),
                                coverage([c.inside for c in checks]), checks)
        # The recommendation is predict's rank 1 for the question as asked; the measured best is the priced
        # candidate with the largest measured gain per price (a positive one).
        has_base = any(t.scenario.baseline for t in ok)
        if has_base and not any(t.scenario.price for t in ok if not t.scenario.baseline):
            # No prices (tune's advice, a question of which is fastest): what the model recommends is the
            # candidate whose gain is clearest and largest, or the baseline kept; it holds if it measured fastest
            verdict.best_predicted, verdict.tied_with = _fastest_predicted(list(as_asked.values()))
            verdict.by_price = False
            verdict.best_measured = max(checks, key=lambda c: c.measured).scenario
        else:
            verdict.best_predicted = asked_by_metric[metric].best_upgrade if has_base else None
            best = asked_by_metric[metric].best
            verdict.tied_with = list(best.tied_with) if has_base and best is not None else []
            verdict.best_measured = _best_measured(checks, ok)
        if verdict.best_predicted is not None and verdict.best_measured is not None:
            verdict.ranking_held = verdict.best_predicted == verdict.best_measured
        verdicts.append(verdict)
    return Verification(mf.path, q.source, plan, lvl, list(campaigns), hardware, skipped, verdicts, notes,
                        sorted(set(clusters)))


# How far a build's measured hardware may stand from what its scenario asked before verify says so: beyond the
# scatter of one input measured in two campaigns on a quiet lab (links 1-2%, disks a few %, the CPU score of one
# quota up to a fifth); a round trip is told apart only past an absolute gap, as tens of microseconds move it by
# half.
BUILT_RATIO = 1.25
BUILT_RTT_MS = 0.25


def built_apart(scenario: Scenario, measured: Mapping[str, InputValue | None]) -> list[str]:
    """One note per hardware input the scenario set whose build measured it more than ``BUILT_RATIO`` apart (a
    round trip: also more than ``BUILT_RTT_MS``), pure. Why: verify predicts at the hardware measured, so the
    check holds for what was built; but the ranking it checks is predict's for the question as asked, and a
    build that missed its figure (a `lab:` share that leaves a link unshaped, a CPU quota the host cannot give)
    measured another question."""
    out = []
    for name in MEASURED_INPUTS:
        asked, got = _figure(scenario.values.get(name)), _figure(measured.get(name))
        if asked is None or got is None:
            continue
        ratio = got / asked
        if max(ratio, 1 / ratio) <= BUILT_RATIO:
            continue
        if name == "network_rtt_ms" and abs(got - asked) <= BUILT_RTT_MS:
            continue
        out.append(f"{scenario.name}: built with {label(name)} {got:.4g} where it asks {asked:.4g} "
                   f"(x{ratio:.2f}): its check is of the hardware built, and the ranking checked is of the question "
                   "as asked")
    return out


def _figure(value: InputValue | None) -> float | None:
    """A positive finite number, or None (a level, a flag, nothing)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
        return None
    return float(value)


def _fastest_predicted(preds: Sequence[Prediction]) -> tuple[str | None, list[str]]:
    """Of an unpriced question's predictions (the baseline first): the candidate with the largest change whose
    interval lies above zero, else the baseline (nothing is clearly faster: keep it); and the scenarios it
    cannot be told from (a change interval reaching its lower end: the baseline's is zero)."""
    if not preds:
        return None, []
    base = preds[0]
    clear = [p for p in preds[1:] if p.delta is not None and p.delta_low is not None and p.delta_low > 0]
    if not clear:
        tied = [p.scenario for p in preds[1:] if p.delta_high is not None and p.delta_high >= 0]
        return base.scenario, tied
    best = max(clear, key=lambda p: p.delta or 0.0)
    tied = [p.scenario for p in preds[1:] if p is not best and p.delta_high is not None
            and best.delta_low is not None and p.delta_high >= best.delta_low]
    return best.scenario, tied


def _best_measured(checks: Sequence[Check], found: Sequence[Target]) -> str | None:
    """The priced candidate whose measured gain over the measured baseline, per unit price, is largest (and
    positive); None without a measured baseline or a priced candidate that gained."""
    base = next((c for c, t in zip(checks, found) if t.scenario.baseline), None)
    if base is None:
        return None
    gains = [((c.measured - base.measured) / float(t.scenario.price), c.scenario) for c, t in zip(checks, found)
             if not t.scenario.baseline and t.scenario.price and c.measured > base.measured]
    return max(gains)[1] if gains else None


def _scalar(col: pd.Series) -> InputValue | None:
    """A measured input's value over a scenario's trials: the median of a figure, a flag or level as it is."""
    import numpy as np

    values = col.dropna()
    if values.empty:
        return None
    first = values.iloc[0]
    if isinstance(first, (bool, np.bool_)):
        return bool(first)
    if isinstance(first, (int, float, np.number)):
        return float(values.astype(float).median())
    return str(first)

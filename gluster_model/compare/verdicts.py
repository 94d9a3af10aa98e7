"""Two sides matched by configuration and metric, each row judged: B against A as a ratio with its interval
(the run as the unit, ``stats.ratios.run_ratio``), and a verdict over all rows at once:

- **slower** / **faster**: the change is significant after Holm's adjustment over every row and larger than
  the margin;
- **same**: the equivalence test (TOST) shows the ratio within ±margin, after Holm's adjustment;
- **undecided**: neither (too few trials, or a change near the margin). A test that found no difference never
  says "same".

The exit status is 1 when any row is slower, else 0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..bench.metrics import METRICS, shown_unit
from ..stats.power import BETWEEN_RUN_SD
from ..stats.drift import drift_ratio, session_drift
from ..stats.ratios import EQUIVALENCE_MARGIN, RunRatio, holm_adjusted, run_ratio
from .sides import HARDWARE, MismatchError, Side

if TYPE_CHECKING:
    import pandas as pd

MARGIN = EQUIVALENCE_MARGIN
LEVEL = 0.95
TOLERANCE = 0.10  # measured hardware further apart than this may be what the comparison is about
SLOWER, FASTER, SAME, UNDECIDED = "slower", "faster", "same", "undecided"


@dataclass
class Row:
    """One configuration and metric on both sides."""

    config: str        # the configuration as people read it
    config_hash: str
    metric: str
    unit: str
    mean_a: float
    mean_b: float
    ratio: RunRatio
    p_change: float = math.nan  # Holm-adjusted
    p_same: float = math.nan    # Holm-adjusted TOST
    verdict: str = UNDECIDED

    def to_json(self) -> dict[str, Any]:
        r = self.ratio
        return {"config": self.config, "config_hash": self.config_hash, "metric": self.metric, "unit": self.unit,
                "mean_a": self.mean_a, "mean_b": self.mean_b, "runs": list(r.runs), "trials": list(r.trials),
                "ratio": r.ratio, "low": r.low, "high": r.high, "basis": r.basis, "p_change_holm": self.p_change,
                "p_same_holm": self.p_same, "verdict": self.verdict}


@dataclass
class Comparison:
    """The rows, those without a partner, the hardware that differs, and the verdict as an exit status."""

    a: Side
    b: Side
    margin: float
    level: float
    rows: list[Row]
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    hardware: list[tuple[str, float, float]] = field(default_factory=list)  # input, A, B beyond the tolerance
    notes: list[str] = field(default_factory=list)

    @property
    def slower(self) -> list[Row]:
        return [r for r in self.rows if r.verdict == SLOWER]

    @property
    def exit_status(self) -> int:
        return 1 if self.slower else 0

    def counts(self) -> dict[str, int]:
        return {v: sum(r.verdict == v for r in self.rows) for v in (SLOWER, FASTER, SAME, UNDECIDED)}

    def failure_line(self) -> str:
        """The one line a failing comparison ends with: how many rows are slower, the first three named."""
        return (f"{len(self.slower)} row(s) slower beyond ±{100 * self.margin:g}%: "
                + "; ".join(f"{r.metric} {r.config}" for r in self.slower[:3]))

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a.to_json(), "b": self.b.to_json(), "margin": self.margin, "level": self.level,
                "exit_status": self.exit_status, "counts": self.counts(), "rows": [r.to_json() for r in self.rows],
                "only_a": self.only_a, "only_b": self.only_b,
                "hardware_differs": [{"input": n, "a": x, "b": y} for n, x, y in self.hardware], "notes": self.notes}


def _label(frame: pd.DataFrame) -> dict[str, str]:
    """Each configuration's readable identity: the features that vary between configurations, else its hash."""
    from ..plan.factors import show_features

    keys = [c for c in ("layout", "replica", "disperse", "shard", "file_size", "record_size", "threads", "sync",
                        "files", "servers", "clients", "write_behind", "read_ahead", "io_cache", "quick_read",
                        "md_cache", "cache_size") if c in frame]
    per = frame.drop_duplicates("config_hash").set_index("config_hash")
    varying = [k for k in keys if per[k].astype(str).nunique() > 1]
    out = {}
    for h, row in per.iterrows():
        feats = {k: (v.item() if hasattr(v, "item") else v) for k in varying if (v := row[k]) == v}
        out[str(h)] = show_features(feats) if feats else str(h)[:10]
    return out


def _runs(frame: pd.DataFrame, config: str, metric: str) -> list[list[float]]:
    rows = frame[(frame["config_hash"] == config) & frame[metric].notna()]
    keys = ["store", "run_id"] if "store" in rows else ["run_id"]
    return [g[metric].astype(float).tolist() for _, g in rows.groupby(keys, observed=True, sort=True)]


def judge(a: Side, b: Side, *, margin: float = MARGIN, level: float = LEVEL, tolerance: float = TOLERANCE,
          between_sd: float = BETWEEN_RUN_SD, pooled_drift: bool = False,
          sides_apart: Sequence[str] = ()) -> Comparison:
    """Every configuration and metric measured on both sides, judged (module docstring); one line (exit 2) for
    sides that cannot be compared. With ``pooled_drift`` (an interleaved comparison: each side measured in
    several looks) a row's interval counts the session's drift estimated over every configuration and side of
    its metric (``stats.drift``) instead of each row's own few run means; ``sides_apart`` names the factors
    that tell the sides apart (shown in the notes)."""
    if not 0 < margin < 1:
        raise MismatchError(f"--margin {margin * 100:g}%: give a share between 0 and 100%")
    for side, name in ((a, "--against"), (b, "--campaign")):
        if side.frame.empty:
            raise MismatchError(f"{name}: {side.label} has no finished trials to compare")
    if a.schema != b.schema:
        raise MismatchError(f"{a.store} has schema version {a.schema} and {b.store} {b.schema}: their campaigns were "
                            "written by different glmodel releases; bring the older one up to date first "
                            "(`glmodel migrate --store ...`)")
    if a.plan != b.plan:
        raise MismatchError(f"{a.label} ran plan {a.plan} and {b.label} plan {b.plan}: compare campaigns of one plan "
                            "(a configuration's meaning is its plan's)")
    metrics_a = {m for m in METRICS if m in a.frame and a.frame[m].notna().any()}
    metrics_b = {m for m in METRICS if m in b.frame and b.frame[m].notna().any()}
    metrics = [m for m in METRICS if m in metrics_a & metrics_b]
    if not metrics:
        raise MismatchError(f"no metric measured on both sides ({a.label}: {', '.join(sorted(metrics_a)) or 'none'}; "
                            f"{b.label}: {', '.join(sorted(metrics_b)) or 'none'})")
    configs_a, configs_b = set(a.frame["config_hash"]), set(b.frame["config_hash"])
    common = [c for c in dict.fromkeys(a.frame["config_hash"]) if c in configs_b]
    if not common:
        raise MismatchError(f"no configuration measured on both sides: {a.label} has {len(configs_a)}, {b.label} "
                            f"{len(configs_b)}, none in common")
    import pandas as pd

    labels = _label(pd.concat([a.frame, b.frame], ignore_index=True))
    rows: list[Row] = []
    skipped: list[str] = []
    drifts = {m: session_drift([_runs(side.frame, c, m) for side in (a, b) for c in common], floor=between_sd)
              for m in metrics} if pooled_drift else {}
    for config in common:
        for metric in metrics:
            runs_a, runs_b = _runs(a.frame, config, metric), _runs(b.frame, config, metric)
            if not runs_a or not runs_b:
                continue
            try:
                rr = drift_ratio(runs_a, runs_b, drifts[metric], level) if pooled_drift else \
                    run_ratio(runs_a, runs_b, level, between_sd)
            except ValueError as exc:
                skipped.append(f"{labels[config]} {metric}: {exc}")
                continue
            rows.append(Row(labels[config], config, metric, shown_unit(metric),
                            float(sum(map(sum, runs_a)) / sum(map(len, runs_a))),
                            float(sum(map(sum, runs_b)) / sum(map(len, runs_b))), rr))
    if not rows:
        raise MismatchError("no configuration and metric has trials on both sides to compare"
                            + (f" ({skipped[0]})" if skipped else ""))
    alpha = 1 - level
    changed = holm_adjusted([r.ratio.p_changed() for r in rows])
    same = holm_adjusted([r.ratio.p_equivalent(margin) for r in rows])
    for r, pc, ps in zip(rows, changed, same):
        r.p_change, r.p_same = pc, ps
        if pc <= alpha and r.ratio.ratio < 1 - margin:
            r.verdict = SLOWER
        elif pc <= alpha and r.ratio.ratio > 1 + margin:
            r.verdict = FASTER
        elif ps <= alpha:
            r.verdict = SAME
        else:
            r.verdict = UNDECIDED
    order = {SLOWER: 0, UNDECIDED: 1, FASTER: 2, SAME: 3}
    rows.sort(key=lambda r: (order[r.verdict], r.ratio.ratio))
    hardware = [(n, a.hardware[n], b.hardware[n]) for n in HARDWARE if n in a.hardware and n in b.hardware
                and a.hardware[n] > 0 and abs(b.hardware[n] / a.hardware[n] - 1) > tolerance]
    notes = [f"skipped {s}" for s in skipped]
    if pooled_drift:
        notes.append("sides apart by " + ", ".join(sides_apart) + "; each row's interval counts the session's drift "
                     "(a run's own shift), estimated over every configuration of both sides: " + "; ".join(
                         f"{m} {d.sd * 100:.2f}% ({d.runs} runs of {d.configs} configurations)"
                         for m, d in drifts.items() if any(r.metric == m for r in rows)))
    elif any(r.ratio.basis != "runs" for r in rows):
        notes.append(f"rows measured in one run on a side add a between-run SD of {between_sd * 100:.2f}% (a run's "
                     "own shift, which its trials cannot show); repeat the campaign to measure it instead")
    return Comparison(a, b, margin, level, rows,
                      sorted(labels[c] for c in configs_a - configs_b), sorted(labels[c] for c in configs_b - configs_a),
                      hardware, notes)

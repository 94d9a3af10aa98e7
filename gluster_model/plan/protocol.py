"""Trial protocol: how many trials a run gets, which are outliers, and when to stop repeating. Pure functions.

The runner asks ``next_step`` after every measured trial. Outlier rules:

- ``three_sigma``: a trial with any metric outside mean ± 3 s of the run's kept trials is flagged and replaced by
  a fresh trial (the rule of the read-cost studies; with ``rewarm`` the replacement follows the same warm-up). With n kept trials no value can lie further than
  (n-1)/sqrt(n) standard deviations from their mean, so the rule can only fire from n >= 11 on; for fewer
  repetitions use ``rsd``.
- ``rsd``: while a metric's relative standard deviation exceeds ``rsd_max``, the trial furthest from the median
  is flagged and replaced, up to ``max_reruns`` times; if the gate still fails the run is marked unstable.

Adaptive stopping ends the run once every metric's 95 % confidence half-width t(0.975, n-1)·s/sqrt(n) is
below ``ci_fraction`` of its mean (between ``repetitions`` and ``max_repetitions`` trials).

References
----------
Jain, R. (1991), *The Art of Computer Systems Performance Analysis*, Wiley, ch. 13 (confidence intervals and
the number of repetitions).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field, field_validator, model_validator

from ..config.cluster import Frozen
from ..units import parse_size


class Protocol(Frozen):
    warmups: int = Field(default=1, ge=0, le=100, description="trials run first and recorded, but not results")
    repetitions: int = Field(default=3, ge=1, le=1000, description="measured trials per run (the minimum)")
    max_repetitions: int | None = Field(default=None, ge=1, le=1000, description="cap for adaptive stopping")
    outlier_rule: Literal["none", "three_sigma", "rsd"] = "rsd"
    rsd_max: float = Field(default=0.15, gt=0, le=10)
    max_reruns: int = Field(default=3, ge=0, le=100, description="replacement trials an outlier rule may add")
    rewarm: bool = Field(default=False, description="run the warm-ups again before each replacement trial")
    adaptive: bool = False
    ci_fraction: float = Field(default=0.05, gt=0, lt=1, description="target 95% CI half-width / mean")
    drop_caches: bool = True
    remount: Literal["never", "run", "trial"] = Field(
        default="run", description="remount the clients before every trial (trial); between runs of a volume when "
        "its client process could carry file data over, i.e. io-cache on or files quick-read holds whole (run); "
        "or never")
    target_seconds: float | None = Field(default=None, gt=0, le=3600,
                                         description="auto-size file_size so a trial's data phase lasts about this long")
    max_file_size: int = Field(default=64 << 30, gt=0, description="auto-sizing never grows a file past this")
    larger_than_ram: bool = Field(default=False, description="size files past the clients' RAM (uncached regime)")
    trial_timeout: float = Field(default=3600, gt=0)
    startup_timeout: float = Field(default=60, gt=0, le=3600, description="stop an iozone trial whose children "
                                   "did no I/O for this long (plus 0.5 s per thread)")

    @field_validator("max_file_size", mode="before")
    @classmethod
    def _size(cls, v: object) -> object:
        return parse_size(v) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _caps(self) -> Protocol:
        if self.max_repetitions is not None and self.max_repetitions < self.repetitions:
            raise ValueError("max_repetitions must be at least repetitions")
        return self

    @property
    def cap(self) -> int:
        return self.max_repetitions if self.max_repetitions is not None else self.repetitions


Values = list[dict[str, float]]  # one dict metric -> value per measured trial, in order


@dataclass
class Step:
    """What to do after the trials so far: run another or stop; which trials to flag; why."""

    more: bool
    flag: list[int] = field(default_factory=list)   # indices into the measured trials to flag as outliers
    reason: str = ""
    unstable: bool = False


def rsd(values: list[float]) -> float:
    if len(values) < 2:
        return 0.0
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean if mean else math.inf


def half_width_fraction(values: list[float], confidence: float = 0.95) -> float:
    """95% CI half-width over the mean (t distribution); inf below two values."""
    from scipy.stats import t

    n = len(values)
    if n < 2:
        return math.inf
    mean = statistics.fmean(values)
    if not mean:
        return math.inf
    quantile = float(t.ppf(1 - (1 - confidence) / 2, n - 1))
    return quantile * statistics.stdev(values) / math.sqrt(n) / abs(mean)


def three_sigma_outliers(values: Values) -> list[int]:
    """Indices of trials with any metric outside mean ± 3 sample standard deviations of all trials."""
    out: set[int] = set()
    if len(values) < 3:
        return []
    for metric in values[0]:
        xs = [v[metric] for v in values]
        mean, sd = statistics.fmean(xs), statistics.stdev(xs)
        if sd == 0:
            continue
        out.update(i for i, x in enumerate(xs) if abs(x - mean) > 3 * sd)
    return sorted(out)


def next_step(kept: Values, reruns_used: int, p: Protocol) -> Step:
    """Decide after a measured trial. ``kept``: values of the measured trials not flagged so far."""
    n = len(kept)
    if n < p.repetitions:
        return Step(True, reason=f"{n}/{p.repetitions} repetitions")
    if p.outlier_rule == "three_sigma":
        flagged = three_sigma_outliers(kept)
        if flagged:
            if reruns_used + len(flagged) <= p.max_reruns:
                return Step(True, flagged, f"3-sigma rule rejected {len(flagged)} trial(s); re-running")
            return Step(False, flagged, f"3-sigma rule rejected {len(flagged)} trial(s) after {reruns_used} "
                                        "re-run(s)", unstable=True)
    elif p.outlier_rule == "rsd":
        worst = max(kept[0], key=lambda m: rsd([v[m] for v in kept]))
        spread = rsd([v[worst] for v in kept])
        if spread > p.rsd_max:
            if reruns_used >= p.max_reruns:
                return Step(False, reason=f"{worst} RSD {spread:.1%} > {p.rsd_max:.0%} after {reruns_used} "
                                          "re-run(s)", unstable=True)
            median = statistics.median(v[worst] for v in kept)
            furthest = max(range(n), key=lambda i: abs(kept[i][worst] - median))
            return Step(True, [furthest], f"{worst} RSD {spread:.1%} > {p.rsd_max:.0%}; replacing trial")
    if p.adaptive and n < p.cap:
        wide = {m: half_width_fraction([v[m] for v in kept]) for m in kept[0]}
        too_wide = {m: w for m, w in wide.items() if w > p.ci_fraction}
        if too_wide:
            m, w = max(too_wide.items(), key=lambda kv: kv[1])
            return Step(True, reason=f"{m} CI half-width {w:.1%} > {p.ci_fraction:.0%}")
    return Step(False, reason=f"{n} trial(s) kept")

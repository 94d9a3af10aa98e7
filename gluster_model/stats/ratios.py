"""Ratios of two sets of throughput measurements (B over A) with their intervals and tests, on the log scale.

Throughputs are positive and their noise is proportional to their size, so each comparison is made between
means of logs and reported as a ratio. Two estimators:

- ``welch_ratio``: trials as independent draws (Welch's unequal-variance t, delta method on the ratio of
  means), for trials taken in one session where nothing but the trial differs;
- ``run_ratio``: the run as the unit. Trials of one run share its volume, its baselines and its placement draw,
  so they are not independent draws of a configuration's throughput: the interval comes from the spread of the
  run means where a side has two runs or more, and otherwise from the trials' spread plus a between-run term
  (``between_sd``: the campaign-to-campaign drift the store measured, or a stated floor).

Verdicts on many rows at once use Holm's step-down adjustment (family-wise error), and "the same" is only ever
said by an equivalence test (two one-sided tests, TOST) against a stated margin, never from a test that found
no difference.

References
----------
Welch, B. L. (1947), "The generalization of Student's problem when several different population variances are
involved", *Biometrika* 34(1-2), 28-35.
Satterthwaite, F. E. (1946), "An approximate distribution of estimates of variance components", *Biometrics
Bulletin* 2(6), 110-114.
Holm, S. (1979), "A simple sequentially rejective multiple test procedure", *Scandinavian Journal of Statistics*
6(2), 65-70.
Schuirmann, D. J. (1987), "A comparison of the two one-sided tests procedure and the power approach for
assessing the equivalence of average bioavailability", *J. Pharmacokinetics and Biopharmaceutics* 15(6), 657-680.
Lakens, D. (2017), "Equivalence tests: a practical primer for t tests, correlations, and meta-analyses",
*Social Psychological and Personality Science* 8(4), 355-362.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

ALPHA = 0.05
# A change of 5% either way: what a sweep of a few runs can tell, and what admins call a regression; compare's
# "the same" and the search's "keep the defaults" are shown against it.
EQUIVALENCE_MARGIN = 0.05


@dataclass(frozen=True)
class Comparison:
    """Ratio of means (other / defaults) with its interval and the one-sided p-value that it is above 1."""

    ratio: float
    low: float
    high: float
    p_gain: float


def satterthwaite_df(parts: Sequence[float], dfs: Sequence[float]) -> float:
    """Satterthwaite's degrees of freedom of a sum of independent variance estimates ``parts``, each on its own
    ``dfs`` (inf for one taken as known); where the sum is zero, the degrees of freedom summed."""
    total = sum(parts)
    if total <= 0:
        return float(sum(dfs))
    return total ** 2 / sum(p ** 2 / d for p, d in zip(parts, dfs))


def welch_ratio(defaults: Sequence[float], other: Sequence[float], level: float = 0.95) -> Comparison:
    """Ratio of means (other / defaults) with a Welch interval on the log scale (delta method) and Welch's
    one-sided p-value that ``other`` is larger; the trials are taken as independent draws."""
    import numpy as np
    from scipy import stats

    a, b = np.asarray(defaults, float), np.asarray(other, float)
    ma, mb = float(a.mean()), float(b.mean())
    va = float(a.var(ddof=1)) / len(a) / ma**2 if len(a) > 1 else math.inf
    vb = float(b.var(ddof=1)) / len(b) / mb**2 if len(b) > 1 else math.inf
    se = math.sqrt(va + vb)
    ratio = mb / ma
    if se == 0:
        return Comparison(ratio, ratio, ratio, 0.0 if ratio > 1 else 1.0)
    df = satterthwaite_df((va, vb), (len(a) - 1, len(b) - 1)) if math.isfinite(se) else 1.0
    t = stats.t.ppf(0.5 + level / 2, df)
    log_ratio = math.log(ratio)
    p = float(stats.t.sf(log_ratio / se, df))
    return Comparison(ratio, math.exp(log_ratio - t * se), math.exp(log_ratio + t * se), p)


def holm(pvalues: Mapping[str, float], alpha: float = ALPHA, family: int | None = None) -> set[str]:
    """The hypotheses Holm's step-down procedure rejects at family-wise level ``alpha``, over a family of
    ``family`` tests (default: those given; more when the others were tested too and are known not rejected)."""
    out: set[str] = set()
    ranked = sorted(pvalues.items(), key=lambda kv: kv[1])
    m = max(family or 0, len(ranked))
    for k, (name, p) in enumerate(ranked):
        if p > alpha / (m - k):
            break
        out.add(name)
    return out


def holm_adjusted(pvalues: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: reject hypothesis i at family-wise level a when its adjusted
    p-value is at most a (the same decisions as ``holm`` at every level)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    m = len(pvalues)
    out = [1.0] * m
    running = 0.0
    for k, i in enumerate(order):
        running = max(running, min(1.0, (m - k) * pvalues[i]))
        out[i] = running
    return out


@dataclass(frozen=True)
class RunRatio:
    """B's mean over A's on the log scale, the run as the unit: the ratio, its interval at ``level``, the
    log-scale standard error and degrees of freedom behind it, and how many runs and trials each side had.
    ``basis`` says where the spread came from ("runs": the run means; "trials + between": trials and a stated
    between-run term, where a side had one run)."""

    ratio: float
    low: float
    high: float
    se: float
    df: float
    runs: tuple[int, int]
    trials: tuple[int, int]
    basis: str
    level: float

    def p_below(self, value: float = 1.0) -> float:
        """One-sided p-value of H0: ratio >= value (evidence that B is below ``value`` times A)."""
        return _t_cdf((math.log(self.ratio) - math.log(value)) / self.se, self.df) if self.se > 0 else \
            float(self.ratio >= value)

    def p_above(self, value: float = 1.0) -> float:
        """One-sided p-value of H0: ratio <= value (evidence that B is above ``value`` times A)."""
        return 1.0 - _t_cdf((math.log(self.ratio) - math.log(value)) / self.se, self.df) if self.se > 0 else \
            float(self.ratio <= value)

    def p_changed(self) -> float:
        """Two-sided p-value of H0: ratio = 1."""
        return min(1.0, 2 * min(self.p_below(), self.p_above()))

    def p_equivalent(self, margin: float) -> float:
        """TOST p-value of H0: the ratio lies outside [1 - margin, 1 + margin] (small: shown to be inside)."""
        return max(self.p_above(1.0 - margin), self.p_below(1.0 + margin))

    def interval(self, level: float) -> tuple[float, float]:
        """The interval at another level (e.g. one adjusted for several rows)."""
        from scipy import stats

        if self.se == 0:
            return self.ratio, self.ratio
        half = float(stats.t.ppf(0.5 + level / 2, self.df)) * self.se
        return self.ratio * math.exp(-half), self.ratio * math.exp(half)


def _t_cdf(x: float, df: float) -> float:
    from scipy import stats

    return float(stats.t.cdf(x, df))


def run_ratio(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], level: float = 0.95,
              between_sd: float = 0.0) -> RunRatio:
    """The ratio of B's mean to A's, each given as runs of trials (positive values), with the run as the unit.

    Where both sides have two runs or more, the interval is Welch's on the runs' mean logs (each run one
    observation). Where a side has one run, its variance is the trials' (pooled within its runs) over their
    count plus ``between_sd``² (a run's own shift, which its trials cannot show), and the degrees of freedom are
    Satterthwaite's over the trial parts. A side without two trials in any run and one run only has no spread
    to give: ValueError.
    """
    import numpy as np
    from scipy import stats

    sides = []
    for name, runs in (("A", a), ("B", b)):
        values = [np.asarray(r, float) for r in runs if len(r)]
        if not values or any(not np.all(np.isfinite(x) & (x > 0)) for x in values):
            raise ValueError(f"side {name}: no positive measurements")
        logs = [np.log(x) for x in values]
        sides.append(logs)
    known = 0.0  # variance taken as known (the stated between-run term): no degrees of freedom of its own
    if all(len(s) >= 2 for s in sides):
        means = [np.array([float(x.mean()) for x in s]) for s in sides]
        parts = [float(m.var(ddof=1)) / len(m) for m in means]
        dfs = [len(m) - 1 for m in means]
        basis = "runs"
        centre = [float(m.mean()) for m in means]
    else:
        parts, dfs, centre = [], [], []
        for name, s in zip("AB", sides):
            k = sum(len(x) for x in s)
            dof = sum(len(x) - 1 for x in s)
            if len(s) >= 2:  # this side's runs give their own spread; the other side's does not
                m = np.array([float(x.mean()) for x in s])
                parts.append(float(m.var(ddof=1)) / len(m))
                dfs.append(len(s) - 1)
            else:
                if dof < 1:
                    raise ValueError(f"side {name}: one run of one trial has no spread to judge a change by")
                parts.append(float(((s[0] - s[0].mean()) ** 2).sum()) / dof / k)
                dfs.append(dof)
                known += between_sd ** 2
            centre.append(float(np.mean([x.mean() for x in s])))
        basis = "trials + between"
    estimated = sum(parts)
    var = estimated + known
    se = math.sqrt(var)
    # Satterthwaite over the estimated parts; the known part only widens the standard error
    df = var ** 2 / sum(p ** 2 / d for p, d in zip(parts, dfs)) if estimated > 0 else float(sum(dfs))
    log_ratio = centre[1] - centre[0]
    half = float(stats.t.ppf(0.5 + level / 2, df)) * se
    return RunRatio(math.exp(log_ratio), math.exp(log_ratio - half), math.exp(log_ratio + half), se, df,
                    (len(sides[0]), len(sides[1])), (sum(len(x) for x in sides[0]), sum(len(x) for x in sides[1])),
                    basis, level)

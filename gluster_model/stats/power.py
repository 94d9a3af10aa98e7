"""How large a change two campaigns of one plan can tell apart: the power statement of ``collect --dry-run``.

`glmodel compare` calls a row slower when its ratio is below ``1 - margin`` and the change is significant after
Holm's adjustment over the rows (``compare.verdicts``). Each campaign measures a configuration in one run, so a
side's mean log has the variance ``between² + within² / trials``, ``within`` the trials' log SD inside a run and
``between`` a run's own shift (known: the lab's campaign-to-campaign SD); the log ratio's standard error is the
root of twice that. A true change of log size ``d`` is called when its estimate clears the margin and its t
statistic clears ``t_(1 - alpha / 2 rows)`` (Holm's first step, the strictest: what every row is sure to meet);
as the standard error is itself estimated, the second is a non-central t with the trials' degrees of freedom.
The detectable change is the ``d`` at which both happen with ``power`` (their product: a lower bound, as they go
together). In simulation (tests/unit/test_stats_power.py) the change stated was called in about 80% of repeats,
and 60% of it in under half.

References
----------
Julious, S. A. (2004), "Sample sizes for clinical trials with normal data", *Statistics in Medicine* 23(12),
1921–1986, §3 (sample size for a difference of means on the log scale; the non-central t for an estimated
variance).
Holm, S. (1979), "A simple sequentially rejective multiple test procedure", *Scand. J. Statist.* 6(2), 65–70.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


# A run's own shift that its trials cannot show, where a side measured a configuration once: the lab's measured
# campaign-to-campaign SD (model/bottleneck.py NEW_CAMPAIGN_SD), the least any run drifts.
BETWEEN_RUN_SD = 0.0054
# The trials' log SD inside a run where the store has seen none of the cluster's: the lab's small-file creates
# (3.1%, data/stages_proof) and replicated reads by load (2-3%) measured about this much.
ASSUMED_WITHIN_SD = 0.03


@dataclass(frozen=True)
class Detectable:
    """The least change called with the given power, as a share (0.07: 7% slower), and what it rests on."""

    change: float
    se: float  # of the log ratio
    df: float
    threshold: float  # the log change a row must show to be significant (Holm's first step)


def detectable_change(trials: int, within_sd: float, between_sd: float, rows: int, *,
                      level: float = 0.95, power: float = 0.8, margin: float = 0.05, runs: int = 1) -> Detectable:
    """The smallest slowdown (a share) two campaigns call "slower" in at least ``power`` of repeats, where each
    measured every configuration in one run of ``trials`` trials (two campaigns of one plan), over ``rows``
    compared rows (module docstring); with ``runs`` above 1, each side measured in that many runs (an
    interleaved comparison's looks, judged with the session's drift pooled over the rows), the drift taken at
    ``between_sd`` as known. Not for rows judged by their own few run means: Welch's degrees of freedom scatter
    from draw to draw there, and a fixed figure for them was too optimistic or too cautious in simulation."""
    from scipy import optimize, stats

    if trials < 2 or rows < 1 or runs < 1:
        raise ValueError("one run of one trial a side has no spread to judge a change by; rows must be at least 1")
    se = math.sqrt(2 * (between_sd ** 2 + within_sd ** 2 / trials) / runs)
    df = float(2 * runs * (trials - 1))  # the trials' pooled spread; the between-run term is known, none of its own
    t_crit = float(stats.t.ppf(1 - (1 - level) / rows / 2, df))
    floor = -math.log(1 - margin)

    def called(d: float) -> float:
        """At least the chance a true log change ``d`` is called: past the margin (normal) and significant (a
        non-central t, as the standard error is estimated), taken as independent (a lower bound: they go
        together)."""
        past_margin = float(stats.norm.cdf((d - floor) / se))
        significant = float(stats.nct.sf(t_crit, df, d / se))
        return past_margin * significant

    high = floor + 1.0
    while called(high) < power:
        high *= 2
    d = float(optimize.brentq(lambda x: called(x) - power, 0.0, high, xtol=1e-6))
    return Detectable(1 - math.exp(-d), se, df, t_crit * se)

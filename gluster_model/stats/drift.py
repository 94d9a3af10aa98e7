"""A run's own shift, measured where a session repeats a configuration, and a ratio of two arms that counts it.

Trials of one run share its volume, its baselines and its placement draw; a second run of the same configuration
later in the session lands somewhere else (the lab's small-file creates moved 558 to 464 files/s between looks at
Gluster's defaults). On the log scale a trial is ``mu_config + u_run + e_trial``, ``u`` the run's shift (variance
``between``) and ``e`` the trial's noise. ``session_drift`` estimates ``between`` by the one-way analysis of
variance within configurations (method of moments, pooled over every configuration measured in two runs or
more); ``drift_ratio`` compares two arms (each a list of runs of trials) with the variance of each arm's mean being
``between / runs`` plus its own trials' part, and Satterthwaite's degrees of freedom over the estimated parts.

References
----------
Searle, S. R., Casella, G. and McCulloch, C. E. (1992), *Variance Components*, Wiley, §3.5 (the ANOVA estimator of
the between-group component in the unbalanced one-way model).
Satterthwaite, F. E. (1946), "An approximate distribution of estimates of variance components", *Biometrics
Bulletin* 2(6), 110-114.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .ratios import RunRatio, satterthwaite_df


@dataclass(frozen=True)
class Drift:
    """The between-run variance of a run's mean log (``var``), the degrees of freedom behind it, how many runs
    and configurations gave it, and the floor it was held to (a stated least drift, taken as known)."""

    var: float
    df: float
    runs: int
    configs: int
    floor: float = 0.0

    @property
    def sd(self) -> float:
        return math.sqrt(max(self.var, self.floor ** 2))


def session_drift(configs: Iterable[Sequence[Sequence[float]]], floor: float = 0.0) -> Drift:
    """The between-run variance component of log throughput, each configuration given as its runs of trials.

    Over the configurations with two runs or more: ``(MS_between - MS_within) / n0``, ``MS_between`` the runs'
    weighted spread around their configuration's mean, ``MS_within`` the trials' around their run's, ``n0`` the
    unbalanced design's effective trials a run (Searle et al. 1992, §3.5); clipped at zero, where the runs agree
    as well as their trials would. A session with no configuration measured twice has nothing to say:
    ``var`` 0 and ``df`` 0, so the ``floor`` alone counts.
    """
    import numpy as np

    ss_b = ss_w = 0.0
    df_b = df_w = 0
    runs = configs_used = 0
    n0_num = 0.0
    for config in configs:
        logs = [np.log(np.asarray(r, float)) for r in config if len(r)]
        if len(logs) < 2:
            continue
        n = np.array([len(x) for x in logs], float)
        means = np.array([float(x.mean()) for x in logs])
        grand = float((n * means).sum() / n.sum())
        ss_b += float((n * (means - grand) ** 2).sum())
        ss_w += float(sum(((x - x.mean()) ** 2).sum() for x in logs))
        df_b += len(logs) - 1
        df_w += int(n.sum()) - len(logs)
        n0_num += float(n.sum() - (n ** 2).sum() / n.sum())
        runs += len(logs)
        configs_used += 1
    if df_b == 0 or df_w == 0:
        return Drift(0.0, 0.0, runs, configs_used, floor)
    n0 = n0_num / df_b
    var = max(0.0, (ss_b / df_b - ss_w / df_w) / n0)
    return Drift(var, float(df_b), runs, configs_used, floor)


def drift_ratio(a: Sequence[Sequence[float]], b: Sequence[Sequence[float]], drift: Drift,
                level: float = 0.90) -> RunRatio:
    """B's mean over A's (each an arm's runs of trials, positive values), counting each run's shift.

    An arm's centre is the mean of its runs' mean logs; its variance ``drift / runs`` plus its trials' pooled
    within-run variance times ``sum(1 / n_r) / runs²``. The drift's part carries its own degrees of freedom, or
    none where the floor stands in for it (known); the rest are Satterthwaite's. An arm with no two trials in
    any run has no spread of its own: ValueError.
    """
    import numpy as np
    from scipy import stats

    centres, parts, dfs = [], [], []
    between = 0.0
    for name, runs in (("A", a), ("B", b)):
        logs = [np.log(np.asarray(r, float)) for r in runs if len(r)]
        if not logs or any(not np.all(np.isfinite(x)) for x in logs):
            raise ValueError(f"arm {name}: no positive measurements")
        dof = sum(len(x) - 1 for x in logs)
        if dof < 1:
            raise ValueError(f"arm {name}: no run with two trials, no spread to judge a change by")
        within = float(sum(((x - x.mean()) ** 2).sum() for x in logs)) / dof
        parts.append(within * sum(1 / len(x) for x in logs) / len(logs) ** 2)
        dfs.append(float(dof))
        centres.append(float(np.mean([x.mean() for x in logs])))
        between += 1 / len(logs)
    estimated = drift.var >= drift.floor ** 2 and drift.df > 0 and drift.var > 0
    drift_part = between * drift.sd ** 2
    known = 0.0 if estimated else drift_part
    if estimated:
        parts.append(drift_part)
        dfs.append(drift.df)
    var = sum(parts) + known
    se = math.sqrt(var)
    df = satterthwaite_df(parts, dfs)
    log_ratio = centres[1] - centres[0]
    half = float(stats.t.ppf(0.5 + level / 2, df)) * se
    counts = tuple(len(x) for x in (a, b))
    trials = tuple(sum(len(r) for r in x) for x in (a, b))
    return RunRatio(math.exp(log_ratio), math.exp(log_ratio - half), math.exp(log_ratio + half), se, df,
                    (counts[0], counts[1]), (trials[0], trials[1]), "runs + session drift", level)

"""Prediction intervals for a new group's mean from a few groups measured: the between-group variance estimated
from ``settings`` groups, a within-group share for the mean of the trials asked for, Student's t on
Satterthwaite's degrees of freedom.

References
----------
Geisser, S. (1993), *Predictive Inference: An Introduction*, Chapman & Hall, ch. 2 (the normal prediction
interval for a new observation from n: t with n - 1 degrees of freedom, variance times 1 + 1/n).
Satterthwaite, F. E. (1946), "An approximate distribution of estimates of variance components", *Biometrics
Bulletin* 2(6), 110-114.
"""

from __future__ import annotations

import math

from .ratios import satterthwaite_df


def predictive_half_width(between: float, within: float, settings: float, within_dof: float, level: float) -> float:
    """Half-width (log) of the normal prediction interval for a new setting's mean: the between-setting variance
    estimated from ``settings`` settings (its estimate's own variance, 1/settings of it, added), ``within`` the
    trials' share on ``within_dof`` degrees of freedom (0: taken as known)."""
    from scipy.stats import t

    b = between * (1 + 1 / settings)
    if b + within <= 0:
        return 0.0
    dof = satterthwaite_df((b, within), (settings - 1, within_dof if within_dof > 0 else math.inf))
    return float(t.ppf(0.5 + level / 2, dof)) * math.sqrt(b + within)

"""Run-to-run noise from configurations measured more than once, and how much of a model's residual it explains.

A configuration measured in several runs (the same config hash: the same volume, workload and lab setting)
gives the *pure error*: the spread that no model of these inputs can remove. The rest of a fitted model's
residual is *lack of fit*. The classic test splits the residual sum of squares into the two and compares their
mean squares with an F test (Montgomery et al. 2012, §4.5). Throughput noise is multiplicative, so a log-response
model is judged on log MB/s, a linear one on MB/s; the noise figure is given as a coefficient of variation.

References
----------
Montgomery, D. C., Peck, E. A., Vining, G. G. (2012), *Introduction to Linear Regression Analysis*, 5th ed.,
Wiley, §4.5 (lack of fit of the regression model: pure error from replicates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

# pure error's home is the statistics package; named here too, where the lack-of-fit test and its callers look
from ..stats.pure_error import PureError as PureError, pure_error as pure_error

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class LackOfFit:
    """A fitted model's residual split into pure error and lack of fit, on the scale it was fitted on."""

    model: str
    scale: str  # "log MB/s" or "MB/s"
    pure_ss: float
    pure_df: int
    lof_ss: float
    lof_df: int
    f: float | None
    p: float | None

    @property
    def pure_share(self) -> float:
        """Share of the residual sum of squares that is run-to-run noise."""
        total = self.pure_ss + self.lof_ss
        return self.pure_ss / total if total > 0 else float("nan")

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "pure_share": self.pure_share}


@dataclass(frozen=True)
class Replication:
    """One metric's run-to-run noise and each model's lack-of-fit test."""

    configurations: int
    runs: int
    cv_percent: float  # noise as a coefficient of variation, from the pooled SD of log throughput
    tests: tuple[LackOfFit, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"configurations": self.configurations, "runs": self.runs, "cv_percent": self.cv_percent,
                "tests": [t.to_json() for t in self.tests]}


def noise_cv(y: np.ndarray, groups: np.ndarray) -> float | None:
    """Run-to-run coefficient of variation in %, sqrt(exp(s²) − 1) from the pooled variance s² of log y within
    replicated configurations (lognormal noise); None without replicates."""
    import numpy as np

    pe = pure_error(np.log(y), groups)
    return math.sqrt(math.expm1(pe.ms)) * 100 if pe.df else None


def lack_of_fit(model: str, scale: str, residuals: np.ndarray, df_resid: int, groups: np.ndarray,
                values: np.ndarray) -> LackOfFit | None:
    """Split a model's residual sum of squares (``residuals`` on the fitted scale, ``df_resid`` its degrees of
    freedom) into the pure error of ``values`` (the response on that scale) within ``groups`` and lack of fit;
    F = MS_lof / MS_pe. None without replicates or without degrees of freedom left for lack of fit."""
    import numpy as np
    from scipy.stats import f as f_dist

    pe = pure_error(values, groups)
    if pe.df == 0:
        return None
    lof_ss = max(float(np.sum(np.asarray(residuals, dtype=float) ** 2)) - pe.ss, 0.0)
    lof_df = df_resid - pe.df
    if lof_df <= 0:
        return LackOfFit(model, scale, pe.ss, pe.df, lof_ss, lof_df, None, None)
    f = (lof_ss / lof_df) / pe.ms if pe.ms > 0 else float("inf")
    return LackOfFit(model, scale, pe.ss, pe.df, lof_ss, lof_df, f, float(f_dist.sf(f, lof_df, pe.df)))

"""How close predictions came to measurements: the mean absolute percentage error and the share of
measurements inside their prediction intervals (empirical coverage, a calibration check of the intervals).

References
----------
Hyndman, R. J. and Koehler, A. B. (2006), "Another look at measures of forecast accuracy", *International Journal
of Forecasting* 22(4), 679-688 (MAPE and its limits near zero).
Gneiting, T. and Raftery, A. E. (2007), "Strictly proper scoring rules, prediction, and estimation", *JASA*
102(477), 359-378 (coverage of central intervals).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def percent_error(predicted: float, measured: float) -> float:
    """(predicted - measured) / measured, in percent; NaN where nothing positive was measured."""
    return (predicted - measured) / measured * 100 if measured > 0 else math.nan


def mape(errors_pct: Sequence[float]) -> float | None:
    """Mean absolute percentage error over the finite errors given (percent); None when there is none."""
    finite = [abs(e) for e in errors_pct if math.isfinite(e)]
    return statistics.fmean(finite) if finite else None


def coverage(inside: Sequence[bool]) -> float | None:
    """The share of measurements inside their intervals; None for none."""
    return sum(bool(i) for i in inside) / len(inside) if inside else None

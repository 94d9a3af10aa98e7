"""How well a learner predicts data it did not see.

- ``holdout``: the reference study's check — fit on a seeded random 75 % of the rows, R² on the other 25 %.
  Rows are trials, so repeated trials of one configuration can sit on both sides; it flatters the model.
- ``grouped_cv``: repeated grouped K-fold, a group being one configuration, so a configuration is either
  trained on or predicted, never both: the figure that says how the model does on a configuration not measured.
- ``mape``: mean absolute percentage error, in %.

References
----------
Hastie, T., Tibshirani, R., Friedman, J. (2009), *The Elements of Statistical Learning*, 2nd ed., §7.10
(cross-validation; the "wrong way" when rows are not independent).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .groups import GROUP, group_folds
from .learners import Learner

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def r2(y: np.ndarray, yhat: np.ndarray) -> float:
    """1 − SSE/SST around the mean of ``y`` (can be negative for a model worse than the mean)."""
    import numpy as np

    sst = float(np.sum((y - np.mean(y)) ** 2))
    return 1 - float(np.sum((y - yhat) ** 2)) / sst if sst > 0 else float("nan")


def mape(y: np.ndarray, yhat: np.ndarray) -> float:
    import numpy as np

    return float(np.mean(np.abs((y - yhat) / y)) * 100)


@dataclass(frozen=True)
class Holdout:
    r2: float
    mape: float
    coverage: float  # share of held-out rows inside the prediction interval
    level: float
    n_train: int
    n_test: int

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass(frozen=True)
class CrossValidation:
    r2_mean: float
    r2_sd: float
    mape_mean: float
    mape_sd: float
    folds: int
    repeats: int
    grouped_by: str = "configuration"  # what a fold holds out whole: "configuration" or "hardware setting"
    groups: int = 0  # how many of them there are

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def split_rows(n: int, seed: int, test_size: float = 0.25) -> tuple[np.ndarray, np.ndarray]:
    """A seeded random split of row indices (train, test)."""
    import numpy as np
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(np.arange(n), test_size=test_size, random_state=seed)
    return np.sort(train), np.sort(test)


def holdout(learner: Learner, frame: pd.DataFrame, y: np.ndarray, seed: int = 0, level: float = 0.9,
            test_size: float = 0.25) -> Holdout:
    import numpy as np

    train, test = split_rows(len(frame), seed, test_size)
    fitted = learner.fit(frame.iloc[train], y[train], True)
    yhat = fitted.predict(frame.iloc[test])
    lo, hi = fitted.interval(frame.iloc[test], level)
    inside = float(np.mean((y[test] >= lo) & (y[test] <= hi)))
    return Holdout(r2(y[test], yhat), mape(y[test], yhat), inside, level, len(train), len(test))




def grouped_cv(learner: Learner, frame: pd.DataFrame, y: np.ndarray, seed: int = 0, k: int = 5,
               repeats: int = 5, groups: np.ndarray | None = None,
               grouped_by: str = "configuration",
               splits: dict[tuple[int, int], tuple[pd.DataFrame, pd.DataFrame]] | None = None) -> CrossValidation | None:
    """Pooled out-of-fold R² and MAPE per repeat, mean ± sd over repeats; None with fewer than 3 groups.

    A fold holds out whole groups: ``groups`` when given (e.g. hardware settings, see ``cv_groups``), else
    configurations, so repeated trials of one configuration never sit on both sides. ``splits``, when given,
    keeps each fold's (train, test) frames for the next learner judged on the same splits (slicing a frame
    costs more than fitting a linear model on it).
    """
    import numpy as np

    if groups is None:
        groups = frame[GROUP].to_numpy() if GROUP in frame else np.arange(len(frame))
    n_groups = len(np.unique(groups))
    k = min(k, n_groups)
    if k < 3:
        return None
    r2s, mapes = [], []
    for rep in range(repeats):
        oof = np.full(len(y), np.nan)
        folds = group_folds(groups, k, seed + rep)
        for i in range(k):
            test = folds == i
            if splits is None or (seed + rep, i) not in splits:
                parts = (frame[~test], frame[test])
                if splits is not None:
                    splits[(seed + rep, i)] = parts
            else:
                parts = splits[(seed + rep, i)]
            oof[test] = learner.fit(parts[0], y[~test], False).predict(parts[1])
        r2s.append(r2(y, oof))
        mapes.append(mape(y, oof))
    return CrossValidation(statistics.fmean(r2s), _sd(r2s), statistics.fmean(mapes), _sd(mapes), k, repeats,
                           grouped_by, n_groups)


def _sd(values: list[float]) -> float:
    """The SD over repeats; NaN where a repeat's figure is not finite (a model whose out-of-fold prediction
    overflowed, such as a log-response line extrapolated far: its R² is -inf, and its spread is not a number)."""
    if not all(math.isfinite(v) for v in values):
        return float("nan")
    return statistics.stdev(values) if len(values) > 1 else 0.0

"""How many runs does a design need? Measured by subsampling a full grid.

Given a dataset over a full factorial grid, draw many random subsets of ``n`` configurations, fit the study's MLR
on each, and judge it against what the whole grid says:

* **accuracy out of sample** — the subset's model on every configuration it did not see (the rest of the grid
  stands in for the configurations a user will ask about), as R² = 1 − MSE(left out) / Var(whole grid). The
  whole grid's variance, not the left-out rows' own, is the denominator: the left-out set shrinks as ``n`` grows,
  and its own variance would make the figure noisiest exactly where it should settle;
* **the ranking** — whether the subset's top-ranked predictor is the whole grid's, and the Spearman correlation of
  the subset's importance (VI) with the whole grid's.

The runs a design needs is the smallest ``n`` from which the median held-out R² stays within ``tolerance`` of the
whole grid's grouped cross-validated R² and the top predictor is recovered in at least ``top_share`` of the
subsets, at every larger ``n`` tried as well.

Importance here is the analytic VI of an additive linear model (squared standardized contributions, normalized):
for the MLR it equals the first-order Sobol' index that ``glmodel fit`` estimates, without the sampling noise, so
the differences between subsets are the model's, not the estimator's. Variances are taken over the whole grid so
that two subsets differ only through their coefficients.

References
----------
Montgomery, D. C. (2017), *Design and Analysis of Experiments*, 9th ed., Wiley — ch. 6 and 8 (full and
fractional factorials: what a subset of the grid can estimate).
Efron, B., Tibshirani, R. (1993), *An Introduction to the Bootstrap*, Chapman & Hall — ch. 17 (judging a model
on data left out of its fit).
Saltelli, A. et al. (2008), *Global Sensitivity Analysis: The Primer*, Wiley — sec. 1.2.3 (standardized regression
coefficients as first-order indices of a linear model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..dataset import FAMILIES
from ..design.registry import STRATEGIES, Strategy, order
from .features import design_matrix, main_effect_terms, schema_from_frame, with_derived
from .fit import FitError, rows_for
from .groups import GROUP
from .importance import additive_vi
from .learners import mlr
from .linear import LinearModel
from .validate import grouped_cv

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class SizePoint:
    """What subsets of ``n`` configurations achieved."""

    n: int
    subsets: int  # subsets drawn
    fitted: int  # subsets where the MLR could be fitted (every feature varied, enough rows)
    r2_median: float  # held-out R² over the fitted subsets
    r2_p10: float  # its 10th percentile: a bad draw
    top_share: float  # share of fitted subsets whose top predictor is the whole grid's
    rank_corr: float  # mean Spearman correlation of VI with the whole grid's

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass(frozen=True)
class DesignSize:
    """The subsampling curve of one metric and the runs it says a design needs."""

    metric: str
    family: str
    configs: int  # configurations in the whole grid
    features: list[str]
    full_vi: dict[str, float]  # the whole grid's MLR importance
    full_cv_r2: float  # the whole grid's grouped 5-fold CV R² of the MLR
    points: list[SizePoint]
    needed: int | None  # None: no size tried met the criterion
    tolerance: float
    top_share: float
    strategy: str = "random"

    @property
    def top(self) -> str:
        return max(self.full_vi, key=lambda f: self.full_vi[f])

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "family": self.family, "configs": self.configs, "features": self.features,
                "full_vi": self.full_vi, "full_cv_r2": self.full_cv_r2, "top": self.top,
                "points": [p.to_json() for p in self.points], "needed": self.needed, "strategy": self.strategy,
                "runs_needed": self.needed,
                "criterion": {"tolerance": self.tolerance, "top_share": self.top_share}}


def default_sizes(configs: int, n_params: int) -> list[int]:
    """From just enough to fit the MLR (parameters + 2) to three quarters of the grid, ~1.4x apart."""
    lo, hi = n_params + 2, max(n_params + 2, configs - max(configs // 4, 4))
    sizes, n = [], float(lo)
    while n < hi:
        sizes.append(int(round(n)))
        n *= 1.4
    sizes.append(hi)
    return sorted(set(sizes))


def _vi(model: LinearModel, frame: pd.DataFrame, names: Sequence[str]) -> dict[str, float]:
    got = additive_vi(model, frame, names)
    return {f: got.get(f, 0.0) for f in names}


def _spearman(a: Sequence[float], b: Sequence[float]) -> float:
    from scipy.stats import spearmanr

    if len(set(a)) < 2 or len(set(b)) < 2:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def design_size(frame: pd.DataFrame, metric: str, family: str = "hardware", *, sizes: Sequence[int] | None = None,
                subsets: int = 50, seed: int = 0, tolerance: float = 0.05, top_share: float = 0.9,
                strategy: Strategy = "random", batch: int = 4) -> DesignSize:
    """Choose ``frame``'s configurations at each size by ``strategy`` and judge the MLR fitted on each design.

    Parameters
    ----------
    frame : the trial table (``glmodel export``) of a full grid; trials of one configuration stay together.
    metric : the throughput column to model.
    family : feature family, as for ``glmodel fit``.
    sizes : numbers of configurations to try (default: :func:`default_sizes`).
    subsets : designs drawn per size (for ``random`` a random subset; for the others a seeded run of the
        strategy, so the curve's median is over that many seeds).
    tolerance, top_share : the criterion for the runs needed (module docstring).
    strategy : how designs are chosen (:mod:`.choose`); ``adaptive`` reads the grid's measurements as an oracle.
    batch : runs the adaptive strategy adds between refits.

    Raises
    ------
    FitError
        When the data cannot be fitted at all, or a size is outside what the grid allows.
    """
    import numpy as np

    if family not in FAMILIES:
        raise FitError(f"--family: unknown family {family!r}; choose from {', '.join(FAMILIES)}")
    rows = with_derived(rows_for(frame, metric), metric)
    schema = schema_from_frame(rows, FAMILIES[family], metric)
    if not schema.features:
        raise FitError(f"metric {metric}: no feature of the {family} family varies in the data")
    learner = mlr(schema)
    y = rows[metric].to_numpy(dtype=float)
    full = learner.fit(rows, y, False)
    assert isinstance(full, LinearModel)
    names = list(schema.names)
    full_vi = _vi(full, rows, names)
    cv = grouped_cv(learner, rows, y, seed)
    full_cv = cv.r2_mean if cv is not None else float("nan")

    groups = rows[GROUP].to_numpy()
    uniq = np.unique(groups)
    sizes = sorted(set(sizes)) if sizes else default_sizes(len(uniq), full.n_params)
    bad = [n for n in sizes if not 2 <= n < len(uniq)]
    if bad:
        raise FitError(f"--sizes: {', '.join(map(str, bad))} out of range; the data have {len(uniq)} "
                       f"configuration(s) and a size must leave at least one out (2..{len(uniq) - 1})")
    top = max(full_vi, key=lambda f: full_vi[f])
    variance = float(np.var(y))
    # The candidates a strategy chooses among: one row per configuration, as the MLR's inputs, and (for the
    # adaptive strategy's oracle) the configuration's mean measurement.
    first = rows.groupby(GROUP, sort=True).head(1).set_index(GROUP).loc[uniq]
    x = design_matrix(first, main_effect_terms(schema))
    means = rows.groupby(GROUP)[metric].mean().loc[uniq].to_numpy(dtype=float)
    rng = np.random.default_rng(seed)
    largest = max(sizes)
    per_size: dict[int, tuple[list[float], list[bool], list[float]]] = {n: ([], [], []) for n in sizes}
    for _ in range(subsets):
        # Every strategy but LHS is nested (its first n are its design of size n); an LHS is drawn per size.
        nested = order(strategy, x, largest, rng, lambda idx: means[idx], batch=batch) if strategy != "lhs" \
            else None
        for n in sizes:
            chosen = nested[:n] if nested is not None else order("lhs", x, n, rng)
            pick = np.isin(groups, uniq[chosen])
            train, test = rows[pick].reset_index(drop=True), rows[~pick].reset_index(drop=True)
            # A subset where a feature does not vary cannot estimate it: that draw failed, as such a design would.
            if len(schema_from_frame(train, FAMILIES[family], metric).features) < len(schema.features):
                continue
            try:
                model = learner.fit(train, y[pick], False)
            except (ValueError, np.linalg.LinAlgError):
                continue
            assert isinstance(model, LinearModel)
            if model.df_resid < 1:
                continue
            scores, tops, corrs = per_size[n]
            scores.append(1.0 - float(np.mean((y[~pick] - model.predict(test)) ** 2)) / variance)
            vi = _vi(model, rows, names)
            tops.append(max(vi, key=lambda f: vi[f]) == top)
            corrs.append(_spearman([vi[f] for f in names], [full_vi[f] for f in names]))
    nan = float("nan")
    points = []
    for n in sizes:
        scores, tops, corrs = per_size[n]
        points.append(SizePoint(
            n, subsets, len(scores), float(np.median(scores)) if scores else nan,
            float(np.quantile(scores, 0.1)) if scores else nan, float(np.mean(tops)) if tops else nan,
            float(np.nanmean(corrs)) if corrs and not np.all(np.isnan(corrs)) else nan))
    return DesignSize(metric, family, len(uniq), names, full_vi, full_cv, points,
                      runs_needed(points, full_cv, tolerance, top_share), tolerance, top_share, strategy)



def runs_needed(points: Sequence[SizePoint], target_r2: float, tolerance: float, top_share: float) -> int | None:
    """Smallest size from which every size tried meets the criterion (module docstring)."""
    def ok(p: SizePoint) -> bool:
        # Most subsets must have been fittable too: a size where half the draws cannot be fitted is not enough.
        return (p.fitted >= 0.9 * p.subsets and p.r2_median >= target_r2 - tolerance
                and p.top_share >= top_share)
    needed = None
    for p in reversed(sorted(points, key=lambda p: p.n)):
        if not ok(p):
            break
        needed = p.n
    return needed


def compare(frame: pd.DataFrame, metrics: Sequence[str], family: str = "hardware", *,
            strategies: Sequence[Strategy] = STRATEGIES, sizes: Sequence[int] | None = None, subsets: int = 50,
            seed: int = 0, tolerance: float = 0.05, top_share: float = 0.9) -> list[DesignSize]:
    """``design_size`` for every metric and strategy, side by side."""
    return [design_size(frame, m, family, sizes=sizes, subsets=subsets, seed=seed, tolerance=tolerance,
                        top_share=top_share, strategy=s) for m in metrics for s in strategies]


def curve_frame(results: Sequence[DesignSize]) -> pd.DataFrame:
    """The curves as one table: a row per metric, strategy and size."""
    import pandas as pd

    return pd.DataFrame([{"metric": r.metric, "strategy": r.strategy, **p.to_json(), "full_cv_r2": r.full_cv_r2,
                          "top": r.top} for r in results for p in r.points])

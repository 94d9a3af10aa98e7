"""Predictor importance as the reference study defines it, on a fitted model.

First-order index S_i = V(E[Ŷ|X_i]) / V(Ŷ), normalized VI_i = S_i / Σ_j S_j, estimated with SALib's Saltelli/
Jansen estimators. Each feature is one factor, whatever its encoding (a categorical's dummies move together).
Inputs are drawn from their measured marginals (the empirical distribution of each feature in the training
rows), independently except for the volume's shape, which is drawn conditionally on the servers so that every
sample is a volume that can be built (``buildable``); the indices describe the model over what was measured. Also reported: the raw S_i and
their sum (1 for an additive model; less means interactions), total-order indices S_Ti, SALib's Monte-Carlo
confidence half-widths, and bootstrap intervals of VI from refitting on configurations resampled with
replacement — correlated or unbalanced designs make a single normalized figure misleading.

References
----------
Sobol', I. M. (2001), "Global sensitivity indices for nonlinear mathematical models and their Monte Carlo
estimates", *Math. Comput. Simul.* 55, 271–280.
Saltelli, A. et al. (2010), "Variance based sensitivity analysis of model output. Design and estimator for the
total sensitivity index", *Comput. Phys. Commun.* 181, 259–270.
Herman, J., Usher, W. (2017), "SALib: An open-source Python library for sensitivity analysis", *JOSS* 2(9).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import GlmodelError
from .buildable import DEPENDENT, allowed
from .features import Feature, Schema, design_matrix, numbers, strings
from .groups import group_resamples

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .linear import LinearModel

Predict = Callable[["pd.DataFrame"], "np.ndarray"]


class NotFinite(ValueError):
    """A model's predictions over the Sobol' sample are not all finite: its indices are undefined."""


@dataclass(frozen=True)
class Importance:
    feature: str
    s1: float
    s1_conf: float
    st: float
    st_conf: float
    vi: float  # S1 / Σ S1 (negative estimates counted as 0)
    vi_low: float | None = None  # bootstrap interval of vi
    vi_high: float | None = None
    analytic_vi: float | None = None  # additive linear models: b²·Var(x) normalized

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def base_row(frame: pd.DataFrame) -> pd.DataFrame:
    """One typical row: the median of numeric columns, the most frequent value of the others."""
    import pandas as pd

    row: dict[str, Any] = {}
    for col in frame.columns:
        s = frame[col].dropna()
        if s.empty:
            row[col] = None
        elif pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            row[col] = float(s.median())
        else:
            row[col] = s.mode().iloc[0]
    return pd.DataFrame([row])


@dataclass(frozen=True)
class Marginals:
    """The measured distribution of each feature (sorted values), and a typical row for the other columns."""

    base: pd.DataFrame
    sorted: dict[str, np.ndarray]


def marginals(frame: pd.DataFrame, schema: Schema) -> Marginals:
    import numpy as np

    out: dict[str, np.ndarray] = {}
    for f in schema.features:
        if f.kind == "categorical":
            index = {lv: i for i, lv in enumerate(f.levels)}
            out[f.name] = np.sort(np.array([index[v] for v in strings(frame, f.name)], dtype=int))
        else:
            out[f.name] = np.sort(numbers(frame, f.name))
    return Marginals(base_row(frame), out)


def _quantile(values: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse empirical CDF (numpy's "inverted_cdf"): the smallest sorted value whose CDF reaches u."""
    import numpy as np

    out: np.ndarray = values[np.clip(np.ceil(u * len(values)).astype(int) - 1, 0, len(values) - 1)]
    return out


def _levels(values: np.ndarray, f: Feature) -> np.ndarray:
    import numpy as np

    if f.kind == "categorical":
        out: np.ndarray = np.asarray(f.levels, dtype=object)[values]
        return out
    return values.astype(bool) if f.kind == "bool" else values


def from_unit(u: np.ndarray, frame: pd.DataFrame | Marginals, schema: Schema) -> pd.DataFrame:
    """Map points of [0,1)^d onto the features' measured marginals; other columns take their typical value.

    Independent inputs take the u-quantile of their measured values. The volume's shape (layout, replica,
    disperse; ``buildable.DEPENDENT``) is drawn conditionally, in that order: the u-quantile of the measured
    values compatible with the row's servers and the shape drawn so far, so no sample is a volume that cannot
    be built (replica 3 on 2 servers), and each input keeps its own coordinate of the Saltelli design.
    """
    m = frame if isinstance(frame, Marginals) else marginals(frame, schema)
    out = m.base.loc[[0] * len(u)].reset_index(drop=True)
    for j, f in enumerate(schema.features):
        out[f.name] = _levels(_quantile(m.sorted[f.name], u[:, j]), f)
    column = {f.name: j for j, f in enumerate(schema.features)}
    dependent = [f for name in DEPENDENT for f in schema.features if f.name == name]
    for i, f in enumerate(dependent):
        levels = _levels(m.sorted[f.name], f)
        later = {g.name: _levels(m.sorted[g.name], g) for g in dependent[i + 1:]}
        # Condition on inputs drawn (or servers, constant when not drawn); a shape column that is not an input
        # holds only the typical row's value, which says nothing about this row.
        given = [c for c in ("servers", *DEPENDENT)
                 if c in out and c != f.name and c not in later and (c in column or c == "servers")]
        if not given:
            continue
        picked = out[f.name].to_numpy(dtype=object)
        for key, rows in out.groupby(given, dropna=False, sort=False).indices.items():
            fixed = dict(zip(given, key if isinstance(key, tuple) else (key,)))
            mask = allowed(f.name, levels, fixed, later)
            if mask.any() and not mask.all():
                picked[rows] = _quantile(levels[mask], u[rows, column[f.name]])
        out[f.name] = picked if f.kind == "categorical" else picked.astype(float)
    return out


def sobol_sample(frame: pd.DataFrame | Marginals, schema: Schema, n: int = 1024, seed: int = 0) -> pd.DataFrame:
    """The Saltelli design of ``sobol_indices`` (n rounded up to a power of two) mapped onto the features'
    measured marginals: n·(d+2) rows, in the order SALib's analysis expects."""
    import numpy as np

    n = 1 << max(int(np.ceil(np.log2(max(n, 2)))), 1)
    return from_unit(_unit_sample(len(schema.features), n, seed), frame, schema)


def sobol_indices(predict: Predict, frame: pd.DataFrame | Marginals, schema: Schema, n: int = 1024,
                  seed: int = 0, confidence: bool = True, sample: pd.DataFrame | None = None) -> list[Importance]:
    """First- and total-order Sobol' indices of ``predict`` over the schema's features (n: base samples,
    rounded up to a power of two; n·(d+2) model evaluations). Without ``confidence`` SALib's own bootstrap of
    the indices is skipped (its intervals are then not meaningful): the refits of ``bootstrap_vi`` need only
    the point values, and SALib's resamples per call were a third of a fit's time. ``sample``: the
    ``sobol_sample`` of the same frame, schema, n and seed, when the caller already has it."""
    import numpy as np
    from SALib.analyze import sobol as analyze

    d = len(schema.features)
    if d == 0:
        return []
    problem = {"num_vars": d, "names": schema.names, "bounds": [[0.0, 1.0]] * d}
    with np.errstate(over="ignore", invalid="ignore"):  # said below, once, not as numpy's warnings
        y = np.asarray(predict(sample if sample is not None else sobol_sample(frame, schema, n, seed)), dtype=float)
    if not np.isfinite(y).all():
        # A log-scale model refitted on a few settings can carry coefficients whose exp overflows somewhere in the
        # measured ranges. Read as indices, its NaN variance once gave every input a VI of 0.
        raise NotFinite(f"{int(np.sum(~np.isfinite(y)))} of {y.size} predictions over the sample are not finite")
    if np.var(y) == 0:
        return [Importance(f, 0.0, 0.0, 0.0, 0.0, 0.0) for f in schema.names]
    if confidence:
        # SALib takes a seed of 0 as none (its resamples then follow the global RNG, and differ run to run).
        # Its default 100 resamples: the S1/ST widths are shown beside the VI's bootstrap interval, not used.
        res = analyze.analyze(problem, y, calc_second_order=False, num_resamples=100, conf_level=0.95,
                              seed=seed + 1)
    else:
        res = _point_indices(y, d)
    s1 = np.asarray(res["S1"], dtype=float)
    pos = np.clip(s1, 0, None)
    total = pos.sum()
    return [Importance(name, float(s1[i]), float(res["S1_conf"][i]), float(res["ST"][i]), float(res["ST_conf"][i]),
                       float(pos[i] / total) if total > 0 else 0.0) for i, name in enumerate(schema.names)]


def _point_indices(y: np.ndarray, d: int) -> dict[str, np.ndarray]:
    """SALib's S1 and ST point estimates (Saltelli et al. 2010) for all d inputs in one call, without its
    resampling loop: the same normalisation and estimators as ``SALib.analyze.sobol.analyze``, whose per-input
    loop and resamples cost 9 ms a call, most of a bootstrap refit. Confidence widths are 0 (not estimated).

    References
    ----------
    Saltelli, A. et al. (2010), "Variance based sensitivity analysis of model output. Design and estimator for
    the total sensitivity index", *Computer Physics Communications* 181, 259–270.
    """
    import numpy as np
    from SALib.analyze.sobol import first_order, separate_output_values, total_order

    z = (y - y.mean()) / y.std()
    a, b, ab, _ = separate_output_values(z, d, len(z) // (d + 2), False)
    a, b = np.broadcast_to(a[:, None], ab.shape), np.broadcast_to(b[:, None], ab.shape)  # one column per input
    zeros = np.zeros(d)
    return {"S1": first_order(a, ab, b), "ST": total_order(a, ab, b), "S1_conf": zeros, "ST_conf": zeros}


@functools.lru_cache(maxsize=16)
def _unit_sample(d: int, n: int, seed: int) -> np.ndarray:
    """SALib's Sobol' sample on the unit cube (n·(d+2) rows), kept: the bootstrap's refits all use one."""
    from SALib.sample import sobol as sample

    problem = {"num_vars": d, "names": [f"x{i}" for i in range(d)], "bounds": [[0.0, 1.0]] * d}
    u: np.ndarray = sample.sample(problem, n, calc_second_order=False, seed=seed)
    u.flags.writeable = False
    return u


def analytic_additive(frame: pd.DataFrame, names: Sequence[str],
                      columns: Callable[[pd.DataFrame, str], np.ndarray]) -> dict[str, float]:
    """VI of an additive model with independent inputs: Var(feature's contribution), normalized.

    ``columns(frame, feature)`` gives the feature's contribution to the linear predictor per row; for one numeric
    term it is b·x, so VI_i = b_i²·Var(x_i) / Σ_j b_j²·Var(x_j) — the squared standardized coefficients,
    normalized.
    """
    import numpy as np

    var = {f: float(np.var(columns(frame, f))) for f in names}
    total = sum(var.values())
    return {f: v / total if total > 0 else 0.0 for f, v in var.items()}


def additive_vi(model: LinearModel, frame: pd.DataFrame, names: Sequence[str]) -> dict[str, float]:
    """:func:`analytic_additive` for a fitted linear model: each feature's contribution is its terms times their
    coefficients (its dummies together for a categorical), with variances taken over ``frame``."""
    import numpy as np

    coef = dict(zip([model.terms[j] for j in model.kept], model.params[1:]))

    def contribution(rows: pd.DataFrame, feature: str) -> np.ndarray:
        terms = [t for t in coef if t.feature == feature]
        if not terms:
            return np.zeros(len(rows))
        out: np.ndarray = design_matrix(rows, terms) @ np.array([coef[t] for t in terms])
        return out
    return analytic_additive(frame, names, contribution)


def bootstrap_vi(refit_predict: Callable[[np.ndarray], Predict], frame: pd.DataFrame, schema: Schema,
                 groups: np.ndarray, rounds: int = 30, n: int = 256, seed: int = 0,
                 level: float = 0.95, point: dict[str, float] | None = None) -> dict[str, tuple[float, float]]:
    """Intervals of VI over refits on configurations drawn with replacement.

    ``refit_predict(rows)`` refits the model on those row indices and returns its predict function. With
    ``point`` (the full-data VI), bias-corrected percentile intervals (Efron and Tibshirani 1993, §14.3): the
    quantiles are shifted by z0 = Φ⁻¹(share of refits below the point), so a point estimate the refits sit on
    one side of (a VI near 0) still lies inside its own interval; plain percentiles without it.

    References
    ----------
    Efron, B., Tibshirani, R. J. (1993), *An Introduction to the Bootstrap*, Chapman & Hall, §14.3.
    """
    import numpy as np

    draws: dict[str, list[float]] = {f: [] for f in schema.names}
    # One Sobol' sample for every refit (common random numbers): the spread left is the refits', not the
    # sampling's, and the sample is drawn and mapped once.
    sample = sobol_sample(marginals(frame, schema), schema, n, seed + 1)
    for rows in group_resamples(groups, rounds, seed):
        # a refit that fails, or whose predictions overflow (NotFinite), is no draw of VI; so is one the model
        # cannot be fitted on (a stat's round-trip stage on a resample that drew none of the delay settings)
        try:
            predict = refit_predict(rows)
            imps = sobol_indices(predict, frame, schema, n=n, seed=seed + 1, confidence=False, sample=sample)
        except (ValueError, np.linalg.LinAlgError, GlmodelError):
            continue
        for imp in imps:
            draws[imp.feature].append(imp.vi)
    alpha = (1 - level) / 2
    out: dict[str, tuple[float, float]] = {}
    for f, v in draws.items():
        if not v:
            continue
        lo_q, hi_q = alpha, 1 - alpha
        if point is not None and f in point:
            from scipy.stats import norm

            b = len(v)
            # The share below the point, kept off 0 and 1 so z0 stays finite: with B refits |z0| < Φ⁻¹(B/(B+1)),
            # below the z of any level used here, so the interval always holds the point.
            share = min(max((np.sum(np.asarray(v) < point[f]) + 0.5 * np.sum(np.asarray(v) == point[f])) / b,
                            1 / (b + 1)), b / (b + 1))
            z0, z = float(norm.ppf(share)), float(norm.ppf(1 - alpha))
            lo_q, hi_q = float(norm.cdf(2 * z0 - z)), float(norm.cdf(2 * z0 + z))
        lo, hi = float(np.quantile(v, lo_q)), float(np.quantile(v, hi_q))
        if point is not None and f in point:  # quantile interpolation can still fall a hair short
            lo, hi = min(lo, point[f]), max(hi, point[f])
        out[f] = (lo, hi)
    return out


def with_intervals(imps: Sequence[Importance], ci: dict[str, tuple[float, float]],
                   analytic: dict[str, float] | None = None) -> list[Importance]:
    from dataclasses import replace

    return [replace(i, vi_low=ci.get(i.feature, (None, None))[0], vi_high=ci.get(i.feature, (None, None))[1],
                    analytic_vi=(analytic or {}).get(i.feature)) for i in imps]

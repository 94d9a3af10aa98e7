"""Linear models on a design matrix: the study's multiple linear regression and its log-response variant.

Fitting uses statsmodels OLS (coefficient table, diagnostics); a fitted model keeps only numpy arrays
(parameters, their covariance, residual variance), so predictions and intervals need neither statsmodels nor a
pickle to load.

References
----------
Montgomery, D. C., Peck, E. A., Vining, G. G. (2012), *Introduction to Linear Regression Analysis*, 5th ed.,
Wiley: §3.3.5 (adjusted R²), §3.5 (prediction interval on a new observation), §3.9 (standardized coefficients).
Duan, N. (1983), "Smearing estimate: a nonparametric retransformation method", *JASA* 78(383), 605–610.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .features import Columns, Term, design_matrix, n_rows
from .bottleneck import lookup, raw_binding
from .physics import STAGES

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


def adjusted_r2(r2: float, n: int, k: int) -> float:
    """1 − (n−1)/(n−k−1)·(1−R²), k regressors besides the intercept; NaN when n−k−1 ≤ 0."""
    return 1 - (n - 1) / (n - k - 1) * (1 - r2) if n - k - 1 > 0 else float("nan")


def independent_columns(x: np.ndarray, tol: float = 1e-10) -> list[int]:
    """Columns of ``x`` that add rank beyond an intercept and the columns kept before them (aliased ones go).

    Works on the correlation-scale Gram matrix (p × p), so the cost is one pass over the rows whatever the
    number of columns; the units of a column (bytes vs Gbit/s) do not matter. A column is aliased when less than
    ``tol`` of its (unit) variance is left after projecting it on the kept ones.
    """
    import numpy as np

    if x.shape[1] == 0 or x.shape[0] == 0:
        return []
    centred = x - x.mean(axis=0)
    norms = np.sqrt(np.einsum("ij,ij->j", centred, centred))
    ok = np.isfinite(norms) & (norms > 0)
    scaled = centred[:, ok] / norms[ok]
    gram = scaled.T @ scaled
    index = np.flatnonzero(ok)
    kept_local: list[int] = []
    for j in range(len(index)):
        if kept_local:
            g = gram[np.ix_(kept_local, kept_local)]
            b = gram[kept_local, j]
            left = gram[j, j] - b @ np.linalg.solve(g, b)
        else:
            left = gram[j, j]
        if left > tol:
            kept_local.append(j)
    return [int(index[j]) for j in kept_local]


@dataclass
class LinearModel:
    """A fitted linear model: ŷ = b0 + Σ b_j x_j on the kept terms (log response: exp(ŷ) × smearing)."""

    name: str
    terms: list[Term]
    kept: list[int]
    params: np.ndarray  # intercept first, then one per kept term
    cov: np.ndarray  # covariance of params
    sigma2: float
    df_resid: int
    response: Literal["identity", "log"] = "identity"
    smearing: float = 1.0
    aliased: list[str] = field(default_factory=list)
    # Conformal log-residual quantiles over hardware settings, per stage that limits a row (model/bottleneck.py
    # explains why): when set, they give the prediction interval in place of the t-interval.
    conformal: dict[str, dict[str, float]] = field(default_factory=dict)
    metric: str = ""  # the metric whose stages ``conformal`` is keyed by

    @property
    def n_params(self) -> int:
        return len(self.params)

    def labels(self) -> list[str]:
        return ["const", *[self.terms[j].label(self.terms) for j in self.kept]]

    def _x(self, frame: Columns) -> np.ndarray:
        import numpy as np

        x = design_matrix(frame, self.terms)[:, self.kept]
        return np.column_stack([np.ones(n_rows(frame)), x])

    def linear_predictor(self, frame: Columns) -> np.ndarray:
        out: np.ndarray = self._x(frame) @ self.params
        return out

    def predict(self, frame: Columns) -> np.ndarray:
        import numpy as np

        eta = self.linear_predictor(frame)
        return np.exp(eta) * self.smearing if self.response == "log" else eta

    def interval(self, frame: Columns, level: float = 0.9, trials: float = 1, new_campaign: bool = False
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Prediction interval for a new observation: ŷ ± t·sqrt(σ² + x'Cx) (on the log scale, then exp). With
        conformal quantiles (``with_stage_intervals``), for the mean of ``trials`` trials (model/bottleneck.py);
        σ² mixes the trials' noise with the model's error, so the t-interval keeps one trial's width."""
        import numpy as np
        from scipy.special import stdtrit

        if self.conformal and self.response == "log":
            yhat = self.predict(frame)
            q = np.array([lookup(self.conformal, STAGES[s], level, trials)
                          for s in raw_binding(frame, self.metric)])
            return yhat * np.exp(-q), yhat * np.exp(q)
        x = self._x(frame)
        eta = x @ self.params
        se = np.sqrt(self.sigma2 + np.einsum("ij,jk,ik->i", x, self.cov, x))
        t = float(stdtrit(max(self.df_resid, 1), 0.5 + level / 2))
        lo, hi = eta - t * se, eta + t * se
        return (np.exp(lo), np.exp(hi)) if self.response == "log" else (lo, hi)

    def difference(self, frame: Columns, level: float = 0.9, observed: bool = False, refits: int = 0,
                   trials: float = 1, new_campaign: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each row's expected throughput minus row 0's, with a confidence interval for that difference.

        The interval comes from the coefficients' covariance (a contrast, so what the two rows share cancels),
        not from the two rows' own intervals. Identity response: d = (x_i − x_0)'b, var = (x_i − x_0)'C(x_i − x_0).
        Log response (μ = s·exp(x'b)): the delta method, gradient g = s·(exp(η_i)x_i − exp(η_0)x_0), var = g'Cg
        (Montgomery et al. §3.4; the smearing factor's own error is left out).

        With ``observed`` the interval is for the difference of one new measurement of each row instead (a
        prediction interval for a measured change): each measurement's own noise is added, σ² on the MB/s
        scale, or the log-normal variance μ²(exp(σ²) − 1) for a log response. The confidence interval says
        whether the change is real; this one says where a benchmark of the two will land. ``refits`` is not
        used: the covariance gives the interval; nor is ``trials`` (σ² holds the model's lack of fit beside the
        trials' noise, so dividing it by the trials would understate the change's spread).
        """
        import numpy as np
        from scipy.special import stdtrit

        x = self._x(frame)
        eta = x @ self.params
        if self.response == "log":
            mu = np.exp(eta) * self.smearing
            grad = mu[:, None] * x - mu[0] * x[0]
        else:
            mu = eta
            grad = x - x[0]
        d = mu - mu[0]
        var = np.maximum(np.einsum("ij,jk,ik->i", grad, self.cov, grad), 0.0)
        if observed:
            noise = np.full_like(mu, self.sigma2) if self.response != "log" else np.expm1(self.sigma2) * mu ** 2
            var = var + noise + noise[0]
        se = np.sqrt(var)
        t = float(stdtrit(max(self.df_resid, 1), 0.5 + level / 2))
        return d, d - t * se, d + t * se

    def to_json(self) -> dict[str, Any]:
        return {"type": "linear", "name": self.name, "terms": [t.to_json() for t in self.terms],
                "kept": self.kept, "params": self.params.tolist(), "cov": self.cov.tolist(),
                "sigma2": self.sigma2, "df_resid": self.df_resid, "response": self.response,
                "smearing": self.smearing, "aliased": self.aliased,
                **({"conformal": self.conformal, "metric": self.metric} if self.conformal else {})}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> LinearModel:
        import numpy as np

        model = cls(d["name"], [Term.from_json(t) for t in d["terms"]], list(d["kept"]),
                    np.asarray(d["params"], dtype=float), np.asarray(d["cov"], dtype=float), float(d["sigma2"]),
                    int(d["df_resid"]), d["response"], float(d["smearing"]), list(d.get("aliased", [])),
                    {str(s): {str(k): float(v) for k, v in dict(t).items()}
                     for s, t in dict(d.get("conformal") or {}).items()}, str(d.get("metric", "")))
        # A model that would answer with NaN, or with an interval from a negative variance, is refused here.
        k = len(model.kept) + 1
        if model.params.shape != (k,) or model.cov.shape != (k, k):
            raise ValueError(f"{k} coefficients expected (intercept and {k - 1} kept terms), "
                             f"{model.params.size} given")
        if not (np.isfinite(model.params).all() and np.isfinite(model.cov).all() and np.isfinite(model.sigma2)
                and np.isfinite(model.smearing)):
            raise ValueError("coefficients or variances that are not finite numbers")
        if model.sigma2 < 0 or (np.diag(model.cov) < 0).any():
            raise ValueError("a negative variance")
        if model.response not in ("identity", "log"):
            raise ValueError(f"response {model.response!r} (identity or log)")
        return model


@dataclass
class OlsFit:
    """A linear model together with its statsmodels result (for tables and diagnostics; not saved)."""

    model: LinearModel
    result: Any  # statsmodels RegressionResults
    x: np.ndarray  # design matrix with intercept, as fitted
    y: np.ndarray  # response as fitted (log scale for a log model)


def fit_linear(frame: pd.DataFrame, y: np.ndarray, terms: Sequence[Term], name: str,
               response: Literal["identity", "log"] = "identity") -> OlsFit:
    """OLS on the terms, after dropping terms aliased with the intercept or with earlier terms."""
    import numpy as np
    from statsmodels.regression.linear_model import OLS  # not statsmodels.api: a third of a second less

    x, target, kept, aliased = _prepare(frame, y, terms, response)
    res = OLS(target, x).fit()
    df_resid = int(round(res.df_resid))
    sigma2 = float(res.scale) if df_resid > 0 else 0.0
    cov = np.asarray(res.cov_params()) if df_resid > 0 else np.zeros((x.shape[1], x.shape[1]))
    smearing = float(np.mean(np.exp(res.resid))) if response == "log" else 1.0
    model = LinearModel(name, list(terms), kept, np.asarray(res.params, dtype=float), cov, sigma2, df_resid,
                        response, smearing, aliased)
    return OlsFit(model, res, x, target)


def fit_point(frame: pd.DataFrame, y: np.ndarray, terms: Sequence[Term], name: str,
              response: Literal["identity", "log"] = "identity") -> LinearModel:
    """The same least-squares fit for point predictions only (cross-validation folds, bootstrap refits):
    numpy's lstsq without statsmodels' result object, and no covariance, so intervals from it are degenerate."""
    import numpy as np

    x, target, kept, aliased = _prepare(frame, y, terms, response)
    params, *_ = np.linalg.lstsq(x, target, rcond=None)
    resid = target - x @ params
    df_resid = max(len(target) - x.shape[1], 0)
    sigma2 = float(resid @ resid / df_resid) if df_resid else 0.0
    smearing = float(np.mean(np.exp(resid))) if response == "log" else 1.0
    return LinearModel(name, list(terms), kept, params, np.zeros((x.shape[1], x.shape[1])), sigma2, df_resid,
                       response, smearing, aliased)


def _prepare(frame: pd.DataFrame, y: np.ndarray, terms: Sequence[Term],
             response: str) -> tuple[np.ndarray, np.ndarray, list[int], list[str]]:
    """Design matrix with intercept on the independent terms, the response on its scale, kept and aliased."""
    import numpy as np

    full = design_matrix(frame, terms)
    kept = independent_columns(full)
    aliased = [terms[j].label(terms) for j in range(len(terms)) if j not in kept]
    target = np.log(y) if response == "log" else np.asarray(y, dtype=float)
    return np.column_stack([np.ones(len(full)), full[:, kept]]), target, kept, aliased


def coefficient_table(fit: OlsFit, level: float = 0.95) -> list[dict[str, Any]]:
    """Per term: estimate, standard error, t, p, confidence interval and standardized coefficient b·s_x/s_y;
    beside the classic standard error and p, the heteroscedasticity-robust HC3 ones (MacKinnon and White 1985),
    which stay valid when the error variance changes with throughput (Breusch–Pagan rejects).

    References
    ----------
    MacKinnon, J. G., White, H. (1985), "Some heteroskedasticity-consistent covariance matrix estimators with
    improved finite sample properties", *J. Econometrics* 29(3), 305–325.
    Long, J. S., Ervin, L. H. (2000), "Using heteroscedasticity consistent standard errors in the linear
    regression model", *Am. Stat.* 54(3), 217–224 (HC3 for small samples).
    """
    import numpy as np

    res = fit.result
    ci = np.asarray(res.conf_int(alpha=1 - level))
    robust = _hc3(res)
    sy = float(np.std(fit.y, ddof=1))
    rows = []
    for j, label in enumerate(fit.model.labels()):
        sx = float(np.std(fit.x[:, j], ddof=1)) if j else 0.0
        rows.append({"term": label, "estimate": float(res.params[j]), "std_error": float(res.bse[j]),
                     "t": float(res.tvalues[j]), "p": float(res.pvalues[j]), "ci_low": float(ci[j, 0]),
                     "ci_high": float(ci[j, 1]),
                     "std_error_hc3": float(robust.bse[j]) if robust is not None else None,
                     "p_hc3": float(robust.pvalues[j]) if robust is not None else None,
                     "standardized": float(res.params[j]) * sx / sy if j and sy > 0 else None})
    return rows


def _hc3(res: Any) -> Any | None:
    """The same fit with HC3 standard errors; None where they are undefined (a row of leverage 1, no residual
    degrees of freedom)."""
    import numpy as np

    if res.df_resid <= 0:
        return None
    try:
        with np.errstate(divide="ignore", invalid="ignore"):
            robust = res.get_robustcov_results(cov_type="HC3")
    except (ValueError, np.linalg.LinAlgError):
        return None
    return robust if np.isfinite(robust.bse).all() else None

"""The models judged side by side for each metric, behind one interface: ``fit(frame, y) -> Fitted``.

- ``mlr``: the reference study's multiple linear regression, main effects on the raw features.
- ``loglinear``: log response, log2 of the positive numeric features (block, file and cache size, speeds,
  counts), and pairwise interactions while the data can carry them
  (block size and cache size act multiplicatively, which is where the study found linearity to fail).
- ``physical``: log response on the log2 capacity of the slowest stage a byte crosses (client links, server
  links, server disks: measured link and disk figures, replication's write amplification, the share of the
  servers the files placed by hash reach), plus the main effects.
- ``bottleneck``: log response on the slowest stage times its efficiency, elasticity 1 where a stage binds
  (``model/bottleneck.py``): the model that answers upgrades from data measured below them.
- ``gbm``: gradient-boosted trees (scikit-learn's histogram GBM), no assumption of form; intervals by split
  conformal prediction on grouped out-of-fold log residuals.

References
----------
Friedman, J. H. (2001), "Greedy function approximation: a gradient boosting machine", *Ann. Statist.* 29(5).
Lei, J., G'Sell, M., Rinaldo, A., Tibshirani, R. J., Wasserman, L. (2018), "Distribution-free predictive inference
for regression", *JASA* 113(523), 1094–1111.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .features import Columns, Schema, Term, main_effect_terms, n_rows, numbers, strings
from .groups import GROUP, group_folds, group_resamples, n_groups
from .linear import LinearModel, fit_linear, fit_point
from .replicates import pure_error
from ..errors import GlmodelError
from .bottleneck import BottleneckModel, conformal_quantiles, fit_bottleneck, raw_binding, runs_of, usable
from .groups import cv_groups

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .refit_pool import RefitJob


class Fitted(Protocol):
    name: str

    @property
    def n_params(self) -> int: ...

    def predict(self, frame: pd.DataFrame) -> np.ndarray: ...

    def interval(self, frame: pd.DataFrame, level: float = 0.9, trials: float = 1, new_campaign: bool = False
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Where a measurement of each row falls: the mean of ``trials`` trials, where the model can tell the
        trials' noise from its own error (conformal over settings), else one trial (wider: never too narrow).
        ``new_campaign``: measured in another campaign, beyond the data's hardware (the bottleneck model adds its
        term for that; the others hold none and ignore it)."""
        ...

    def difference(self, frame: pd.DataFrame, level: float = 0.9, observed: bool = False, refits: int = 0,
                   trials: float = 1, new_campaign: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each row's prediction minus row 0's, with an interval for the difference (NaN when unknown): of the
        expected change, or with ``observed`` of the change between measurements of each row (means of
        ``trials`` trials where the model can tell). ``refits``: how many bootstrap refits a model without a
        covariance may spend on the expected change's interval."""
        ...

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Learner:
    name: str
    description: str
    fit: Callable[[pd.DataFrame, np.ndarray, bool], Fitted]  # (frame, y, with_intervals)



# -- linear learners ------------------------------------------------------------------------------------------

def mlr(schema: Schema) -> Learner:
    terms = main_effect_terms(schema)
    return Learner("mlr", "the study's MLR: main effects, raw features", _linear(terms, "mlr", "identity"))


def _linear(terms: list[Term], name: str, response: Literal["identity", "log"]) -> Callable[..., Fitted]:
    """Fit through statsmodels when intervals are wanted, else the light least-squares path."""
    def fit(frame: pd.DataFrame, y: np.ndarray, intervals: bool) -> Fitted:
        if intervals:
            return fit_linear(frame, y, terms, name, response).model
        return fit_point(frame, y, terms, name, response)
    return fit


def with_interactions(terms: list[Term], budget: int) -> list[Term]:
    """Add pairwise products, those with a size (log2) term first, while the term count stays within budget."""
    base = list(terms)
    pairs = [(i, j) for i in range(len(base)) for j in range(i + 1, len(base))
             if not (base[i].kind == base[j].kind == "dummy" and base[i].feature == base[j].feature)]
    pairs.sort(key=lambda ij: -(base[ij[0]].kind == "log2") - (base[ij[1]].kind == "log2"))
    out = list(base)
    for i, j in pairs:
        if len(out) >= budget:
            break
        out.append(Term("product", of=(i, j)))
    return out


def loglinear(schema: Schema) -> Learner:
    def fit(frame: pd.DataFrame, y: np.ndarray, iv: bool) -> Fitted:
        # Keep at least ~3 configurations per parameter, so interactions are estimated, not interpolated.
        budget = max(len(main_effect_terms(schema)), n_groups(frame) // 3)
        terms = with_interactions(main_effect_terms(schema, log_sizes=True), budget)
        return _linear(terms, "loglinear", "log")(frame, y, iv)
    return Learner("loglinear", "log response, log2 numeric features, pairwise interactions", fit)


def physical(schema: Schema, metric: str = "") -> Learner:
    """With intervals, and rows whose stages were measured over 3 or more hardware settings, its prediction
    interval is conformal over settings by limiting stage (``with_stage_intervals``)."""
    terms = main_effect_terms(schema, log_sizes=True)
    plain = _linear(terms, "physical", "log")

    def fit(frame: pd.DataFrame, y: np.ndarray, intervals: bool) -> Fitted:
        model = plain(frame, y, intervals)
        if intervals and metric and isinstance(model, LinearModel):
            with_stage_intervals(model, frame, y, lambda f, t: fit_point(f, t, terms, "physical", "log"), metric)
        return model
    return Learner("physical", "log response on log2 bottleneck MB/s (links, disks, copies, hash placement), plus "
                   "main effects; conformal intervals over settings by stage", fit)


def with_stage_intervals(model: LinearModel, frame: pd.DataFrame, y: np.ndarray,
                         refit: Callable[[pd.DataFrame, np.ndarray], LinearModel], metric: str) -> None:
    """Give a log-response model conformal intervals over hardware settings, by the stage that limits each row:
    every run's log residual from a refit without its setting (see model/bottleneck.py for why the setting is
    the unit and the stage the category). Left as it is with fewer than 3 settings or unmeasured stages."""
    import numpy as np


    if not usable(frame, metric):
        return
    setting, by = cv_groups(frame)
    if by != "hardware setting":
        return
    resid = np.full(len(y), np.nan)
    for s in np.unique(setting):
        test = setting == s
        resid[test] = np.log(y[test]) - np.log(refit(frame[~test], y[~test]).predict(frame[test]))
    model.conformal = conformal_quantiles(resid, raw_binding(frame, metric), np.asarray(setting),
                                          run=runs_of(frame))
    model.metric = metric


def bottleneck(schema: Schema, metric: str) -> Learner:
    def fit(frame: pd.DataFrame, y: np.ndarray, intervals: bool) -> Fitted:
        return fit_bottleneck(frame, y, schema, metric, intervals)
    return Learner("bottleneck", "log MB/s = slowest stage x its efficiency (elasticity 1 where it binds), plus "
                   "main effects; conformal intervals over settings by stage", fit)


# -- gradient boosting ----------------------------------------------------------------------------------------

_TRUSTED = ["sklearn.ensemble._hist_gradient_boosting.gradient_boosting.HistGradientBoostingRegressor",
            "sklearn.ensemble._hist_gradient_boosting.binning._BinMapper",
            "sklearn.ensemble._hist_gradient_boosting.predictor.TreePredictor",
            "sklearn._loss.loss.HalfSquaredError", "sklearn._loss.link.IdentityLink",
            "sklearn._loss.link.Interval", "sklearn._loss.loss.AbsoluteError", "numpy.dtype",
            "sklearn.ensemble._hist_gradient_boosting.common.PREDICTOR_RECORD_DTYPE", "builtins.slice",
            # skops refuses a partial unless the function it wraps is trusted too: only check_array is.
            "functools.partial", "sklearn.utils.validation.check_array"]
_LEVELS = [0.5, 0.8, 0.9, 0.95, 0.99]
# Bootstrap refits that give a boosting model's change an interval (a model with a covariance needs none): tune
# reads the tails at the Bonferroni level (about 99% for seven changes), so a few hundred; one refit of the shipped
# tables' trees takes about 10 ms on one thread.
CHANGE_REFITS = 200
# The settings a model file records and a load accepts (plain values; nothing else is passed to the estimator).
_PARAM_NAMES = ("max_iter", "learning_rate", "max_leaf_nodes", "min_samples_leaf", "l2_regularization",
                "categorical_features", "random_state", "early_stopping")


def _gbm_matrix(frame: Columns, schema: Schema) -> np.ndarray:
    """Numeric and bool columns as they are; a categorical as its level's index (unknown level -> NaN)."""
    import numpy as np

    out = np.empty((n_rows(frame), len(schema.features)))
    for j, f in enumerate(schema.features):
        if f.kind == "categorical":
            index = {lv: float(i) for i, lv in enumerate(f.levels)}
            out[:, j] = [index.get(v, np.nan) for v in strings(frame, f.name)]
        else:
            out[:, j] = numbers(frame, f.name)
    return out


def _gbm_params(schema: Schema, n: int, seed: int) -> dict[str, Any]:
    """The boosting model's settings for n rows (plain values, written into the model file with it)."""
    cats = [f.kind == "categorical" for f in schema.features]
    # Small data: small trees with many samples per leaf, or the trees memorise repeated trials. A fit trains
    # this model about 40 times (two sets of CV splits, holdout, conformal folds). On the shipped datasets
    # (grouped CV R², six metric/table pairs) 6 leaves and 25 rounds at 0.4 score within -0.02..+0.10 of 15
    # leaves and 40 rounds at 0.3, in 60% of the time: fewer leaves overfit tens of rows less.
    return {"max_iter": 25, "learning_rate": 0.4, "max_leaf_nodes": 6, "min_samples_leaf": max(3, min(20, n // 20)),
            "l2_regularization": 1.0, "categorical_features": cats if any(cats) else None, "random_state": seed,
            "early_stopping": n > 2000}


def _new_gbm(schema: Schema, n: int, seed: int, params: Mapping[str, Any] | None = None) -> Any:
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(**(params if params is not None else _gbm_params(schema, n, seed)))


@dataclass
class GbmModel:
    """Gradient-boosted trees on log MB/s with conformal intervals.

    In the model file it is its training matrix, log targets, seed and the predictions it made on them: loading
    fits the same trees again (deterministic: no subsampling, a fixed seed) and checks it reproduces those
    predictions, so the file holds numbers only and nothing is deserialised into code. Files written by
    earlier versions hold a skops archive instead, loaded with only the types a histogram GBM is made of.
    """

    name: str
    schema: Schema
    estimator: Any
    log_residual_quantiles: dict[str, float]  # level -> q: interval = ŷ·exp(±q)
    n_params: int = 0
    training: tuple[Any, Any] | None = None  # (x, log y) the estimator was fitted on
    _refitted: list[Any] = field(default_factory=list, repr=False, compare=False)  # bootstrap refits, lazily
    _reference: tuple[LinearModel | None] | None = field(default=None, repr=False, compare=False)
    # each input row's prediction by every refit (exp scale), so a search asking many contrasts among the same
    # configurations predicts each of them once per refit, not once per contrast
    _by_row: dict[bytes, np.ndarray] = field(default_factory=dict, repr=False, compare=False)
    _point: dict[bytes, float] = field(default_factory=dict, repr=False, compare=False)  # the trees' own, by row

    def predict(self, frame: Columns) -> np.ndarray:
        """Each row's throughput, each distinct row predicted once per model (a search asks the same
        configurations over and over, and one call to the trees costs a millisecond whatever its rows)."""
        import numpy as np

        x = _gbm_matrix(frame, self.schema)
        keys = [row.tobytes() for row in x]
        new = [i for i, k in enumerate(keys) if k not in self._point]
        if new:
            self._point.update(zip((keys[i] for i in new), np.exp(self.estimator.predict(x[new]))))
        return np.array([self._point[k] for k in keys], dtype=float)

    def interval(self, frame: Columns, level: float = 0.9, trials: float = 1, new_campaign: bool = False
                 ) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np

        q = self.quantile(level)  # of one trial's residuals, whatever ``trials``
        yhat = self.predict(frame)
        return yhat * np.exp(-q), yhat * np.exp(q)

    def difference(self, frame: Columns, level: float = 0.9, observed: bool = False, refits: int = 0,
                   trials: float = 1, new_campaign: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each row's change against row 0: the trees' change, with an interval that holds the change whether the
        trees or a smooth form describe it (``refits`` > 0; without, or without training data, NaN).

        Trees carry no covariance. Refitted on ``refits`` resamples of the training configurations (a
        configuration's repeated trials drawn together), their changes give a percentile bootstrap interval
        (Efron & Tibshirani 1993, ch. 13); but that interval holds only what the trees can represent: a leaf
        averages several configurations, so an effect confined to a small cell of the design, or shaped as a
        product of two sizes, is shrunk in every refit alike, and on the shipped configuration data it held a
        smooth truth's change 7% of the time. The log-linear model with pairwise interactions, fitted on the
        same rows (``reference``), resolves such effects but only in its form; its covariance interval held
        that change 92% of the time and missed where the truth was the trees' shape. The interval is the hull
        of the two, so it holds the change at about the level when either describes it (a model-form
        robustness, at the price of width where they disagree; ``benchmarks/tune_coverage.py``).

        With ``observed`` it is for a measured change, the mean of ``trials`` trials of each row: each end is
        moved out by the noise of that difference of means (the sd between trials of one configuration in the
        training data, ``trial_sd``), added in quadrature to the expected change's half-width."""
        import numpy as np
        from scipy.stats import norm

        yhat = self.predict(frame)
        d = yhat - yhat[0]
        if refits <= 0 or self.training is None:
            return d, np.full_like(d, np.nan), np.full_like(d, np.nan)
        changes = self.refit_predictions(frame, refits)
        changes -= changes[:, :1]
        tail = (1 - level) / 2 * 100
        low, high = np.percentile(changes, [tail, 100 - tail], axis=0)
        low, high = np.minimum(low, d), np.maximum(high, d)
        ref = self.reference()
        if ref is not None:
            _, rlow, rhigh = ref.difference(frame, level)
            low, high = np.fmin(low, rlow), np.fmax(high, rhigh)
        if observed:
            k = max(1.0, float(trials))
            var = yhat ** 2 * np.expm1(self.trial_sd() ** 2) / k  # a mean of k log-normal trials
            noise = float(norm.ppf(0.5 + level / 2)) * np.sqrt(var + var[0])
            low, high = d - np.hypot(d - low, noise), d + np.hypot(high - d, noise)
            low[0] = high[0] = 0.0
        return d, low, high

    def refit_predictions(self, frame: Columns, refits: int) -> np.ndarray:
        """Every row's throughput by each of ``refits`` bootstrap refits, shape (refits, rows): the rows not seen
        before predicted at once, one call per refit (a call costs milliseconds whatever its rows)."""
        import numpy as np

        from .refit_pool import fit_all

        job = self.refit_job(frame, refits)
        if job is not None:
            self.take_refits(job, fit_all([job])[0])
        x = _gbm_matrix(frame, self.schema)
        keys = [row.tobytes() for row in x]
        missing = [i for i, k in enumerate(keys) if k not in self._by_row or len(self._by_row[k]) < refits]
        if missing:
            fresh = np.exp(np.array([e.predict(x[missing]) for e in self._refitted[:refits]]))
            for j, i in enumerate(missing):
                self._by_row[keys[i]] = fresh[:, j]
        return np.array([self._by_row[k][:refits] for k in keys]).T

    def refit_job(self, frame: Columns, refits: int) -> RefitJob | None:
        """The fits ``refit_predictions`` needs first for ``frame``: the trees on ``refits`` bootstrap resamples
        of the training configurations, each predicting every row (None: the trees exist)."""
        import numpy as np
        from sklearn.base import clone

        from .refit_pool import RefitJob

        if len(self._refitted) >= refits or self.training is None:
            return None
        train, target = np.asarray(self.training[0], dtype=float), np.asarray(self.training[1], dtype=float)
        resamples = list(group_resamples(_same_inputs(train), refits, int(self.estimator.random_state or 0)))
        return RefitJob(clone(self.estimator), train, target, resamples, _gbm_matrix(frame, self.schema))

    def take_refits(self, job: RefitJob, fits: tuple[list[Any], np.ndarray]) -> None:
        """Keep a job's trees, and their predictions of its rows (log MB/s) as each row's by every refit (what
        fewer trees predicted before is forgotten)."""
        import numpy as np

        self._refitted, predicted = fits
        self._by_row = {row.tobytes(): np.exp(column) for row, column in zip(job.rows, predicted.T)}

    def reference(self) -> LinearModel | None:
        """The log-linear model with pairwise interactions on the trees' training rows (None where it cannot
        be fitted), kept for reuse."""
        import numpy as np
        import pandas as pd

        if self._reference is None and self.training is not None:
            x, target = np.asarray(self.training[0], dtype=float), np.asarray(self.training[1], dtype=float)
            cols: dict[str, Any] = {}
            for j, f in enumerate(self.schema.features):  # the matrix back into the columns the features read
                if f.kind == "categorical":
                    cols[f.name] = [f.levels[int(v)] if v == v else None for v in x[:, j]]
                elif f.kind == "bool":
                    cols[f.name] = x[:, j] > 0.5
                else:
                    cols[f.name] = x[:, j]
            frame = pd.DataFrame(cols).assign(**{GROUP: _same_inputs(x)})
            try:
                ref = loglinear(self.schema).fit(frame, np.exp(target), True)
            except (ValueError, np.linalg.LinAlgError):
                ref = None
            self._reference = (ref if isinstance(ref, LinearModel) and ref.df_resid > 0 else None,)
        return self._reference[0] if self._reference else None

    def trial_sd(self) -> float:
        """The sd of log MB/s between trials of one configuration in the training data (its pure error); where no
        configuration was measured twice, the out-of-fold residuals' (a model's error bounds a trial's noise)."""
        import numpy as np

        assert self.training is not None
        pe = pure_error(np.asarray(self.training[1], dtype=float), _same_inputs(np.asarray(self.training[0])))
        if pe.df >= 3:
            return math.sqrt(pe.ms)
        if not self.log_residual_quantiles:
            return 0.0  # fitted without intervals and hardly measured twice: nothing to tell the noise by
        return self.quantile(0.5) / 0.6745  # the median absolute residual of a normal is 0.6745 sd

    def quantile(self, level: float) -> float:
        key = f"{level:g}"
        if key in self.log_residual_quantiles:
            return self.log_residual_quantiles[key]
        known = sorted((float(k), v) for k, v in self.log_residual_quantiles.items())
        above = [v for lv, v in known if lv >= level]
        return above[0] if above else known[-1][1]

    def to_json(self) -> dict[str, Any]:
        if self.training is None:
            raise ValueError("a gradient-boosting model fitted without its training data cannot be written")
        import sklearn

        x, target = self.training
        params = self.estimator.get_params()
        return {"type": "gbm", "name": self.name, "schema": self.schema.to_json(),
                "log_residual_quantiles": self.log_residual_quantiles,
                "params": {k: params[k] for k in _PARAM_NAMES}, "sklearn": sklearn.__version__,
                "training": {"x": [[None if v != v else float(v) for v in row] for row in x.tolist()],
                             "log_y": [float(v) for v in target],
                             "fitted": [float(v) for v in self.estimator.predict(x)]}}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GbmModel:
        """Fit the trees again from the file's training data and check they predict what they did when written;
        an earlier version's skops archive is loaded with only the GBM's own types trusted (never a pickle)."""
        if "skops" in d:
            return cls._from_skops(d)
        import numpy as np


        name = d.get("name", "gbm")
        try:
            t = d["training"]
            x = np.array([[np.nan if v is None else float(v) for v in row] for row in t["x"]], dtype=float)
            target, fitted = np.asarray(t["log_y"], dtype=float), np.asarray(t["fitted"], dtype=float)
            schema, quantiles = Schema.from_json(d["schema"]), {str(k): float(v) for k, v in
                                                               dict(d["log_residual_quantiles"]).items()}
            params = dict(d["params"])
            if set(params) != set(_PARAM_NAMES):
                raise ValueError(f"params must name exactly {', '.join(_PARAM_NAMES)}")
            if x.ndim != 2 or x.shape != (len(target), len(schema.features)) or fitted.shape != target.shape:
                raise ValueError(f"training data of shape {x.shape} for {len(target)} targets and "
                                 f"{len(schema.features)} features")
            est = _new_gbm(schema, len(target), 0, params).fit(x, target)
        except (KeyError, TypeError, ValueError) as exc:
            raise GlmodelError(f"model file: the {name} model's 'training' or 'params' field is damaged "
                               f"({str(exc).splitlines()[0][:120]}); fit the model again") from None
        again = est.predict(x)
        if not np.allclose(again, fitted, rtol=1e-9, atol=1e-9):
            import sklearn

            worst = float(np.max(np.abs(again - fitted)))
            raise GlmodelError(f"model file: the {name} model fits differently here (scikit-learn "
                               f"{sklearn.__version__}; written with {d.get('sklearn', 'an unknown version')}; "
                               f"largest change {worst:.3g} in log MB/s); fit the model again")
        return cls(name, schema, est, quantiles, training=(x, target))

    @classmethod
    def _from_skops(cls, d: Mapping[str, Any]) -> GbmModel:
        """A model file of an earlier version: load with skops, trusting only the types a histogram GBM is made
        of (never a pickle)."""
        import skops.io as sio


        import binascii
        import zipfile

        try:
            data = base64.b64decode(d["skops"], validate=True)
            listed = sio.get_untrusted_types(data=data)
        except (binascii.Error, ValueError, TypeError, zipfile.BadZipFile) as exc:
            raise GlmodelError(f"model file: the {d.get('name', 'gbm')} model's 'skops' field is damaged (not "
                               f"base64 of a skops archive: {str(exc).splitlines()[0][:80]}); fit the model again") from None
        untrusted = [t for t in listed if t not in _TRUSTED]
        if untrusted:
            raise GlmodelError(f"model file holds types glmodel does not load: {', '.join(untrusted)}")
        est = sio.loads(data, trusted=listed)
        from sklearn.ensemble import HistGradientBoostingRegressor

        if type(est) is not HistGradientBoostingRegressor:
            raise GlmodelError(f"model file holds a {type(est).__name__}, not the gradient-boosting model it claims")
        return cls(d["name"], Schema.from_json(d["schema"]), est, dict(d["log_residual_quantiles"]))


def _same_inputs(x: np.ndarray) -> np.ndarray:
    """A group number per row: rows with the same inputs are one configuration's trials (the model file keeps
    no config hashes)."""
    import numpy as np

    _, group = np.unique(np.nan_to_num(x, nan=-1e300), axis=0, return_inverse=True)
    return np.asarray(group).ravel()


def gbm(schema: Schema, seed: int = 0) -> Learner:
    def fit(frame: pd.DataFrame, y: np.ndarray, intervals: bool) -> Fitted:
        import numpy as np

        x = _gbm_matrix(frame, schema)
        target = np.log(np.asarray(y, dtype=float))
        quantiles: dict[str, float] = {}
        if intervals:
            oof = out_of_fold(lambda xi, ti: _new_gbm(schema, len(ti), seed).fit(xi, ti), x, target,
                              frame[GROUP].to_numpy() if GROUP in frame else np.arange(len(frame)), seed)
            resid = np.abs(target - oof)
            resid = resid[np.isfinite(resid)]
            n = len(resid)
            for lv in _LEVELS:  # split-conformal rank ceil((n+1)·level)
                rank = min(n, math.ceil((n + 1) * lv)) if n else 0
                quantiles[f"{lv:g}"] = float(np.sort(resid)[rank - 1]) if n else math.inf
        est = _new_gbm(schema, len(target), seed).fit(x, target)
        return GbmModel("gbm", schema, est, quantiles, training=(x, target))
    return Learner("gbm", "gradient-boosted trees (log response), conformal intervals", fit)


def out_of_fold(fit: Callable[[np.ndarray, np.ndarray], Any], x: np.ndarray, y: np.ndarray, groups: np.ndarray,
                seed: int, k: int = 5) -> np.ndarray:
    """Predictions for every row from a model that never saw its group (grouped K-fold)."""
    import numpy as np

    out = np.full(len(y), np.nan)
    k = min(k, len(np.unique(groups)))
    if k < 2:
        return out
    folds = group_folds(groups, k, seed)
    for i in range(k):
        test = folds == i
        out[test] = fit(x[~test], y[~test]).predict(x[test])
    return out


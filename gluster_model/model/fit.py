"""One metric, every model: fit, validate side by side, select, explain. The library behind `glmodel fit`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..dataset import FAMILIES
from ..errors import GlmodelError
from .diagnostics import Diagnostics, diagnose
from .domain import Domain, build_domain
from ..gluster.read_placement import READ_INPUTS
from .features import DERIVED, DERIVED_INPUTS, Schema, main_effect_terms, schema_from_frame, with_derived
from .groups import GROUP
from .importance import Importance, NotFinite, additive_vi, bootstrap_vi, sobol_indices, with_intervals
from .bottleneck import usable
from .learners import Fitted, Learner
from .registry import BY_NAME, MODELS, SIMPLICITY
from .linear import LinearModel, adjusted_r2, coefficient_table, fit_linear
from .replicates import Replication, lack_of_fit, noise_cv, pure_error
from .groups import cv_groups
from .validate import CrossValidation, Holdout, grouped_cv, holdout, r2
from ..bench.metrics import METRICS

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

SCORE_SEEDS = 1000  # the reported CV's seeds start this far from the selection's


class FitError(GlmodelError):
    """The data cannot support the model asked for."""


@dataclass
class Score:
    model: str
    description: str
    n_params: int | None
    r2: float  # in sample, on the MB/s scale
    adj_r2: float | None  # on the scale the model was fitted on (``adj_r2_scale``)
    holdout: Holdout
    cv: CrossValidation | None  # the reported figure: splits the selection never saw
    cv_select: CrossValidation | None = None  # the figure the model was selected on
    adj_r2_scale: str = "MB/s"

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "description": self.description, "n_params": self.n_params, "r2": self.r2,
                "adj_r2": self.adj_r2, "adj_r2_scale": self.adj_r2_scale, "holdout": self.holdout.to_json(),
                "cv": self.cv.to_json() if self.cv else None,
                "cv_select": self.cv_select.to_json() if self.cv_select else None}


@dataclass
class MetricFit:
    metric: str
    family: str
    schema: Schema
    n_rows: int
    n_configs: int
    coefficients: list[dict[str, Any]]
    diagnostics: Diagnostics
    scores: list[Score]
    selected: str
    importance: dict[str, list[Importance]]
    domain: Domain
    models: dict[str, Fitted] = field(repr=False, default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # per importance model: the share of the measured variance it explains out of sample (CV R², in [0, 1]);
    # its importance shares are shares of that part, the rest is left unexplained
    explained: dict[str, float] = field(default_factory=dict)
    replication: Replication | None = None  # run-to-run noise and lack of fit, when configurations repeat

    def score(self, model: str) -> Score:
        return next(s for s in self.scores if s.model == model)


def learners_for(schema: Schema, phys_schema: Schema, models: Sequence[str], seed: int,
                 metric: str = "", stages_measured: bool = False) -> list[Learner]:
    """The learners asked for (the study's MLR always); the bottleneck model only where every row has the
    measured link and disk figures its stages need."""
    unknown = [m for m in models if m not in BY_NAME]
    if unknown:
        raise FitError(f"--model: unknown model(s) {', '.join(unknown)}; choose from {', '.join(MODELS)}")
    wanted = [BY_NAME[m] for m in dict.fromkeys(["mlr", *models])]
    return [f.make(schema, phys_schema, metric, seed) for f in wanted if not f.needs_stages or stages_measured]


def rows_for(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    if metric not in frame:
        raise FitError(f"metric {metric}: not in the data")
    rows = frame[frame[metric].notna() & (frame[metric] > 0)].reset_index(drop=True)
    if GROUP not in rows:
        rows[GROUP] = range(len(rows))
    return rows


def fit_metric(frame: pd.DataFrame, metric: str, family: str = "unified", *, models: Sequence[str] = MODELS,
               seed: int = 0, level: float = 0.9, importance_n: int = 1024, bootstrap: int = 30,
               cv_repeats: int = 3) -> MetricFit:
    """Fit every model for one metric, validate each on the same splits, select by grouped-CV R².

    The model is selected on one set of repeated splits (seeds ``seed``…) and its figures are reported from
    another (seeds ``seed + SCORE_SEEDS``…), so the figure shown is not the one that won the selection
    (Cawley and Talbot 2010). With as few groups as folds both sets are leave-one-group-out, the same splits.

    References
    ----------
    Cawley, G. C., Talbot, N. L. C. (2010), "On over-fitting in model selection and subsequent selection bias
    in performance evaluation", *JMLR* 11, 2079–2107.
    """
    import numpy as np

    if family not in FAMILIES:
        raise FitError(f"--family: unknown family {family!r}; choose from {', '.join(FAMILIES)}")
    rows = with_derived(rows_for(frame, metric), metric)
    y = rows[metric].to_numpy(dtype=float)
    schema = schema_from_frame(rows, FAMILIES[family], metric)
    if not schema.features:
        constant = [(n, w) for n, w in schema.dropped if w.startswith("constant")]
        absent = sum(w == "not in the data" for _, w in schema.dropped)
        example = f"; e.g. {constant[0][0]} {constant[0][1]}" if constant else ""
        raise FitError(f"metric {metric}, family {family}: no feature varies in the data ({len(constant)} constant, "
                       f"{absent} absent, {len(schema.dropped) - len(constant) - absent} left out otherwise"
                       f"{example}); fit runs that vary at least one of {', '.join(FAMILIES[family][:4])}, ...")
    phys_schema = schema_from_frame(rows, (*FAMILIES[family], *DERIVED), metric)
    n_configs = int(rows[GROUP].nunique())
    if len(rows) < len(schema.features) + 3:
        raise FitError(f"metric {metric}: {len(rows)} trial(s) for {len(schema.features)} feature(s); need at "
                       f"least {len(schema.features) + 3}")
    notes = _dropped_notes(schema)
    if len(rows) < len(frame):
        notes.append(f"{len(frame) - len(rows)} of {len(frame)} row(s) have no positive {metric} value (not "
                     "measured there, or missing) and are left out")
    scores: list[Score] = []
    fitted: dict[str, Fitted] = {}
    learners = {lr.name: lr for lr in learners_for(schema, phys_schema, models, seed, metric, usable(rows, metric))}
    groups, grouped_by = cv_groups(rows)
    splits: dict[tuple[int, int], Any] = {}  # every learner is judged on the same folds: slice them once
    # The MLR is fitted once, through statsmodels, for its coefficient table and diagnostics as well.
    ols = fit_linear(rows, y, main_effect_terms(schema), "mlr")
    for learner in list(learners.values()):
        try:
            model = ols.model if learner.name == "mlr" else learner.fit(rows, y, True)
            # judged on the same splits as the others: a model that cannot be fitted on one of them is left out
            cv_select, cv_report = (grouped_cv(learner, rows, y, seed + offset, repeats=cv_repeats, groups=groups,
                                               grouped_by=grouped_by, splits=splits) for offset in (0, SCORE_SEEDS))
            held = holdout(learner, rows, y, seed, level)
        except GlmodelError as exc:
            if learner.name == "mlr":
                raise
            notes.append(f"{learner.name}: left out ({exc})")
            del learners[learner.name]
            continue
        fitted[learner.name] = model
        yhat = model.predict(rows)
        in_r2 = r2(y, yhat)
        k = model.n_params - 1 if isinstance(model, LinearModel) else None
        adj, scale = None, "MB/s"
        if isinstance(model, LinearModel):
            # adjusted R² on the scale of the least-squares fit: a log model's on log MB/s
            log = model.response == "log"
            fit_r2 = r2(np.log(y), model.linear_predictor(rows)) if log else in_r2
            adj, scale = adjusted_r2(fit_r2, len(y), model.n_params - 1), "log MB/s" if log else "MB/s"
        scores.append(Score(learner.name, learner.description, model.n_params if k is not None else None, in_r2,
                            adj, held, cv_report, cv_select, scale))
    selected = select(scores)
    coefficients = coefficient_table(ols)
    diagnostics = diagnose(ols)
    computed = {"mlr": _importance(learners["mlr"], fitted["mlr"], rows, y, schema, metric, seed, importance_n,
                                   bootstrap, additive=True)}
    if selected != "mlr":
        computed[selected] = _importance(learners[selected], fitted[selected], rows, y, schema, metric, seed,
                                         importance_n, bootstrap if selected != "gbm" else min(bootstrap, 10),
                                         additive=False)
    notes.extend(f"{m}: no predictor importance: its predictions overflow within the measured ranges"
                 for m, imps in computed.items() if imps is None)
    importance = {m: imps or [] for m, imps in computed.items()}
    explained = {m: _explained(next(s for s in scores if s.model == m)) for m in importance}
    replication = _replication(fitted, rows, y)
    if n_configs < 3:
        notes.append(f"only {n_configs} configuration(s): grouped cross-validation needs 3 or more")
    domain = build_domain(rows, (*FAMILIES[family], *DERIVED_INPUTS, *READ_INPUTS), metric, seed=seed)
    return MetricFit(metric, family, schema, len(rows), n_configs, coefficients, diagnostics, scores, selected,
                     importance, domain, fitted, notes, explained, replication)


def _replication(fitted: dict[str, Fitted], rows: pd.DataFrame, y: np.ndarray) -> Replication | None:
    """Run-to-run noise of the configurations measured more than once, and each linear model's lack-of-fit
    test on the scale it was fitted on; None when no configuration repeats."""
    import numpy as np

    groups = rows[GROUP].to_numpy()
    cv = noise_cv(y, groups)
    if cv is None:
        return None
    tests = []
    for name, model in fitted.items():
        if isinstance(model, LinearModel):
            log = model.response == "log"
            values = np.log(y) if log else y
            test = lack_of_fit(name, "log MB/s" if log else "MB/s", values - model.linear_predictor(rows),
                               model.df_resid, groups, values)
            if test is not None:
                tests.append(test)
    pe = pure_error(y, groups)
    return Replication(pe.configurations, pe.runs, cv, tuple(tests))


def _explained(s: Score) -> float:
    """Share of the measured variance a model explains on data it did not see: its reported CV R² (the 75/25
    R² without CV), clipped to [0, 1]. In-sample R² would credit a flexible model with its own noise."""
    value = s.cv.r2_mean if s.cv is not None else s.holdout.r2
    return min(max(value, 0.0), 1.0) if value == value else 0.0


def _dropped_notes(schema: Schema) -> list[str]:
    """One line for the features constant in the data, one for those absent, one each for the rest."""
    groups: dict[str, list[str]] = {"constant": [], "not in the data": []}
    notes: list[str] = []
    for name, why in schema.dropped:
        if why.startswith("constant ("):
            groups["constant"].append(f"{name}={why[10:-1]}")
        elif why == "not in the data":
            groups["not in the data"].append(name)
        else:
            notes.append(f"{name} left out: {why}")
    if groups["constant"]:
        notes.insert(0, "constant in these data, so left out: " + ", ".join(groups["constant"]))
    if groups["not in the data"]:
        notes.append("not in the data: " + ", ".join(groups["not in the data"]))
    return notes


def select(scores: Sequence[Score], tolerance: float = 0.01) -> str:
    """Best grouped-CV R² on the selection splits (the 75/25 R² when CV is not possible); within ``tolerance``,
    the simpler model."""
    def figure(s: Score) -> float:
        cv = s.cv_select or s.cv
        value = cv.r2_mean if cv is not None else s.holdout.r2
        return value if value == value else -float("inf")  # NaN ranks last
    best = max(figure(s) for s in scores)
    near = [s for s in scores if figure(s) >= best - tolerance]
    return min(near, key=lambda s: SIMPLICITY.get(s.model, 99)).model


def _importance(learner: Learner, model: Fitted, rows: pd.DataFrame, y: np.ndarray, schema: Schema, metric: str,
                seed: int, n: int, rounds: int, additive: bool) -> list[Importance] | None:
    """Sobol' indices over the family's raw features; derived features are recomputed from each sample. None: the
    model's predictions overflow within the measured ranges (importance.NotFinite)."""
    last: list[tuple[pd.DataFrame, pd.DataFrame]] = []  # the bootstrap's refits all predict one sample

    def derived(raw: pd.DataFrame) -> pd.DataFrame:
        if not last or last[0][0] is not raw:
            last[:] = [(raw, with_derived(raw, metric))]
        return last[0][1]

    def predictor(m: Fitted) -> Any:
        return lambda raw: m.predict(derived(raw))

    try:
        imps = sobol_indices(predictor(model), rows, schema, n=n, seed=seed)
    except NotFinite:
        return None  # the caller says why there is no importance for this model
    groups = rows[GROUP].to_numpy()
    ci = bootstrap_vi(lambda idx: predictor(learner.fit(rows.iloc[idx].reset_index(drop=True), y[idx], False)),
                      rows, schema, groups, rounds=rounds, n=max(64, n // 4), seed=seed,
                      point={i.feature: i.vi for i in imps}) if rounds else {}
    analytic = additive_vi(model, rows, schema.names) if additive and isinstance(model, LinearModel) else None
    return with_intervals(imps, ci, analytic)


def metrics_asked(frame: pd.DataFrame, metrics: Sequence[str] | None) -> list[str]:
    """The metrics named (each checked), or every metric with data in ``frame``."""
    unknown = [m for m in metrics or () if m not in METRICS]
    if unknown:
        raise FitError(f"--metric: unknown metric(s) {', '.join(unknown)}; choose from {', '.join(METRICS)}")
    return list(metrics) if metrics else [m for m in METRICS if m in frame and frame[m].notna().any()]


def fit_frame(frame: pd.DataFrame, family: str = "unified", metrics: Sequence[str] | None = None,
              **kw: Any) -> tuple[list[MetricFit], list[str]]:
    """Fit every metric that has data (or those asked for); returns the fits and one line per metric left out.

    Raises FitError when no metric could be fitted. Metrics are fitted side by side, one process per core the
    process may use (forked, so nothing is imported again); inside each, the numeric libraries run on one thread:
    a fit is many small problems (tens of rows), where a thread pool costs more than it saves, and on a loaded
    machine its spinning threads fought every other process for the cores.
    """
    # threadpoolctl limits the pools of libraries already loaded: load the ones a fit uses first (scipy and
    # scikit-learn bring their own OpenBLAS and OpenMP runtimes).
    import scipy.linalg  # noqa: F401
    import sklearn.ensemble  # noqa: F401
    from threadpoolctl import threadpool_limits

    asked = metrics_asked(frame, metrics)
    with threadpool_limits(limits=1):
        outcomes = _fit_side_by_side(frame, asked, family, kw)
    fits, skipped = [], []
    for outcome in outcomes:
        if isinstance(outcome, MetricFit):
            fits.append(outcome)
        elif metrics:  # asked for by name: the user wants to know it failed
            raise FitError(outcome)
        else:
            skipped.append(outcome)
    if not fits:
        # the first metric's reason, and the others by name (they are most often the same reason)
        others = [str(m).split(",", 1)[0].removeprefix("metric ") for m in skipped[1:]]
        raise FitError("no metric could be fitted: " + (skipped[0] if skipped else "the data have no metric")
                       + (f" (and {', '.join(others)}: see `glmodel fit --metric M` for each)" if others else ""))
    return fits, skipped


def _fit_or_say(frame: pd.DataFrame, metric: str, family: str, kw: dict[str, Any]) -> MetricFit | str:
    """One metric's fit, or why it could not be fitted (a plain string crosses a process boundary intact)."""
    try:
        return fit_metric(frame, metric, family, **kw)
    except FitError as exc:
        return str(exc)


def _fit_side_by_side(frame: pd.DataFrame, metrics: Sequence[str], family: str,
                      kw: dict[str, Any]) -> list[MetricFit | str]:
    """Each metric's fit, in order; in forked worker processes when there are several metrics and cores.

    Fork, not spawn: the workers start with the libraries the parent already loaded (importing them again would
    cost more than a metric's fit), and nothing in the parent has started an OpenMP pool yet that a fork could
    leave locked. Results come back pickled between our own processes only."""
    import multiprocessing
    import os
    from concurrent.futures import ProcessPoolExecutor

    workers = min(len(metrics), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_fit_or_say(frame, m, family, kw) for m in metrics]
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork")) as pool:
            return list(pool.map(_fit_or_say, [frame] * len(metrics), metrics, [family] * len(metrics),
                                 [kw] * len(metrics)))
    except (BrokenProcessPool, OSError):  # a worker killed (out of memory) or no process to be had: one at a time
        return [_fit_or_say(frame, m, family, kw) for m in metrics]


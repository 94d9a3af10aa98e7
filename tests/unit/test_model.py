"""Modelling statistics against references: Longley (NIST), Ishigami (analytic Sobol' indices), additive MLR
importance (analytic), and the model file round trip."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gluster_model.errors import GlmodelError
from gluster_model.model import artifact
from gluster_model.model.features import Feature, Schema, Term, schema_from_frame
from gluster_model.model.fit import Score, fit_metric, select
from gluster_model.model.importance import sobol_indices
from gluster_model.model.learners import GbmModel, mlr
from gluster_model.model.linear import adjusted_r2, coefficient_table, fit_linear
from gluster_model.model.validate import Holdout, holdout

# NIST StRD certified values for the Longley data (https://www.itl.nist.gov/div898/strd/lls/data/Longley.shtml).
LONGLEY = {"const": -3482258.63459582, "GNPDEFL": 15.0618722713733, "GNP": -0.358191792925910e-01,
           "UNEMP": -2.02022980381683, "ARMED": -1.03322686717359, "POP": -0.511041056535807e-01,
           "YEAR": 1829.15146461355}
LONGLEY_SE = {"const": 890420.383607373, "GNPDEFL": 84.9149257747669, "GNP": 0.334910077722432e-01,
              "UNEMP": 0.488399681651699, "ARMED": 0.214274163161675, "POP": 0.226073200069370,
              "YEAR": 455.478499142212}


def test_longley_matches_nist_certified_values() -> None:
    from statsmodels.datasets import longley

    data = longley.load_pandas().data
    names = ["GNPDEFL", "GNP", "UNEMP", "ARMED", "POP", "YEAR"]
    fit = fit_linear(data, data["TOTEMP"].to_numpy(), [Term("num", n) for n in names], "mlr")
    table = {r["term"]: r for r in coefficient_table(fit)}
    for term, value in LONGLEY.items():
        assert table[term]["estimate"] == pytest.approx(value, rel=1e-7)
        assert table[term]["std_error"] == pytest.approx(LONGLEY_SE[term], rel=1e-6)
    assert fit.result.rsquared == pytest.approx(0.995479004577296, rel=1e-9)
    assert adjusted_r2(fit.result.rsquared, 16, 6) == pytest.approx(0.992465007628826, rel=1e-9)
    assert fit.result.rsquared_adj == pytest.approx(adjusted_r2(fit.result.rsquared, 16, 6), rel=1e-12)
    assert math.sqrt(fit.model.sigma2) == pytest.approx(304.854073561965, rel=1e-9)


def test_adjusted_r2_formula() -> None:
    assert adjusted_r2(0.8, 101, 10) == pytest.approx(1 - 100 / 90 * 0.2)
    assert math.isnan(adjusted_r2(0.9, 5, 4))


def _uniform_frame(names: list[str], low: float, high: float, n: int = 20001) -> tuple[pd.DataFrame, Schema]:
    grid = np.linspace(low, high, n)
    frame = pd.DataFrame({name: grid for name in names})
    schema = Schema("y", tuple(Feature(name, "numeric", low=low, high=high, values=(low, high)) for name in names))
    return frame, schema


def test_ishigami_first_order_indices_within_0_02() -> None:
    a, b = 7.0, 0.1
    frame, schema = _uniform_frame(["x1", "x2", "x3"], -math.pi, math.pi)

    def ishigami(f: pd.DataFrame) -> np.ndarray:
        x1, x2, x3 = (f[c].to_numpy() for c in ("x1", "x2", "x3"))
        return np.sin(x1) + a * np.sin(x2) ** 2 + b * x3**4 * np.sin(x1)

    # Analytic values (Ishigami & Homma 1990; Sobol' & Levitan 1999).
    v = a**2 / 8 + b * math.pi**4 / 5 + b**2 * math.pi**8 / 18 + 0.5
    v1 = 0.5 * (1 + b * math.pi**4 / 5) ** 2
    v2 = a**2 / 8
    imps = {i.feature: i for i in sobol_indices(ishigami, frame, schema, n=8192, seed=1)}
    assert imps["x1"].s1 == pytest.approx(v1 / v, abs=0.02)
    assert imps["x2"].s1 == pytest.approx(v2 / v, abs=0.02)
    assert imps["x3"].s1 == pytest.approx(0.0, abs=0.02)
    assert imps["x3"].st == pytest.approx(1 - v1 / v - v2 / v, abs=0.03)  # x3 acts only through x1



def test_point_indices_without_confidence_equal_salibs_own() -> None:
    # The bootstrap's refits take S1 and ST without SALib's resampling loop: the figures must be SALib's.
    frame, schema = _uniform_frame(["x1", "x2", "x3", "x4"], 0.0, 1.0)

    def model(f: pd.DataFrame) -> np.ndarray:
        x = f[["x1", "x2", "x3", "x4"]].to_numpy()
        return np.exp(x[:, 0]) + 3 * x[:, 1] * x[:, 2] + 0.1 * x[:, 3]

    full = {i.feature: i for i in sobol_indices(model, frame, schema, n=512, seed=4)}
    fast = {i.feature: i for i in sobol_indices(model, frame, schema, n=512, seed=4, confidence=False)}
    for name in schema.names:
        assert fast[name].s1 == pytest.approx(full[name].s1, rel=1e-12, abs=1e-15)
        assert fast[name].st == pytest.approx(full[name].st, rel=1e-12, abs=1e-15)
        assert fast[name].vi == pytest.approx(full[name].vi, rel=1e-12, abs=1e-15)
    assert full["x2"].st > 0.2 and fast["x4"].s1 < 0.05  # a model whose inputs differ, so the check bites

def _grid_frame(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    cfg = 0
    for rs in (4, 16, 64, 256, 1024):
        for servers in (1, 2, 3, 4):
            for wb in (False, True):
                for layout in ("distribute", "replicate"):
                    cfg += 1
                    for _ in range(3):
                        y = (20 + 0.2 * rs + 40 * servers + 25 * wb - 30 * (layout == "replicate")
                             + rng.normal(0, 8))
                        rows.append({"config_hash": f"c{cfg}", "record_size": rs * 1024.0, "servers": servers,
                                     "write_behind": wb, "layout": layout, "write": y})
    return pd.DataFrame(rows)


def test_additive_mlr_importance_equals_squared_standardized_coefficients() -> None:
    frame = _grid_frame()
    fit = fit_metric(frame, "write", "unified", models=["mlr"], bootstrap=0, importance_n=4096, cv_repeats=1)
    std = {r["term"]: r["standardized"] for r in fit.coefficients if r["term"] != "const"}
    # On a full grid the features are orthogonal, so VI_i = β_i² / Σ β_j² exactly (a dummy's β is its feature's).
    names = {"record_size": "record_size", "servers": "servers", "write_behind": "write_behind",
             "layout[replicate]": "layout"}
    total = sum(v**2 for v in std.values())
    expected = {names[t]: v**2 / total for t, v in std.items()}
    got = {i.feature: i for i in fit.importance["mlr"]}
    for feature, value in expected.items():
        assert got[feature].vi == pytest.approx(value, abs=0.01)
        assert got[feature].analytic_vi == pytest.approx(value, abs=1e-9)
    assert sum(i.s1 for i in got.values()) == pytest.approx(1.0, abs=0.02)  # additive: no interactions


def test_nonlinear_truth_is_found_and_mlr_still_reported() -> None:
    rng = np.random.default_rng(3)
    rows = []
    for cfg in range(60):
        rs = float(2 ** rng.integers(2, 14) * 1024)
        cache = float(2 ** rng.integers(1, 9) << 20)
        for _ in range(2):
            # Saturating in block size, multiplicative in cache: what the study saw break the MLR.
            y = 400 * (1 - math.exp(-rs / 65536)) * (1 + 0.3 * math.log2(cache / 2**20)) * rng.lognormal(0, 0.05)
            rows.append({"config_hash": f"c{cfg}", "record_size": rs, "cache_size": cache, "write": y})
    fit = fit_metric(pd.DataFrame(rows), "write", "gluster", bootstrap=0, importance_n=512)
    assert [s.model for s in fit.scores][0] == "mlr"
    assert fit.selected != "mlr"
    best, base = fit.score(fit.selected), fit.score("mlr")
    assert best.cv is not None and base.cv is not None and best.cv.r2_mean > base.cv.r2_mean + 0.05
    assert any("linearity fails" in f for f in fit.diagnostics.findings)


def test_ols_prediction_interval_covers_held_out_data() -> None:
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 10, 4000)
    frame = pd.DataFrame({"servers": x, "config_hash": np.arange(4000)})
    y = 3 + 2 * x + rng.normal(0, 1, 4000)
    schema = schema_from_frame(frame.assign(write=y), ["servers"], "write")
    result = holdout(mlr(schema), frame, y, seed=0, level=0.9)
    assert 0.87 <= result.coverage <= 0.93


def test_select_prefers_the_simpler_model_within_tolerance() -> None:
    def score(model: str, cv: float) -> Score:
        from gluster_model.model.validate import CrossValidation

        return Score(model, "", 3, 0.9, 0.9, Holdout(0.9, 5, 0.9, 0.9, 30, 10), CrossValidation(cv, 0, 5, 0, 5, 1))
    assert select([score("mlr", 0.80), score("gbm", 0.805)]) == "mlr"
    assert select([score("mlr", 0.70), score("gbm", 0.90), score("loglinear", 0.895)]) == "loglinear"


def test_schema_drops_constants_and_linearly_dependent_features() -> None:
    frame = pd.DataFrame({"layout": ["distribute", "replicate"] * 3, "replica": [1, 3] * 3, "servers": [3] * 6,
                          "record_size": [4096, 4096, 8192, 8192, 16384, 16384],
                          "file_size": [3 * 4096 + 10, 3 * 4096 + 10 + 2, 3 * 8192 + 10, 3 * 8192 + 12,
                                        3 * 16384 + 10, 3 * 16384 + 12], "write": [1.0] * 6})
    schema = schema_from_frame(frame, ["replica", "servers", "record_size", "layout", "threads", "file_size"],
                               "write")
    assert schema.names == ["replica", "record_size"]
    dropped = dict(schema.dropped)
    assert dropped["servers"] == "constant (3)" and dropped["threads"] == "not in the data"
    assert dropped["layout"].startswith("varied together with replica in these data")
    # file_size = 3·record_size + replica + 9: the combination is found and written out.
    assert dropped["file_size"] == ("varied together with replica, record_size in these data "
                                    "(file_size = 1·replica + 3·record_size + c)")


def test_model_file_round_trip_gives_identical_predictions(tmp_path: Path) -> None:
    frame = _grid_frame(seed=1)
    fit = fit_metric(frame, "write", "unified", bootstrap=0, importance_n=256, cv_repeats=1)
    doc = artifact.build([fit], {"store": "test", "rows": len(frame)})
    path = tmp_path / "m.json"
    artifact.save(doc, path)
    loaded = artifact.load(path)
    assert loaded.metrics == ["write"] and loaded.schema("write") == fit.schema
    for name, model in fit.models.items():
        again = loaded.model("write", name)
        np.testing.assert_array_equal(again.predict(frame), model.predict(frame))
        for a_, b_ in zip(again.interval(frame, 0.9), model.interval(frame, 0.9)):
            np.testing.assert_array_equal(a_, b_)



def test_boosting_model_is_stored_as_numbers_and_a_tampered_one_is_refused(tmp_path: Path) -> None:
    import json

    frame = _grid_frame(seed=2)
    fit = fit_metric(frame, "write", "unified", models=["gbm"], bootstrap=0, importance_n=64, cv_repeats=1)
    doc = artifact.build([fit], {"store": "test", "rows": len(frame)})
    path = tmp_path / "m.json"
    artifact.save(doc, path)
    text = path.read_text()
    assert '"skops"' not in text  # numbers only: nothing in the file is deserialised into code
    gbm = json.loads(text)["metrics"]["write"]["models"]["gbm"]
    assert len(gbm["training"]["log_y"]) == len(frame)
    again = artifact.load(path).model("write", "gbm")
    np.testing.assert_array_equal(again.predict(frame), fit.models["gbm"].predict(frame))
    # A fitted value changed: the trees fitted from the file no longer give it, so the file is refused.
    forged = dict(gbm, training=dict(gbm["training"], fitted=[v + 0.5 for v in gbm["training"]["fitted"]]))
    with pytest.raises(GlmodelError, match="gbm model fits differently here .*fit the model again"):
        GbmModel.from_json(forged)
    short = dict(gbm, training=dict(gbm["training"], log_y=gbm["training"]["log_y"][:-1]))
    with pytest.raises(GlmodelError, match="'training' or 'params' field is damaged .*fit the model again"):
        GbmModel.from_json(short)
    # Settings beyond the boosting model's own are never passed to the estimator.
    with pytest.raises(GlmodelError, match="'params' field is damaged .*params must name exactly"):
        GbmModel.from_json(dict(gbm, params=dict(gbm["params"], verbose=1)))
    # The file carries its own settings: a model written with other settings loads as it was fitted.
    from sklearn.ensemble import HistGradientBoostingRegressor

    other = dict(gbm["params"], max_leaf_nodes=3, max_iter=7)
    x = np.array([[np.nan if v is None else v for v in row] for row in gbm["training"]["x"]], dtype=float)
    est = HistGradientBoostingRegressor(**other).fit(x, np.array(gbm["training"]["log_y"]))
    older = GbmModel.from_json(dict(gbm, params=other, training=dict(gbm["training"],
                                                                      fitted=est.predict(x).tolist())))
    assert older.estimator.get_params()["max_leaf_nodes"] == 3
    np.testing.assert_array_equal(older.estimator.predict(x), est.predict(x))

def test_model_file_refuses_foreign_types_and_bad_files(tmp_path: Path) -> None:
    import base64

    import skops.io as sio
    from sklearn.linear_model import LinearRegression

    foreign = base64.b64encode(sio.dumps(LinearRegression())).decode()
    schema = Schema("write", (Feature("servers", "numeric", low=1, high=4, values=(1, 4)),))
    with pytest.raises(GlmodelError, match="holds a LinearRegression, not the gradient-boosting model"):
        GbmModel.from_json({"name": "gbm", "schema": schema.to_json(), "log_residual_quantiles": {},
                            "skops": foreign})
    for garbled, why in ((foreign[:-3], "Invalid base64"), ("QUJD", "not a zip file")):  # cut short; not an archive
        with pytest.raises(GlmodelError, match=f"'skops' field is damaged .*{why}.*fit the model again"):
            GbmModel.from_json({"name": "gbm", "schema": schema.to_json(), "log_residual_quantiles": {},
                                "skops": garbled})
    from sklearn.preprocessing import FunctionTransformer

    evil = base64.b64encode(sio.dumps(FunctionTransformer(func=Path.unlink))).decode()
    with pytest.raises(GlmodelError, match="types glmodel does not load: .*pathlib"):
        GbmModel.from_json({"name": "gbm", "schema": schema.to_json(), "log_residual_quantiles": {},
                            "skops": evil})
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(artifact.ModelFileError, match="not a readable JSON model file"):
        artifact.load(bad)
    bad.write_text('{"format": "other"}')
    with pytest.raises(artifact.ModelFileError, match="not a glmodel model file"):
        artifact.load(bad)
    with pytest.raises(artifact.ModelFileError, match="no such model file"):
        artifact.load(tmp_path / "missing.json")


def test_cv_holds_out_whole_hardware_settings_when_the_hardware_varied() -> None:
    """Eight hardware settings, each with its own offset that no input explains (a setting's quirk), and four
    workloads each. Folds that hold out configurations keep every setting on both sides, so a model that learns
    the quirks from the link and disk values looks good; folds that hold out whole settings show that it cannot
    predict a setting it has not seen."""
    from gluster_model.model.fit import fit_metric
    from gluster_model.model.groups import GROUP
    from gluster_model.model.learners import gbm
    from gluster_model.model.features import schema_from_frame
    from gluster_model.model.groups import cv_groups
    from gluster_model.model.validate import grouped_cv

    rng = np.random.default_rng(4)
    rows = []
    settings = [(float(n), float(d)) for n, d in zip(rng.uniform(0.2, 1.0, 8), rng.uniform(30, 240, 8))]
    quirk = rng.lognormal(0, 0.5, 8)
    for s, (net, disk) in enumerate(settings):
        for servers in (1, 2, 3, 4):
            rows.append({"network_gbps": net, "disk_read_mbps": disk, "servers": servers, "clients": 1,
                         GROUP: f"{s}-{servers}", "write": 50 * quirk[s] * servers ** 0.3 * rng.lognormal(0, 0.02)})
    frame = pd.DataFrame(rows)
    groups, by = cv_groups(frame)
    assert by == "hardware setting" and len(set(groups)) == 8
    y = frame["write"].to_numpy()
    learner = gbm(schema_from_frame(frame, ("network_gbps", "disk_read_mbps", "servers"), "write"))
    leaky = grouped_cv(learner, frame, y, repeats=2)
    honest = grouped_cv(learner, frame, y, repeats=2, groups=groups, grouped_by=by)
    assert leaky is not None and honest is not None
    assert leaky.r2_mean > 0.5 and honest.r2_mean < leaky.r2_mean - 0.4, (leaky, honest)
    fit = fit_metric(frame, "write", "hardware", models=["physical"], bootstrap=0, importance_n=64, cv_repeats=1)
    cv = fit.scores[0].cv
    assert cv is not None and (cv.grouped_by, cv.groups) == ("hardware setting", 8)
    # One setting only: configurations are what a fold holds out.
    one = frame[frame["network_gbps"] == settings[0][0]].copy()
    assert cv_groups(one)[1] == "configuration"


@pytest.mark.parametrize("response", ["identity", "log"])
def test_a_measured_change_is_judged_by_the_interval_of_a_measured_change(response: str) -> None:
    """The confidence interval of a change (what tune ranks options by) covers the expected change; one
    benchmark of each configuration lands in the wider interval that adds both runs' noise. Simulated: the
    expected change is covered at about the level by the first, single measured changes by the second, and
    the first misses most measured changes when the noise dwarfs the estimate's own uncertainty."""
    rng = np.random.default_rng(7)
    x = np.tile([0.0, 1.0], 200)
    frame = pd.DataFrame({"opt": x})
    sigma = 0.2 if response == "log" else 20.0

    def draw(at: np.ndarray) -> np.ndarray:
        mean = 100.0 + 30.0 * at
        return mean * np.exp(rng.normal(0, sigma, at.size) - sigma**2 / 2) if response == "log" else \
            mean + rng.normal(0, sigma, at.size)

    model = fit_linear(frame, draw(x), [Term("num", "opt")], "mlr", response=response).model  # type: ignore[arg-type]
    rows = pd.DataFrame({"opt": [0.0, 1.0]})
    d, lo, hi = model.difference(rows, 0.9)
    d_obs, lo_obs, hi_obs = model.difference(rows, 0.9, observed=True)
    assert d_obs[1] == pytest.approx(d[1]) and d[1] == pytest.approx(30.0, abs=8.0)
    assert lo_obs[1] < lo[1] < hi[1] < hi_obs[1]
    measured = draw(np.ones(4000)) - draw(np.zeros(4000))
    inside_obs = float(np.mean((lo_obs[1] <= measured) & (measured <= hi_obs[1])))
    inside_ci = float(np.mean((lo[1] <= measured) & (measured <= hi[1])))
    assert 0.85 <= inside_obs <= 0.95, inside_obs
    assert inside_ci < 0.2, inside_ci


def test_a_model_whose_held_out_prediction_overflows_is_judged_not_a_crash() -> None:
    """A log-response line extrapolated far out of fold overflows to inf: its CV R² is -inf and the spread over
    repeats is NaN (statistics.stdev raised AttributeError on an infinite value and `glmodel fit` crashed with a
    traceback on the IOPS proof's data)."""
    import math

    from gluster_model.model.validate import _sd

    assert math.isnan(_sd([float("-inf"), 0.5, 0.4])) and math.isnan(_sd([0.2, float("nan")]))
    assert _sd([0.5]) == 0.0 and _sd([1.0, 3.0]) == pytest.approx(math.sqrt(2))

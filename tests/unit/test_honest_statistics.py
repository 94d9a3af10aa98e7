"""The statistics `glmodel fit` reports: robust standard errors, importance over buildable volumes only, shares
beside what the model leaves unexplained, selection kept apart from the reported figure, adjusted R² on the
scale of the fit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from gluster_model.model.buildable import buildable, row_ok
from gluster_model.model.features import main_effect_terms, schema_from_frame
from gluster_model.model.fit import Score, fit_metric, select
from gluster_model.model.importance import from_unit, marginals, sobol_indices
from gluster_model.model.linear import coefficient_table, fit_linear
from gluster_model.model.validate import CrossValidation, Holdout


def _heteroscedastic(n: int = 80, seed: int = 3) -> pd.DataFrame:
    """Throughput whose noise grows with it, as measured throughput does (Breusch–Pagan rejects)."""
    rng = np.random.default_rng(seed)
    servers = rng.integers(1, 5, n).astype(float)
    net = rng.uniform(0.2, 1.0, n)
    mean = 40 + 80 * net + 15 * servers
    return pd.DataFrame({"servers": servers, "network_gbps": net, "config_hash": np.arange(n),
                         "write": mean * (1 + rng.normal(0, 0.05, n) * net * servers)})


def test_hc3_errors_are_statsmodels_own() -> None:
    from statsmodels.regression.linear_model import OLS

    frame = _heteroscedastic()
    y = frame["write"].to_numpy()
    schema = schema_from_frame(frame, ("servers", "network_gbps"), "write")
    ols = fit_linear(frame, y, main_effect_terms(schema), "mlr")
    table = coefficient_table(ols)
    reference = OLS(y, ols.x).fit(cov_type="HC3", use_t=True)  # t with n − k df, as the classic p
    assert [r["std_error_hc3"] for r in table] == pytest.approx(list(reference.bse), rel=1e-9)
    assert [r["p_hc3"] for r in table] == pytest.approx(list(reference.pvalues), rel=1e-6)
    # here they differ from the classic ones (a wrong program copying those would fail)
    assert any(abs(r["std_error_hc3"] / r["std_error"] - 1) > 0.1 for r in table)


def test_hc3_is_absent_without_residual_degrees_of_freedom() -> None:
    frame = pd.DataFrame({"servers": [1.0, 2.0, 3.0], "config_hash": [0, 1, 2], "write": [10.0, 21.0, 29.0]})
    schema = schema_from_frame(frame, ("servers",), "write")
    exact = frame.iloc[:2]
    table = coefficient_table(fit_linear(exact, exact["write"].to_numpy(), main_effect_terms(schema), "mlr"))
    assert all(r["p_hc3"] is None for r in table)


@pytest.mark.parametrize("row, ok", [
    ({"servers": 2, "replica": 3}, False),
    ({"servers": 3, "replica": 3}, True),
    ({"servers": 4, "layout": "distribute", "replica": 2}, False),
    ({"servers": 4, "layout": "replicate", "replica": 1}, False),
    ({"servers": 2, "layout": "disperse", "disperse": 3}, False),
    ({"servers": 6, "layout": "disperse", "disperse": 6}, True),
    ({"replica": 3}, True),
])
def test_buildable_rules(row: dict[str, object], ok: bool) -> None:
    assert row_ok(row) is ok


def _volumes(seed: int = 0) -> pd.DataFrame:
    """Measured volumes of every buildable shape on 1-4 servers, with a throughput that depends on them."""
    rng = np.random.default_rng(seed)
    rows = []
    for servers in (1, 2, 3, 4):
        for layout, replica in (("distribute", 1), ("replicate", 2), ("replicate", 3)):
            if replica <= servers:
                for _ in range(3):
                    rows.append({"servers": servers, "layout": layout, "replica": replica,
                                 "clients": int(rng.integers(1, 5)), "network_gbps": rng.uniform(0.2, 1.0)})
    frame = pd.DataFrame(rows)
    frame["config_hash"] = np.arange(len(frame))
    frame["write"] = 100 * frame["servers"] / frame["replica"] + 30 * frame["network_gbps"]
    return frame


@pytest.mark.parametrize("names", [("servers", "replica", "clients"), ("servers", "layout", "replica", "network_gbps")])
def test_importance_samples_only_volumes_that_can_be_built(names: tuple[str, ...]) -> None:
    frame = _volumes()
    schema = schema_from_frame(frame, names, "write")
    assert {"servers", "replica"} <= set(schema.names)
    u = np.random.default_rng(1).random((5000, len(schema.names)))
    sample = from_unit(u, frame, schema)
    assert buildable(sample[[c for c in sample if c != "layout" or "layout" in names]]).all()
    # independent draws from the same marginals would not be: replica above servers in a share of them
    m = marginals(frame, schema)
    servers = m.sorted["servers"][np.minimum((u[:, 0] * len(m.sorted["servers"])).astype(int), len(frame) - 1)]
    replica_col = schema.names.index("replica")
    replica = m.sorted["replica"][np.minimum((u[:, replica_col] * len(frame)).astype(int), len(frame) - 1)]
    assert np.mean(replica > servers) > 0.05
    # every measured shape is still drawn
    assert set(map(tuple, sample[["servers", "replica"]].drop_duplicates().to_numpy())) == \
        set(map(tuple, frame[["servers", "replica"]].drop_duplicates().to_numpy()))


def test_sobol_never_evaluates_the_model_on_an_impossible_volume() -> None:
    frame = _volumes()
    schema = schema_from_frame(frame, ("servers", "layout", "replica", "clients"), "write")

    def predict(rows: pd.DataFrame) -> np.ndarray:
        assert buildable(rows).all(), rows[~buildable(rows)].head()
        return np.asarray(100 * rows["servers"] / rows["replica"], dtype=float)

    imps = {i.feature: i for i in sobol_indices(predict, frame, schema, n=256, seed=2)}
    assert imps["clients"].vi < 0.02 and imps["servers"].vi > 0.3


def test_a_refit_whose_predictions_overflow_is_no_draw_of_importance() -> None:
    """A bootstrap refit on a few settings can overflow exp somewhere in the measured ranges. Its indices are
    undefined: it is left out of the interval, not counted as a VI of 0 for every input, and no numpy warning
    reaches the user. The full model's own overflow is said as NotFinite."""
    import warnings

    from gluster_model.model.importance import NotFinite, bootstrap_vi

    frame = _heteroscedastic(n=40)
    schema = schema_from_frame(frame, ("servers", "network_gbps"), "write")
    refits = iter(range(1000))

    def refit(rows: np.ndarray) -> Any:
        overflow = next(refits) % 2 == 1  # every other refit: a log model with a huge coefficient

        def predict(sample: pd.DataFrame) -> np.ndarray:
            eta = (900.0 if overflow else 1.0) * sample["network_gbps"].to_numpy(dtype=float)
            out: np.ndarray = np.exp(eta)
            return out
        return predict

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail here
        ci = bootstrap_vi(refit, frame, schema, frame["config_hash"].to_numpy(), rounds=12, n=64, seed=1,
                          point={"network_gbps": 1.0, "servers": 0.0})
    assert ci["network_gbps"][0] > 0.9  # only the finite refits: the network explains all, every time
    assert ci["servers"][1] < 0.1
    with pytest.raises(NotFinite, match="not finite"), warnings.catch_warnings():
        warnings.simplefilter("error")
        sobol_indices(lambda rows: np.exp(900.0 * rows["network_gbps"].to_numpy(dtype=float)), frame, schema, n=64)



def test_a_refit_the_model_cannot_make_is_no_draw_of_importance() -> None:
    """A resample can draw none of the settings a model needs (a stat's round-trip stage without the delay
    settings): that refit is no draw, and the others still give the interval; before, it ended `glmodel fit`."""
    from gluster_model.errors import GlmodelError
    from gluster_model.model.importance import bootstrap_vi

    frame = _heteroscedastic(n=40)
    schema = schema_from_frame(frame, ("servers", "network_gbps"), "write")
    refits = iter(range(1000))

    def refit(rows: np.ndarray) -> Any:
        if next(refits) % 3 == 0:
            raise GlmodelError("file_stat: no stage of the bottleneck model has its inputs in every run")
        return lambda sample: sample["network_gbps"].to_numpy(dtype=float)

    ci = bootstrap_vi(refit, frame, schema, frame["config_hash"].to_numpy(), rounds=12, n=64, seed=1)
    assert ci["network_gbps"][0] > 0.9 and ci["servers"][1] < 0.1

def _score(model: str, select_r2: float, report_r2: float) -> Score:
    return Score(model, "", 3, 0.9, 0.9, Holdout(0.9, 5, 0.9, 0.9, 30, 10),
                 CrossValidation(report_r2, 0, 5, 0, 5, 1), CrossValidation(select_r2, 0, 5, 0, 5, 1))


def test_selection_reads_its_own_splits_not_the_reported_ones() -> None:
    assert select([_score("mlr", 0.70, 0.95), _score("gbm", 0.90, 0.60)]) == "gbm"


def test_fit_reports_figures_from_splits_other_than_the_selection_and_the_unexplained_share() -> None:
    frame = _heteroscedastic(n=60)
    frame["config_hash"] = np.arange(len(frame))
    fit = fit_metric(frame, "write", "hardware", models=["physical"], bootstrap=0, importance_n=64, cv_repeats=2)
    for s in fit.scores:
        assert s.cv is not None and s.cv_select is not None
        assert s.cv.r2_mean != s.cv_select.r2_mean  # other seeds, other splits
    mlr_score = fit.score("mlr")
    assert mlr_score.cv is not None
    assert fit.explained["mlr"] == pytest.approx(min(max(mlr_score.cv.r2_mean, 0), 1))
    assert 0 < fit.explained["mlr"] < 1


def test_adjusted_r2_of_a_log_model_is_on_the_log_scale() -> None:
    frame = _heteroscedastic(n=60)
    fit = fit_metric(frame, "write", "hardware", models=["loglinear"], bootstrap=0, importance_n=64, cv_repeats=1)
    log = fit.score("loglinear")
    model = fit.models["loglinear"]
    y = frame["write"].to_numpy()
    eta = model.linear_predictor(frame)  # type: ignore[attr-defined]
    r2_log = 1 - np.sum((np.log(y) - eta) ** 2) / np.sum((np.log(y) - np.log(y).mean()) ** 2)
    k = model.n_params - 1
    assert log.adj_r2_scale == "log MB/s"
    assert log.adj_r2 == pytest.approx(1 - (len(y) - 1) / (len(y) - k - 1) * (1 - r2_log))
    assert fit.score("mlr").adj_r2_scale == "MB/s"


@pytest.mark.parametrize("files, bins", [(2, 2), (4, 4), (4, 2), (3, 4), (5, 3)])
def test_placement_loss_is_bins_over_the_exact_expected_occupied_bins(files: int, bins: int) -> None:
    import itertools

    from gluster_model.model.physics import placement_loss

    occupied = [len(set(p)) for p in itertools.product(range(bins), repeat=files)]
    assert placement_loss(files, bins) == pytest.approx(bins / np.mean(occupied), rel=1e-9)
    assert placement_loss(files, 1) == 1.0 and placement_loss(1, bins) == pytest.approx(bins)


def test_stages_carry_every_copy_and_the_bins_files_land_in() -> None:
    """A write's files land on subvolumes (every brick of the set takes each copy); a replicated read's on any
    brick of the set (Gluster picks one per file by GFID hash), so a read can use more bins than a write."""
    from gluster_model.model.physics import placement_loss, stages

    row = {"network_gbps": [0.8], "disk_write_mbps": [100.0], "disk_read_mbps": [200.0], "servers": [4.0],
           "clients": [2.0], "replica": [2.0], "threads": [4.0]}
    client, server, disk = stages(row, "write")[:, 0]
    loss = placement_loss(4, 2)  # 4 files over 2 replica pairs
    assert (client, server, disk) == pytest.approx((100 * 2 / 2, 100 * 4 / 2 / loss, 100 * 4 / 2 / loss))
    client, server, disk = stages(row, "read")[:, 0]
    loss = placement_loss(4, 4)  # over the 4 bricks
    assert (client, server, disk) == pytest.approx((100 * 2, 100 * 4 / loss, 200 * 4 / loss))
    dispersed = {**row, "replica": [1.0], "disperse": [4.0], "redundancy": [1.0]}
    assert stages(dispersed, "read")[2, 0] == pytest.approx(200 * 4 / placement_loss(4, 1))


@pytest.mark.parametrize("mode", ["0", "1", "2", "3", "4", "5", None])
def test_a_read_policy_decides_which_bricks_serve(mode: str | None) -> None:
    """cluster.read-hash-mode: 1 and 2 (and no column: the default) read each file from the brick a hash picks,
    so over every brick; 3-5 read by load, every brick of a file's set serving, so only the sets' placement
    loses; 0 reads from each set's first brick, so the others idle. Writes never change with it."""
    from gluster_model.model.physics import placement_loss, stages

    row: dict[str, list[object]] = {"network_gbps": [0.8], "disk_write_mbps": [100.0],
                                    "disk_read_mbps": [200.0], "servers": [4.0], "clients": [2.0],
                                    "replica": [2.0], "threads": [4.0]}
    if mode is not None:
        row["read_hash_mode"] = [mode]
    _, server, disk = stages(row, "read")[:, 0]
    loss = {"0": 2 * placement_loss(4, 2), "3": placement_loss(4, 2), "4": placement_loss(4, 2),
            "5": placement_loss(4, 2)}.get(mode or "1", placement_loss(4, 4))
    assert (server, disk) == pytest.approx((100 * 4 / loss, 200 * 4 / loss))
    assert stages(row, "write")[:, 0] == pytest.approx(stages({k: v for k, v in row.items()
                                                               if k != "read_hash_mode"}, "write")[:, 0])
    # by load on one replica pair: both servers serve, nothing is lost to placement
    pair = {**row, "servers": [2.0]}
    assert stages(pair, "read")[2, 0] == pytest.approx(200 * 2 / (placement_loss(4, 2) if mode in ("1", "2", None)
                                                                   else 2.0 if mode == "0" else 1.0))


def test_metrics_fitted_side_by_side_match_one_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forked workers per metric give the very fits the serial loop gives (seeded throughout, SALib's resamples
    included), and a metric that cannot be fitted is reported the same way."""
    import os

    from gluster_model.model import fit as fit_module

    frame = _volumes(5).assign(write=lambda f: 50 * f["servers"] * np.exp(np.random.default_rng(1).normal(0, .1, len(f))),
                               read=lambda f: 80 + 10 * f["servers"])
    frame["random_read"] = np.nan  # no data: skipped with a line, in both ways
    kw = dict(models=["loglinear"], importance_n=64, bootstrap=3, cv_repeats=1)
    side, skipped_side = fit_module.fit_frame(frame, "hardware", None, **kw)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
    alone, skipped_alone = fit_module.fit_frame(frame, "hardware", None, **kw)
    assert [f.metric for f in side] == [f.metric for f in alone] == ["write", "read"]
    assert skipped_side == skipped_alone
    from gluster_model.model import artifact

    def body(fits: list) -> dict:  # type: ignore[type-arg]
        out = artifact.build(fits, {"data": "synthetic"})
        out.pop("created", None)
        return out

    assert body(side) == body(alone)

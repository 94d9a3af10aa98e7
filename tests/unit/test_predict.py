"""glmodel predict on a model fitted from synthetic trials: same numbers as the fitted models, honest intervals
and extrapolation flags, one-line errors for bad scenario files, hand-checked costs and capacity."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from gluster_model.cli import cli
from gluster_model.errors import ConfigError
from gluster_model.model import artifact
from gluster_model.model.fit import fit_metric
from gluster_model.predict.capacity import layout_of, usable_fraction
from gluster_model.predict.scenarios import Question, Scenario, question
from gluster_model.predict.whatif import Prediction, _costs, model_inputs, what_if


def _trials() -> pd.DataFrame:
    """Three trials per configuration; clients always equal servers (so moving one alone leaves the data)."""
    rng = np.random.default_rng(3)
    rows = []
    for net, servers, replica, fs in itertools.product([1.0, 10.0], [1, 2, 4], [1, 2], ["ext4", "xfs"]):
        bottleneck = min(net * 125 * servers / replica, 400.0 * servers / replica)
        for _ in range(3):
            rows.append({"network_gbps": net, "servers": servers, "clients": servers, "replica": replica,
                         "base_filesystem": fs, "disk_read_mbps": 500.0, "disk_write_mbps": 400.0,
                         "file_size": 1 << 30, "threads": 4, "client_ram_gb": 16.0, "shard": False,
                         "config_hash": f"{net}-{servers}-{replica}-{fs}",
                         "write": bottleneck * (1.1 if fs == "xfs" else 1.0) * rng.lognormal(0, 0.05)})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, object, Path]:
    frame = _trials()
    fit = fit_metric(frame, "write", "hardware", bootstrap=0, importance_n=64, cv_repeats=1)
    path = tmp_path_factory.mktemp("model") / "model.json"
    artifact.save(artifact.build([fit], {"store": "synthetic"}), path)
    return frame, fit, path


def _ask(path: Path, candidates: dict[str, dict[str, object]], baseline: dict[str, object] | None = None,
         use: str | None = None, level: float = 0.9) -> object:
    mf = artifact.load(path)
    q = Question(Scenario("base", baseline or {}, baseline=True),
                 [Scenario(name, values) for name, values in candidates.items()])
    return what_if(mf, q, use=use, level=level)


def test_predictions_equal_the_fitted_models_own(fitted: tuple) -> None:
    frame, fit, path = fitted
    row = frame.iloc[[7]].reset_index(drop=True)
    values = {k: row.loc[0, k] for k in ("network_gbps", "servers", "clients", "replica", "base_filesystem")}
    values = {k: (v.item() if hasattr(v, "item") else v) for k, v in values.items()}
    for name, model in fit.models.items():
        answer = _ask(path, {"row": values}, use=name)
        got = answer.metrics[0].predictions[1]
        from gluster_model.model.features import with_derived

        assert got.value == pytest.approx(float(model.predict(with_derived(row, "write"))[0]), rel=1e-12), name
        # an answer of the bottleneck model is for a campaign other than the data's: its term is in
        lo, hi = model.interval(with_derived(row, "write"), 0.9, new_campaign=name == "bottleneck")
        # Same interval, except that a lower bound below zero MB/s is shown as zero (for a positive prediction).
        low = max(float(lo[0]), 0.0) if got.value >= 0 else float(lo[0])
        assert (got.low, got.high) == (pytest.approx(low), pytest.approx(float(hi[0])))


def test_the_model_file_predicts_as_its_models_do_with_the_change_against_the_first(fitted: tuple) -> None:
    from gluster_model.model import artifact
    from gluster_model.model.features import with_derived

    frame, fit, path = fitted
    mf = artifact.load(path)
    keys = ("network_gbps", "servers", "clients", "replica", "base_filesystem")
    rows = frame.iloc[[0, 7, 11]].reset_index(drop=True)
    reference = mf.domain("write").reference  # every input the model takes, at the data's reference values
    configs = [{**reference, **{k: (v.item() if hasattr(v, "item") else v) for k, v in rows.loc[i, list(keys)].items()}}
               for i in range(3)]
    for name, model in fit.models.items():
        got = mf.predict(configs, 0.8, metric="write", use=name)
        x = with_derived(pd.DataFrame(configs), "write")
        assert got.model == name and got.value == pytest.approx(model.predict(x), rel=1e-12)
        lo, hi = model.interval(x, 0.8)
        assert got.low == pytest.approx(lo) and got.high == pytest.approx(hi)
        change = got.value[1:] - got.value[0]  # the change's interval holds the change (NaN: a model without one)
        assert np.all((got.delta_low[1:] <= change) & (change <= got.delta_high[1:]) | np.isnan(got.delta_low[1:]))
    assert mf.predict(configs, metric="write").model == mf.selected("write")


def test_measured_configuration_shows_its_measured_mean(fitted: tuple) -> None:
    frame, _, path = fitted
    answer = _ask(path, {"x": {"network_gbps": 10, "servers": 2, "clients": 2, "replica": 1,
                               "base_filesystem": "xfs"}})
    p = answer.metrics[0].predictions[1]
    rows = frame[(frame.network_gbps == 10) & (frame.servers == 2) & (frame.replica == 1)
                 & (frame.base_filesystem == "xfs")]
    assert p.basis == "measured" and p.flags == [] and p.distance == pytest.approx(0, abs=1e-9)
    assert p.measured_trials == 3 and p.measured_mean == pytest.approx(rows["write"].mean())


def test_intervals_contain_the_point_and_widen_outside_the_data(fitted: tuple) -> None:
    _, fit, path = fitted
    inside = {"network_gbps": 10, "servers": 2, "clients": 2, "replica": 1}
    outside = {"network_gbps": 100, "servers": 16, "clients": 16, "replica": 1}
    for name in fit.models:
        answer = _ask(path, {"inside": inside, "outside": outside}, use=name)
        for p in answer.metrics[0].predictions:
            assert p.low <= p.value <= p.high, (name, p)
    mlr = _ask(path, {"inside": inside, "outside": outside}, use="mlr").metrics[0].predictions
    assert mlr[2].high - mlr[2].low > 1.5 * (mlr[1].high - mlr[1].low)
    assert 0.99 * (mlr[1].high - mlr[1].low) > _widths(path, inside, 0.5)


def _widths(path: Path, values: dict[str, object], level: float) -> float:
    p = _ask(path, {"x": values}, use="mlr", level=level).metrics[0].predictions[1]
    return p.high - p.low


def test_out_of_range_and_far_combinations_are_flagged(fitted: tuple) -> None:
    _, _, path = fitted
    answer = _ask(path, {"eight servers": {"servers": 8, "clients": 8},
                         "clients apart": {"servers": 4, "clients": 1},
                         "disk never varied": {"disk_write_mbps": 2000}},
                  baseline={"network_gbps": 1, "servers": 2, "clients": 2, "replica": 1})
    base, eight, apart, disk = answer.metrics[0].predictions
    assert base.basis in ("measured", "interpolated") and not base.flags
    assert eight.basis == "extrapolated" and any("servers 8 is outside the measured 1–4" in f for f in eight.flags)
    # Inside every range, but clients never moved apart from servers: hidden extrapolation.
    assert apart.basis == "extrapolated" and not any("outside" in f for f in apart.flags)
    assert any(f.startswith("moves servers, clients in a way the data never did") for f in apart.flags)
    assert any("disk write (MB/s) 2000, but the write data only have 400" in f for f in disk.flags)


def test_domain_finds_corners_and_holes_inside_the_ranges() -> None:
    from gluster_model.model.domain import build_domain

    # A 5×5 grid of (servers, threads) with its middle 3×3 block never measured, plus an L of (network, replica).
    levels = (1, 2, 4, 8, 16)  # even steps on the log2 scale the domain uses for positive numbers
    grid = [(a, b) for a in levels for b in levels if not (2 <= a <= 8 and 2 <= b <= 8)]
    ring = pd.DataFrame({"servers": [g[0] for g in grid], "threads": [g[1] for g in grid], "write": 1.0})
    domain = build_domain(ring, ["servers", "threads"], "write")
    middle, edge = domain.outside({"servers": [4, 1], "threads": [4, 2]})
    assert middle[0].startswith("a workload far from every measured one") and edge == []
    ell = pd.DataFrame({"threads": [1, 1, 1, 10, 40], "replica": [1, 2, 3, 1, 1], "write": 1.0})
    domain = build_domain(ell, ["threads", "replica"], "write")
    corner = domain.outside({"threads": [40, 1], "replica": [3, 2]})
    assert corner[0][0].startswith("a workload outside the region the measured ones span") and corner[1] == []


def test_hardware_is_judged_against_the_measured_settings_as_points() -> None:
    """Three hardware settings in an L (slow link + slow disk, fast link + slow disk, slow link + fast disk),
    each measured with a different subset of workloads. The missing corner (fast link and fast disk) lies inside
    every per-input range but is extrapolated; a measured setting asked with a workload measured only at another
    setting is not; the midpoint of two measured settings is a mix of them, so not extrapolated either."""
    from gluster_model.model.domain import build_domain

    rows = []
    for (net, disk), replicas in {(1.0, 100.0): (1, 2), (10.0, 100.0): (1, 3), (1.0, 400.0): (2, 3)}.items():
        rows += [{"network_gbps": net, "disk_write_mbps": disk, "replica": r, "write": 1.0} for r in replicas]
    domain = build_domain(pd.DataFrame(rows), ["network_gbps", "disk_write_mbps", "replica"], "write")
    assert domain.n_settings == 3 and [f.name for f in domain.hardware] == ["network_gbps", "disk_write_mbps"]
    corner, measured, mix = domain.outside({"network_gbps": [10.0, 10.0, 3.1623], "disk_write_mbps": [400.0, 100.0, 100.0],
                                            "replica": [1, 2, 2]})
    assert len(corner) == 1 and corner[0].startswith("hardware never measured: neither one of the 3 measured")
    assert measured == [] and mix == []


def test_bottleneck_is_the_input_with_the_largest_elasticity(fitted: tuple) -> None:
    _, _, path = fitted
    # At 1 Gbit/s with 2 servers the network (125 MB/s per link) limits writes, not the disks (400 MB/s).
    answer = _ask(path, {"x": {"network_gbps": 10}}, baseline={"network_gbps": 1, "servers": 2, "clients": 2,
                                                                   "replica": 1}, use="physical")
    m = answer.metrics[0]
    assert m.bottleneck is not None and m.bottleneck.feature == "network_gbps"
    elastic = {lv.feature: lv.elasticity for lv in m.levers if lv.kind == "elasticity" and not lv.off_data}
    assert m.bottleneck.elasticity == max(e for e in elastic.values() if e == e)
    # servers alone (without clients) leaves the data: such a lever is marked and never the bottleneck.
    off = [lv.feature for lv in m.levers if lv.off_data]
    assert "servers" in off and "clients" in off


def test_costs_rank_by_gain_per_price_and_say_why_not() -> None:
    """By hand: baseline 100 MB/s. a +100 for 1000 (0.1/unit), b +60 for 500 (0.12/unit), c +300 for 4000
    (0.075/unit); d loses 10; e gains 3 ± 5 (interval holds 0); f is extrapolated; g has no price; h is above
    its hardware's ceiling. Ranked: b, a, c."""
    scen = [Scenario("base", {}, baseline=True), Scenario("a", {}, price=1000.0), Scenario("b", {}, price=500.0),
            Scenario("c", {}, price=4000.0), Scenario("d", {}, price=100.0), Scenario("e", {}, price=10.0),
            Scenario("f", {}, price=10.0), Scenario("g", {}), Scenario("h", {}, price=10.0)]
    values = [100.0, 200.0, 160.0, 400.0, 90.0, 103.0, 500.0, 150.0, 900.0]
    preds = [Prediction(s.name, v, v * 0.8, v * 1.2, "extrapolated" if s.name == "f" else "interpolated", 0.0,
                        price=s.price) for s, v in zip(scen, values)]
    for p in preds[1:]:
        d = p.value - 100.0
        p.delta_low, p.delta_high = (d - 5.0, d + 5.0)
    preds[-1].ceiling, preds[-1].ceiling_stage = 250.0, "client links"
    _costs(preds, scen)
    by = {p.scenario: p for p in preds}
    assert [p.scenario for p in sorted((p for p in preds if p.rank), key=lambda p: p.rank)] == ["b", "a", "c"]
    assert by["b"].gain_per_cost == pytest.approx(60 / 500) and by["a"].price_per_gain == pytest.approx(10.0)
    assert by["d"].not_ranked == "loses throughput" and by["d"].effect == "loss"
    assert by["e"].effect == "no measurable effect" and by["e"].not_ranked.startswith("no measurable effect")
    assert by["f"].not_ranked.startswith("extrapolated") and by["g"].not_ranked == "no price given"
    assert by["h"].above_ceiling and by["h"].not_ranked == "predicted above what its client links can carry"
    assert by["d"].delta == pytest.approx(-10) and by["d"].delta_pct == pytest.approx(-10)
    assert all(by[n].rank is None for n in "defgh")
    # b's gain per price, 0.11-0.13 at the ends of its change's interval, is clear of a's 0.095-0.105: no tie
    assert by["b"].tied_with == [] and by["a"].tied_with == []


def test_a_best_buy_whose_gain_per_price_another_may_reach_is_tied_with_it() -> None:
    """By hand: b gains 60 (55-65) for 500, 0.11-0.13 a unit; a gains 100 for 1000 with an interval up to 115,
    0.115 at best, above b's worst 0.11: tied; c (0.074-0.076) is not; an extrapolated d that might gain more is
    never a tie, as it is never ranked."""
    scen = [Scenario("base", {}, baseline=True), Scenario("a", {}, price=1000.0), Scenario("b", {}, price=500.0),
            Scenario("c", {}, price=4000.0), Scenario("d", {}, price=500.0)]
    preds = [Prediction(s.name, v, v * 0.8, v * 1.2, "extrapolated" if s.name == "d" else "bounded", 0.0,
                        price=s.price) for s, v in zip(scen, [100.0, 200.0, 160.0, 400.0, 300.0])]
    for p, (lo, hi) in zip(preds[1:], [(85.0, 115.0), (55.0, 65.0), (295.0, 305.0), (150.0, 250.0)]):
        p.delta_low, p.delta_high = lo, hi
    _costs(preds, scen)
    by = {p.scenario: p for p in preds}
    assert by["b"].rank == 1 and by["b"].tied_with == ["a"] and by["a"].tied_with == []
    # a's best end just short of b's worst: no longer tied
    preds[1].delta_high = 109.0
    _costs(preds, scen)
    assert by["b"].tied_with == []


def test_an_upgrade_of_the_binding_stage_with_an_unsure_gain_is_never_called_no_gain() -> None:
    """By hand, two bounded candidates whose change's interval holds zero: one predicted exactly as today (its
    stage does not bind: "no gain", and which stage still limits), one predicted +50% with an interval from -14%
    to +140% (it moves the binding stage, by less than the model can vouch for: an unsure gain, never "no gain").
    Neither is ranked."""
    scen = [Scenario("base", {}, baseline=True), Scenario("link", {}, price=400.0), Scenario("cpu", {}, price=3000.0)]
    preds = [Prediction(s.name, v, v * 0.6, v * 1.6, "bounded", 0.0, price=s.price)
             for s, v in zip(scen, [1000.0, 1000.0, 1500.0])]
    preds[1].delta_low, preds[1].delta_high = -300.0, 300.0
    preds[2].delta_low, preds[2].delta_high = -140.0, 1400.0
    for p in preds:
        p.binds_after = "client CPU"
    _costs(preds, scen)
    by = {p.scenario: p for p in preds}
    assert by["link"].not_ranked == ("no gain: after it the client CPU still limit (the change's interval includes "
                                     "zero)")
    assert by["cpu"].not_ranked == ("gain not sure: +50% predicted, after it the client CPU limit, but the change's "
                                    "interval includes zero")
    assert by["link"].rank is None and by["cpu"].rank is None and by["cpu"].reason == "no effect"


def _truth(net: float, servers: int, replica: int, fs: str = "ext4") -> float:
    """The formula the fixture's trials were drawn from (median of the noise)."""
    return min(net * 125 * servers / replica, 400.0 * servers / replica) * (1.1 if fs == "xfs" else 1.0)


def test_best_upgrade_in_a_scenario_file(fitted: tuple, tmp_path: Path) -> None:
    """By hand from the fixture's formula: today (1 Gbit/s, 2 servers, replica 2) writes 125 MB/s; 10 Gbit/s
    writes 400 (+275 for 2000: 0.1375 per unit), one copy 250 (+125 for 100: 1.25 per unit). One copy wins."""
    _, _, path = fitted
    f = tmp_path / "buy.yaml"
    f.write_text("currency: EUR\nbaseline: {name: today, set: {network_gbps: 1, servers: 2, clients: 2, "
                 "replica: 2, base_filesystem: ext4}, server_tb: 10}\ncandidates:\n"
                 "  - {name: faster network, set: {network_gbps: 10}, price: 2000}\n"
                 "  - {name: one copy, set: {replica: 1}, price: 100}\n")
    mf = artifact.load(path)
    answer = what_if(mf, question(model_inputs(mf, mf.metrics), f, []))
    m = answer.metrics[0]
    # One copy gains most per price, but gives up redundancy: listed apart, never ranked against purchases.
    one = next(p for p in m.predictions if p.scenario == "one copy")
    assert one.rank is None and one.reason == "gives up" and "1 copy, not 2" in one.not_ranked
    # its gain is shown, but no gain per price: only a ranked candidate carries a number to rank by
    assert one.delta == pytest.approx(_truth(1, 2, 1) - _truth(1, 2, 2), rel=0.15)
    assert one.gain_per_cost is None and one.price_per_gain is None
    assert answer.gives_up() == {"one copy": "redundancy: 1 copy, not 2, so a failed brick loses data"}
    net = next(p for p in m.predictions if p.scenario == "faster network")
    assert m.best_upgrade == "faster network" and net.rank == 1
    assert net.gain_per_cost == pytest.approx(275 / 2000, rel=0.15)
    cap = {c.scenario: c for c in answer.capacity}
    assert cap["today"].raw_tb == 20 and cap["today"].usable_tb == pytest.approx(10)
    assert cap["one copy"].usable_tb == pytest.approx(20) and cap["one copy"].layout == "distribute"


def test_predictions_match_the_formula_the_data_came_from(fitted: tuple) -> None:
    """The selected model, asked measured and interpolated configurations, is within 10% of the generating
    formula (5% lognormal noise, 3 trials each)."""
    _, _, path = fitted
    points = {"a": (1.0, 2, 1), "b": (10.0, 4, 2), "c": (1.0, 4, 2), "d": (10.0, 1, 1)}
    answer = _ask(path, {k: {"network_gbps": n, "servers": s, "clients": s, "replica": r, "base_filesystem": "ext4"}
                         for k, (n, s, r) in points.items()})
    for p in answer.metrics[0].predictions[1:]:
        assert p.value == pytest.approx(_truth(*points[p.scenario]), rel=0.10), p.scenario
        assert p.basis != "extrapolated"


def test_change_interval_is_the_contrast_not_two_prediction_intervals(fitted: tuple) -> None:
    """For the MLR the change's interval is statsmodels' own t-test of the contrast x1 − x0; it is far narrower
    than the gap between the two prediction intervals."""
    import statsmodels.api as sm

    from gluster_model.model.features import design_matrix, with_derived

    frame, fit, path = fitted
    answer = _ask(path, {"net": {"network_gbps": 10}}, baseline={"network_gbps": 1, "servers": 2, "clients": 2,
                                                                   "replica": 1}, use="mlr", level=0.9)
    base, net = answer.metrics[0].predictions
    mlr = fit.models["mlr"]
    rows = with_derived(pd.DataFrame([answer.scenarios["base"], answer.scenarios["net"]]), "write")
    x = design_matrix(rows, mlr.terms)[:, mlr.kept]
    c = np.concatenate([[0.0], x[1] - x[0]])
    xfit = np.column_stack([np.ones(len(frame)), design_matrix(with_derived(frame, "write"), mlr.terms)[:, mlr.kept]])
    res = sm.OLS(frame["write"].to_numpy(), xfit).fit()
    test = res.t_test(c[None, :])
    lo, hi = np.asarray(test.conf_int(alpha=0.1))[0]
    assert (net.delta_low, net.delta_high) == (pytest.approx(lo), pytest.approx(hi))
    assert net.delta == pytest.approx(float(test.effect[0]))
    assert net.delta_high - net.delta_low < 0.8 * ((net.high - net.low) + (base.high - base.low))


def test_log_model_change_interval_by_the_delta_method(fitted: tuple) -> None:
    """Physical model (log response): the interval's half-width equals t·sqrt(g'Cg) with g computed here by
    finite differences of the prediction in the coefficients."""
    from scipy.special import stdtrit

    from gluster_model.model.features import with_derived

    _, fit, path = fitted
    answer = _ask(path, {"net": {"network_gbps": 10}}, baseline={"network_gbps": 1, "servers": 2, "clients": 2,
                                                                   "replica": 1}, use="physical")
    net = answer.metrics[0].predictions[1]
    model = fit.models["physical"]
    rows = with_derived(pd.DataFrame([answer.scenarios["base"], answer.scenarios["net"]]), "write")
    base_params = model.params.copy()
    grad = np.empty(len(base_params))
    for j in range(len(base_params)):
        step = np.zeros_like(base_params)
        step[j] = 1e-6
        model.params = base_params + step
        up = model.predict(rows)
        model.params = base_params - step
        down = model.predict(rows)
        grad[j] = ((up[1] - up[0]) - (down[1] - down[0])) / 2e-6
    model.params = base_params
    half = float(stdtrit(model.df_resid, 0.95)) * float(np.sqrt(grad @ model.cov @ grad))
    assert (net.delta_high - net.delta_low) / 2 == pytest.approx(half, rel=1e-4)


def test_capacity_arithmetic() -> None:
    assert usable_fraction("replicate", replica=3) == pytest.approx(1 / 3)
    assert usable_fraction("disperse", disperse=6, redundancy=2) == pytest.approx(4 / 6)
    assert usable_fraction("distribute") == 1.0
    assert layout_of(None, 2, 0) == "replicate" and layout_of(None, 1, 6) == "disperse"
    with pytest.raises(ValueError):
        usable_fraction("disperse", disperse=4, redundancy=4)


@pytest.mark.parametrize("body, where, says", [
    ("candidates:\n  - {name: x, set: {netwrok_gbps: 10}}\n", "candidates[0].set.netwrok_gbps",
     "unknown feature; this model's inputs are"),
    ("candidates:\n  - {name: x, set: {servers: many}}\n", "candidates[0].set.servers", "'many' is not a number"),
    ("candidates:\n  - {name: x, set: {base_filesystem: btrfs}}\n", "candidates[0].set.base_filesystem",
     "'btrfs' was never measured for base_filesystem (measured: "),
    ("candidates:\n  - {name: x, set: {}, prize: 3}\n", "candidates[0].prize", "unknown key"),
    ("baseline: {set: {replica: true}}\ncandidates: [{name: x}]\n", "baseline.set.replica", "True is not a number"),
])
def test_bad_scenario_file_gives_one_line(fitted: tuple, tmp_path: Path, body: str, where: str, says: str) -> None:
    _, _, path = fitted
    f = tmp_path / "bad.yaml"
    f.write_text(body)
    result = CliRunner().invoke(cli, ["predict", "--model", str(path), "--scenarios", str(f)])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"glmodel: error: {f}: {where}: {says}"), result.output


def test_bad_set_option_gives_one_line(fitted: tuple) -> None:
    _, _, path = fitted
    result = CliRunner().invoke(cli, ["predict", "--model", str(path), "--set", "servers"])
    assert result.exit_code == 2 and "--set: servers: expected name=value" in result.output
    with pytest.raises(ConfigError, match="network_gbps: 'fast' is not a number"):
        mf = artifact.load(path)
        question(model_inputs(mf, mf.metrics), None, ["network_gbps=fast"])


def test_cli_json_csv_and_figure(fitted: tuple, tmp_path: Path) -> None:
    _, _, path = fitted
    out = CliRunner().invoke(cli, ["predict", "--model", str(path), "--set", "servers=4", "--set", "clients=4",
                                   "--json", "--csv", str(tmp_path / "p.csv"), "--figure", str(tmp_path / "p.png")])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    preds = doc["metrics"][0]["predictions"]
    assert [p["scenario"] for p in preds] == ["reference", "--set"] and preds[1]["delta"] is not None
    csv = (tmp_path / "p.csv").read_text().splitlines()
    assert csv[0].startswith("metric,model,scenario,predicted_mbps") and len(csv) == 3
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_predict_with_a_linear_model_skips_the_heavy_stack(fitted: tuple) -> None:
    _, _, path = fitted
    code = ("import sys\nfrom gluster_model.cli import main\nsys.argv = ['glmodel', 'predict', '--model', "
            f"{str(path)!r}, '--use', 'mlr', '--set', 'servers=4', '--json']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "heavy = [m for m in ('pandas', 'statsmodels', 'sklearn', 'SALib', 'matplotlib') if m in sys.modules]\n"
            "print('HEAVY', heavy, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "HEAVY []" in done.stderr, done.stderr
    assert json.loads(done.stdout)["metrics"][0]["model"] == "mlr"


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[2] / "experiments/whatif").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_shipped_scenario_files_are_valid(path: Path) -> None:
    from gluster_model.dataset import FAMILIES
    from gluster_model.model.features import DERIVED_INPUTS
    from gluster_model.predict.scenarios import ScenarioFile
    from gluster_model.config.yamlio import load_model

    spec = load_model(path, ScenarioFile, "with baseline and candidates")
    known = {*FAMILIES["unified"], *DERIVED_INPUTS}
    used = {k for s in (spec.baseline, *spec.candidates) for k in s.set}
    assert used <= known, used - known
    assert spec.candidates


def test_text_from_a_scenario_file_reaches_the_terminal_without_control_characters(fitted: tuple,
                                                                                  tmp_path: Path) -> None:
    """A scenario name carrying an escape sequence, a carriage return or rich markup is printed as text: no
    control character reaches the terminal and no markup is interpreted."""
    _, _, path = fitted
    f = tmp_path / "evil.yaml"
    f.write_text('currency: "EU\\x1b[31mR"\nbaseline: {name: "to\\rday", set: {network_gbps: 1, servers: 2, '
                 'clients: 2, replica: 2}}\ncandidates:\n  - {name: "[bold]x\\x1b[2J\\u202e", set: {replica: 1}, '
                 'price: 100}\n')
    for args in ([], ["--details"]):
        out = CliRunner().invoke(cli, ["predict", "--model", str(path), "--scenarios", str(f), *args])
        assert out.exit_code == 0, out.output
        assert not any(ch in out.output for ch in "\x1b\r\u202e"), repr(out.output)
        assert "[bold]x?[2J?" in out.output and "to?day" in out.output


def test_headroom_says_how_far_each_resource_can_fall_before_it_limits(tmp_path: Path) -> None:
    """Writes are min(0.9 × link, disk) MB/s; RAM does nothing. At 1 Gbit/s (112 MB/s) and 200 MB/s disks the
    link limits: it has no headroom, the disks can fall to about 107/200 = 53% before writes drop 5%, and RAM
    can fall to the least measured value without a drop."""
    from gluster_model.present.predict import headroom_line

    rng = np.random.default_rng(1)
    rows = []
    for net, disk, ram in itertools.product([0.25, 0.5, 0.75, 1.0], [50.0, 100.0, 150.0, 200.0], [0.5, 1.0, 2.0]):
        for _ in range(2):
            rows.append({"network_gbps": net, "disk_write_mbps": disk, "disk_read_mbps": disk, "client_ram_gb": ram,
                         "servers": 2, "clients": 2, "replica": 1, "file_size": 1 << 30, "threads": 4,
                         "shard": False, "config_hash": f"{net}-{disk}-{ram}",
                         "write": min(net * 125 * 0.9, disk) * rng.lognormal(0, 0.02)})
    fit = fit_metric(pd.DataFrame(rows), "write", "hardware", bootstrap=0, importance_n=64, cv_repeats=1)
    path = tmp_path / "m.json"
    artifact.save(artifact.build([fit], {"store": "synthetic"}), path)
    today = {"network_gbps": 1.0, "disk_write_mbps": 200.0, "disk_read_mbps": 200.0, "client_ram_gb": 2.0}
    m = _ask(path, {"half link": {"network_gbps": 0.5}}, baseline=today, use="physical").metrics[0]
    room = {h.resource: h for h in m.headroom}
    assert m.bottleneck is not None and m.bottleneck.feature == "network_gbps"
    assert room["network link"].limited and room["network link"].share == 1.0
    # the disks' read and write rates fall together, as a slower disk's do (the data never moved one alone)
    assert room["disks"].limited and 0.45 <= room["disks"].share <= 0.7
    assert room["disks"].floor["disk_write_mbps"] == pytest.approx(200 * room["disks"].share)
    assert not room["client RAM"].limited and room["client RAM"].share == pytest.approx(0.25)
    line = headroom_line(m)
    assert line.startswith("Headroom for write (a fall of under 5%): network link: none;"), line
    assert "or less (no drop down to the least measured)" in line


def test_max_and_min_name_a_measured_setting_whole() -> None:
    """Each setting was measured as a whole: 'max' of every input is the setting nearest the top of all of them
    (not the highest link of one setting with the highest disk of another), and 'min' of one input the setting
    where it is lowest and the rest are most like the baseline."""
    from gluster_model.predict.scenarios import measured_extremes

    settings = [{"network_gbps": 9.1, "disk_write_mbps": 980.0}, {"network_gbps": 9.4, "disk_write_mbps": 240.0},
                {"network_gbps": 2.3, "disk_write_mbps": 1010.0}, {"network_gbps": 4.6, "disk_write_mbps": 480.0}]
    today = measured_extremes({"network_gbps": "max", "disk_write_mbps": "max"}, {}, settings)
    assert today == {"network_gbps": 9.1, "disk_write_mbps": 980.0}
    less_link = measured_extremes({"network_gbps": "min"}, today, settings)
    assert less_link == {"network_gbps": 2.3, "disk_write_mbps": 1010.0}
    assert measured_extremes({"network_gbps": 5.0}, today, settings) == {"network_gbps": 5.0}  # no extreme asked
    assert measured_extremes({"network_gbps": "max"}, {}, []) == {"network_gbps": "max"}  # left to coerce


def test_prices_in_one_column_read_alike() -> None:
    from gluster_model.present.predict import money

    assert [money(v) for v in (50, 100, 1500)] == ["50", "100", "1,500"]  # whole prices never grow cents
    assert money(1.375, "EUR") == "1.38 EUR" and money(None) == "-"  # a small amount keeps its cents

def test_a_combined_upgrades_parts_change_its_inputs_to_its_own_values() -> None:
    """'CPU x2 and link x2' is made of 'CPU x2' and 'link x2', not of 'CPU x4' (the same input, another value)."""
    from gluster_model.predict.whatif import Answer, parts_of

    base = {"cpu_score": 50.0, "network_gbps": 1.0}
    scenarios = {"today": base, "CPU x2": {**base, "cpu_score": 100.0}, "CPU x4": {**base, "cpu_score": 200.0},
                 "link x2": {**base, "network_gbps": 2.0}, "both": {"cpu_score": 100.0, "network_gbps": 2.0}}
    a = Answer("m.json", 0.9, "EUR", "today", scenarios, [], [], [], {}, [])
    assert parts_of(a, "both") == ["CPU x2", "link x2"]
    assert parts_of(a, "CPU x4") == [] and parts_of(a, "link x2") == []


def test_a_stage_of_another_resource_within_the_model_s_error_is_named_close_behind() -> None:
    """Today's limit names the next stage fed by another resource when its capacity is within the model's error
    of the binding one (then an upgrade of it alone is no sure 'no gain'); server links move with client links
    (one link) and are never that stage."""
    import math

    from gluster_model.model.bottleneck import ALL_STAGES
    from gluster_model.predict.whatif import MetricAnswer, close_behind

    class Model:
        def quantile(self, stage: str, level: float, trials: float = 1) -> float:
            assert stage == "client links" and level == 0.9 and trials == math.inf
            return 0.2  # x1.22

    names = list(ALL_STAGES[:4])  # client links, server links, server disks, client CPU
    assert close_behind(Model(), np.array([100.0, 101.0, 500.0, 115.0]), names, 0.9) == "client CPU"
    assert close_behind(Model(), np.array([100.0, 101.0, 500.0, 130.0]), names, 0.9) == ""
    assert close_behind(Model(), np.array([100.0, 101.0, 110.0, 115.0]), names, 0.9) == "server disks"
    m = MetricAnswer("write", "bottleneck", 1.0, [], [], None, None, limit="client links", close_behind="client CPU")
    assert m.limit_text == "client links, with the client CPU within the model's error of them"
    assert MetricAnswer("write", "bottleneck", 1.0, [], [], None, None, limit="client links").limit_text == \
        "client links"

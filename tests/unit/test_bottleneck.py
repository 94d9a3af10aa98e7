"""The bottleneck model and upgrade answers: its fit, its bound, its intervals (by simulation), its file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from gluster_model.dataset import FAMILIES
from gluster_model.errors import GlmodelError
from gluster_model.model.bottleneck import (STAGES, BottleneckModel, conformal_quantiles, fit_bottleneck,
                                            weighted_quantile)
from gluster_model.model.features import schema_from_frame
from gluster_model.model.physics import stages
from gluster_model.model.groups import GROUP
from gluster_model.predict.whatif import upgrade_bound

EFFICIENCY = np.array([0.9, 0.85, 0.8])  # client links, server links, server disks


def cluster_rows(link: float, disk: float, runs: int, rng: np.random.Generator, setting_sd: float = 0.06,
                 run_sd: float = 0.04, ram: float = 1.0) -> pd.DataFrame:
    """Runs of one hardware setting of a 2-server, 2-client replica-2 cluster whose truth is a bottleneck: each
    setting shares one error (its placement draw, its baselines), each run adds its own."""
    frame = pd.DataFrame({"network_gbps": link, "disk_read_mbps": disk, "disk_write_mbps": disk,
                          "client_ram_gb": ram, "cpu_score": 150.0, "base_filesystem": "ext4", "servers": 2,
                          "clients": 2, "shard": False, "replica": 2.0, "disperse": 0, "redundancy": 0,
                          "file_size": 64 << 20, "threads": 4, "layout": "replicate",
                          GROUP: f"{link}-{disk}-{ram}"}, index=range(runs))
    truth = np.min(stages(frame, "write") * EFFICIENCY[:, None], axis=0)
    frame["write"] = truth * np.exp(rng.normal(0, setting_sd) + rng.normal(0, run_sd, size=runs))
    return frame


def below_today(link: float, disk: float, rng: np.random.Generator, runs: int = 2) -> pd.DataFrame:
    """The bottleneck plan relative to today: today, link and disk at 50% and 25%, both at 50%."""
    shares = [(1, 1), (0.5, 1), (0.25, 1), (1, 0.5), (1, 0.25), (0.5, 0.5)]
    return pd.concat([cluster_rows(link * a, disk * b, runs, rng) for a, b in shares], ignore_index=True)


def fitted(frame: pd.DataFrame) -> BottleneckModel:
    y = frame["write"].to_numpy(float)
    return fit_bottleneck(frame, y, schema_from_frame(frame, FAMILIES["hardware"], "write"), "write")


def test_noise_free_data_give_back_each_stages_efficiency() -> None:
    rng = np.random.default_rng(0)
    frame = below_today(0.4, 40, rng)
    frame["write"] = np.min(stages(frame, "write") * EFFICIENCY[:, None], axis=0)
    model = fitted(frame)
    eff = np.exp(model.log_eff)
    # client and server links have one capacity on this cluster (2 clients, 2 servers, replica 2): the fit may
    # credit either; the disks' efficiency is identified alone
    assert eff[2] == pytest.approx(0.8, rel=1e-6)
    assert min(eff[0], eff[1]) == pytest.approx(0.85, rel=1e-6)
    np.testing.assert_allclose(model.predict(frame), frame["write"], rtol=1e-6)
    # an upgrade of the link alone stops where the disks bind: at 0.8 of the disks' measured 40 MB/s
    up = frame.iloc[:1].assign(network_gbps=1.6)
    assert float(model.predict(up)[0]) == pytest.approx(0.8 * 40, rel=1e-6)
    assert STAGES[int(model.binding(up)[0])] == "server disks"


def test_a_stage_no_run_is_bound_by_gets_an_assumed_efficiency_that_binds_no_training_run() -> None:
    rng = np.random.default_rng(1)
    frame = pd.concat([cluster_rows(0.2 * s, 200, 2, rng) for s in (1, 0.5, 0.25)], ignore_index=True)
    model = fitted(frame)
    assert model.assumed[2] and not all(model.assumed[:2])  # the two link stages tie on this cluster
    assert (model.binding(frame) != 2).all()


def test_the_bound_is_never_exceeded_by_the_prediction() -> None:
    rng = np.random.default_rng(2)
    for _ in range(500):
        limits = rng.uniform(1, 500, size=3)
        raised = [("network_gbps",), ("disk_read_mbps", "disk_write_mbps"), ("disk_write_mbps",)][rng.integers(3)]
        bound = upgrade_bound(limits, raised)
        assert bound is not None
        assert float(np.min(limits)) <= bound[0] + 1e-12
        assert bound[1] in STAGES
    assert upgrade_bound([10.0, 20.0, 30.0], ("network_gbps", "disk_write_mbps")) is None  # every stage fed


def test_upgrades_from_below_fall_inside_their_intervals_at_the_stated_rate() -> None:
    """Simulation: a cluster whose truth is a bottleneck, measured only at or below today; upgrades of the
    link and the disks x2 and x4 and of both x2, each measured as a mean of three trials at a setting of its
    own. 90% intervals must cover about 90% of them (conformal: at least the level, at most a little above)."""
    rng = np.random.default_rng(3)
    inside, errors = [], []
    for sim in range(150):
        link, disk = [(0.2, 60.0), (0.4, 20.0), (0.4, 40.0)][sim % 3]
        model = fitted(below_today(link, disk, rng))
        for a, b in [(2, 1), (4, 1), (1, 2), (1, 4), (2, 2)]:
            runs = cluster_rows(link * a, disk * b, 3, rng)
            lo, hi = model.interval(runs.iloc[:1], 0.9)
            mean = float(runs["write"].mean())
            inside.append(lo[0] <= mean <= hi[0])
            errors.append(abs(float(model.predict(runs.iloc[:1])[0]) / mean - 1))
    coverage = float(np.mean(inside))
    assert 0.85 <= coverage <= 0.97, coverage
    assert float(np.mean(errors)) < 0.1


def test_intervals_are_for_the_mean_of_the_trials_asked_for() -> None:
    """Simulation of a noisy metric (a replicated read: each trial a new placement draw, sd 0.25 on the log
    scale, beside a setting's shared error of 0.05): fitted on two trials a setting below today, the interval
    for one trial covers single trials, and the narrower one for three trials covers means of three, each at
    about the level. The plain quantile of trial residuals would cover means of three nearly always."""
    rng = np.random.default_rng(7)
    one, three, widths = [], [], []
    for sim in range(150):
        link, disk = [(0.2, 60.0), (0.4, 20.0), (0.4, 40.0)][sim % 3]
        shares = [(1, 1), (0.5, 1), (0.25, 1), (1, 0.5), (1, 0.25), (0.5, 0.5)]
        below = pd.concat([cluster_rows(link * a, disk * b, 2, rng, setting_sd=0.05, run_sd=0.25)
                           for a, b in shares], ignore_index=True)
        model = fitted(below)
        for a, b in [(2, 1), (4, 1), (1, 2), (1, 4), (2, 2)]:
            runs = cluster_rows(link * a, disk * b, 4, rng, setting_sd=0.05, run_sd=0.25)
            lo1, hi1 = model.interval(runs.iloc[:1], 0.9)
            lo3, hi3 = model.interval(runs.iloc[:1], 0.9, trials=3)
            one.append(lo1[0] <= runs["write"].iloc[3] <= hi1[0])
            three.append(lo3[0] <= runs["write"].iloc[:3].mean() <= hi3[0])
            widths.append(np.log(hi3[0] / lo3[0]) / np.log(hi1[0] / lo1[0]))
    assert 0.85 <= float(np.mean(one)) <= 0.97, np.mean(one)
    assert 0.85 <= float(np.mean(three)) <= 0.97, np.mean(three)
    assert float(np.median(widths)) < 0.8  # three trials' noise is sqrt(3) times smaller


def test_variance_components_split_the_trials_noise_from_the_settings_error() -> None:
    rng = np.random.default_rng(8)
    setting = np.repeat(np.arange(400), 3)
    resid = np.repeat(rng.normal(0, 0.2, 400), 3) + rng.normal(0, 0.3, 1200)
    table = conformal_quantiles(resid, np.zeros(1200, dtype=int), setting, run=setting)["all"]
    assert table["within"] == pytest.approx(0.09, rel=0.15)
    assert table["between"] == pytest.approx(0.04, rel=0.3)
    # without run names every trial is its own run: nothing is known of the trials' noise
    plain = conformal_quantiles(resid, np.zeros(1200, dtype=int), setting)["all"]
    assert "within" not in plain and plain["0.9"] == table["0.9"]
    from gluster_model.model.bottleneck import lookup
    quantiles = {"all": table}
    assert lookup(quantiles, "all", 0.9, 3) < lookup(quantiles, "all", 0.9, 1)
    assert lookup(quantiles, "all", 0.9, float("inf")) < lookup(quantiles, "all", 0.9, 3)
    # a model file written before the components: plain quantiles, whatever the trials
    old = {"all": {"0.9": 0.4, "0.95": 0.5}}
    assert lookup(old, "all", 0.9, 3) == lookup(old, "all", 0.9, 1) == 0.4


def test_conformal_quantiles_weigh_each_setting_the_same() -> None:
    # one setting of 10 runs with small residuals, four settings of one run with large ones: per setting, the
    # large residuals are 4 of 5 settings, so the median is large
    resid = np.array([0.01] * 10 + [0.5, 0.6, 0.7, 0.8])
    setting = np.array([0] * 10 + [1, 2, 3, 4])
    q = conformal_quantiles(resid, np.zeros(14, dtype=int), setting, levels=(0.5,))
    assert q["all"]["0.5"] >= 0.5
    assert weighted_quantile(np.array([1.0, 2.0, 3.0]), np.ones(3), 0.5) == 2.0


def test_the_model_file_round_trips_and_a_damaged_one_is_refused() -> None:
    rng = np.random.default_rng(4)
    frame = below_today(0.4, 40, rng)
    model = fitted(frame)
    again = BottleneckModel.from_json(json.loads(json.dumps(model.to_json())))
    np.testing.assert_allclose(again.predict(frame), model.predict(frame))
    np.testing.assert_allclose(again.interval(frame)[0], model.interval(frame)[0])
    damaged = model.to_json() | {"log_eff": [0.0, 0.0]}
    with pytest.raises(GlmodelError, match="bottleneck model is damaged"):
        BottleneckModel.from_json(damaged)
    with pytest.raises(GlmodelError, match="not a finite"):
        BottleneckModel.from_json(model.to_json() | {"log_eff": [0.0, float("nan"), 0.0]})


def test_a_change_interval_is_never_zero_wide() -> None:
    rng = np.random.default_rng(5)
    model = fitted(below_today(0.2, 60, rng))
    frame = below_today(0.2, 60, rng).iloc[[0, 2]]  # today and link at 50%: both bound at the links
    d, low, high = model.difference(frame.reset_index(drop=True))
    assert low[1] < d[1] < high[1]
    _, olow, ohigh = model.difference(frame.reset_index(drop=True), observed=True)
    assert ohigh[1] - olow[1] > high[1] - low[1]


def test_predict_answers_an_upgrade_from_below_as_bounded_and_ranks_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A model fitted on a link-bound cluster measured at or below today answers "links x4" with the gain until
    the disks bind (bounded, the disks named), "links and disks x2" as extrapolated (every stage upgraded,
    nothing measured bounds it), and ranks only the bounded and interpolated ones."""
    from gluster_model.model import artifact
    from gluster_model.model.train import train
    from gluster_model.predict.scenarios import Question, Scenario
    from gluster_model.predict.whatif import what_if

    rng = np.random.default_rng(6)
    frame = below_today(0.2, 60.0, rng, runs=3)
    frame["config_hash"] = frame[GROUP]
    frame["campaign"] = "below"
    out = tmp_path / "below.json"
    train(frame, "synthetic", out, family="hardware", metrics=["write"], samples=128, bootstrap=0)
    mf = artifact.load(out)
    today = {"network_gbps": 0.2, "disk_read_mbps": 60.0, "disk_write_mbps": 60.0}
    q = Question(Scenario("today", today, baseline=True), [
        Scenario("links x2", {"network_gbps": 0.4}, price=600),
        Scenario("links x4", {"network_gbps": 0.8}, price=1500),
        Scenario("disks x2", {"disk_read_mbps": 120.0, "disk_write_mbps": 120.0}, price=800,
                 measured_by="glmodel bench disk on one new device"),
        Scenario("both x2", {"network_gbps": 0.4, "disk_read_mbps": 120.0, "disk_write_mbps": 120.0}, price=1400)],
        0.9, "EUR")
    m = what_if(mf, q).metrics[0]
    assert m.model == "bottleneck"
    p = {x.scenario: x for x in m.predictions}
    assert p["links x4"].basis == "bounded" and p["links x4"].bound_stage == "server disks"
    assert p["links x4"].binds_after == "server disks"
    assert p["links x4"].capacity_from == "spec values from the what-if file"
    assert p["disks x2"].capacity_from == "measured: glmodel bench disk on one new device"
    assert p["links x4"].value <= p["links x4"].bound * (1 + 1e-9)  # type: ignore[operator]
    # the disks bind after links x4 at their measured 60 MB/s times their efficiency (truth 0.8 x 60 = 48)
    assert 40 < p["links x4"].value < 56
    assert p["links x2"].basis == "bounded" and p["links x2"].binds_after in ("client links", "server links")
    assert p["links x2"].value == pytest.approx(2 * p["today"].value, rel=0.01)  # elasticity 1 while it binds
    assert p["disks x2"].basis == "bounded" and p["disks x2"].effect != "gain"  # the links still bind
    assert p["both x2"].basis == "extrapolated" and p["both x2"].rank is None
    assert any("no measured stage bounds" in f for f in p["both x2"].flags)
    assert m.best is not None and m.best.scenario in ("links x2", "links x4")


def test_a_measured_input_the_design_never_moved_is_left_out_as_noise() -> None:
    """A bottleneck plan varies links and disks; the CPU score it measured still moves (a busy machine: 191 to
    342) and must not enter the fit as a slope on noise. Where the settings do move the CPU, or the campaigns
    come from two clusters (whose hardware differs whatever the settings say), it stays."""
    from gluster_model.model.features import held_by_design

    rng = np.random.default_rng(9)
    frame = below_today(0.4, 20, rng)
    frame["cpu_score"] = rng.uniform(191, 342, len(frame))
    frame["campaign"] = [f"proof@lab:link={r.network_gbps}gbit,disk={r.disk_write_mbps}MB/s,ram=1GB"
                         for r in frame.itertuples()]
    # each row's setting as the store records it (store.identity): the knobs the plan set, and the cluster
    frame = frame.assign(cluster="lab", setting_link=[f"{v}gbit" for v in frame["network_gbps"]],
                         setting_disk=[f"{v}MB/s" for v in frame["disk_write_mbps"]], setting_ram="1GB")
    schema = schema_from_frame(frame, FAMILIES["hardware"], "write")
    names = {f.name for f in schema.features}
    assert "cpu_score" not in names and "network_gbps" in names
    assert any(n == "cpu_score" and "measurement noise" in why for n, why in schema.dropped)
    assert held_by_design(frame) == {"client_ram_gb": "1GB", "cpu_score": "the cluster's own",
                                     "network_rtt_ms": "the cluster's own"}
    moved = frame.assign(campaign=[c + f",cpu={i % 3 + 1}" for i, c in enumerate(frame["campaign"])],
                         setting_cpu=[str(i % 3 + 1) for i in range(len(frame))])
    assert "cpu_score" in {f.name for f in schema_from_frame(moved, FAMILIES["hardware"], "write").features}
    two = frame.assign(campaign=[c.replace("@lab", "@other") if i % 2 else c for i, c in enumerate(frame["campaign"])],
                       cluster=["other" if i % 2 else "lab" for i in range(len(frame))])
    assert held_by_design(two) == {}


def test_an_answer_measured_in_another_campaign_adds_its_term_in_quadrature() -> None:
    """The another-campaign term (model/bottleneck.py) widens each row's log half-width to sqrt(q² + (z·s)²), s the
    constant SD whatever the row's CPU score; a model file that carries a per-load coefficient (the fifth proof's
    form) takes that times the row's predicted MB/s over its CPU score instead, and the constant where the row has
    none; the same for each change but row 0's; the model file keeps both, and refuses one that is not a log SD."""
    from dataclasses import replace

    from scipy.stats import norm

    from gluster_model.model.bottleneck import NEW_CAMPAIGN_SD

    rng = np.random.default_rng(6)
    model = fitted(below_today(0.4, 40, rng))
    frame = below_today(0.4, 40, rng).iloc[[0, 1, 3]].reset_index(drop=True)
    frame["cpu_score"] = [300.0, 150.0, 600.0]
    lo, hi = model.interval(frame, 0.9, trials=3)
    lo2, hi2 = model.interval(frame, 0.9, trials=3, new_campaign=True)
    z = float(norm.ppf(0.95))
    yhat = model.predict(frame)
    q, q2 = np.log(hi / yhat), np.log(hi2 / yhat)
    assert (model.new_campaign_sd, model.new_campaign_per_load) == (NEW_CAMPAIGN_SD, 0.0) and NEW_CAMPAIGN_SD > 0
    np.testing.assert_allclose(q2, np.sqrt(q ** 2 + (z * model.new_campaign_sd) ** 2))
    assert (q2 > q).all()
    # the CPU score does not move the constant term
    np.testing.assert_allclose(model.new_campaign_q(frame.assign(cpu_score=frame["cpu_score"] / 2), 0.9),
                               model.new_campaign_q(frame, 0.9))
    # a file of the per-load form: its coefficient times the load; half the CPU score doubles it
    per_load = replace(model, new_campaign_per_load=0.03)
    np.testing.assert_allclose(per_load.new_campaign_q(frame, 0.9), z * 0.03 * yhat / frame["cpu_score"].to_numpy())
    half = frame.assign(cpu_score=frame["cpu_score"] / 2)
    np.testing.assert_allclose(per_load.new_campaign_q(half, 0.9), 2 * per_load.new_campaign_q(frame, 0.9))
    # ... and no CPU score: the constant SD
    unscored = frame.assign(cpu_score=np.nan)
    np.testing.assert_allclose(per_load.new_campaign_q(unscored, 0.9), z * model.new_campaign_sd)
    np.testing.assert_allclose(per_load.new_campaign_q(frame.drop(columns="cpu_score"), 0.9),
                               z * model.new_campaign_sd)
    _, dlo, dhi = model.difference(frame, 0.9)
    _, dlo2, dhi2 = model.difference(frame, 0.9, new_campaign=True)
    assert dlo2[0] == dhi2[0] == 0.0 and (dhi2[1:] - dlo2[1:] > dhi[1:] - dlo[1:]).all()
    again = BottleneckModel.from_json(json.loads(json.dumps(model.to_json() | {"new_campaign_sd": 0.01,
                                                                               "new_campaign_per_load": 0.02})))
    assert (again.new_campaign_sd, again.new_campaign_per_load) == (0.01, 0.02)
    older = {k: v for k, v in model.to_json().items() if k not in ("new_campaign_sd", "new_campaign_per_load")}
    back = BottleneckModel.from_json(older)  # a file from before the term
    assert (back.new_campaign_sd, back.new_campaign_per_load) == (model.new_campaign_sd, model.new_campaign_per_load)
    for key in ("new_campaign_sd", "new_campaign_per_load"):
        with pytest.raises(GlmodelError, match=f"{key} .* not a log SD"):
            BottleneckModel.from_json(model.to_json() | {key: -0.1})


def test_the_predictive_floor_covers_a_new_settings_mean_at_its_level() -> None:
    """The normal prediction interval behind ``lookup``'s floor, by simulation with known truth: S settings'
    errors drawn from N(0, sd), their sample variance the between component, a new setting drawn alike; the
    interval holds it at the level (exact under normality), and the z interval on the same estimate does not."""
    from scipy.stats import norm

    from gluster_model.stats.prediction import predictive_half_width

    rng = np.random.default_rng(5)
    for settings in (4, 6):
        draws = rng.normal(0, 0.06, size=(20000, settings + 1))
        between = draws[:, :settings].var(axis=1, ddof=1)
        new = np.abs(draws[:, settings] - draws[:, :settings].mean(axis=1))
        q = np.array([predictive_half_width(b, 0.0, settings, 0.0, 0.9) for b in between[:4000]])
        assert 0.88 <= float(np.mean(new[:4000] <= q)) <= 0.92
        naive = norm.ppf(0.95) * np.sqrt(between)
        assert float(np.mean(new <= naive)) < 0.86
    # a within-run share with its own degrees of freedom widens it, and many degrees of freedom leave z
    assert predictive_half_width(0.0036, 0.001, 5, 10, 0.9) > predictive_half_width(0.0036, 0.0, 5, 10, 0.9)
    assert predictive_half_width(0.0, 0.01, 5, 1e9, 0.9) == pytest.approx(norm.ppf(0.95) * 0.1, rel=1e-6)

"""The shipped hardware-family dataset: it loads as `glmodel export` wrote it, its measured hardware differs
between the lab settings, and the study's MLR fitted on it ranks the network among the top predictors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gluster_model.dataset import read_table
from gluster_model.model.fit import fit_frame

DATA = Path(__file__).parent.parent.parent / "data"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return read_table(DATA / "hardware_family.csv")


def test_csv_and_parquet_are_the_same_table(frame: pd.DataFrame) -> None:
    other = read_table(DATA / "hardware_family.parquet")
    assert list(other.columns) == list(frame.columns) and len(other) == len(frame) == 48
    pd.testing.assert_series_equal(other["write"], frame["write"])
    pd.testing.assert_series_equal(other["network_gbps"], frame["network_gbps"])


def test_measured_hardware_follows_the_lab_settings(frame: pd.DataFrame) -> None:
    per = frame.groupby("campaign", observed=True).first()
    assert len(per) == 6
    for name, row in per.iterrows():
        link = str(name).split("link=")[1].split(",")[0]
        assert str(row["base_filesystem"]) == str(name).split("brick_backing=")[1]  # from host facts
        if link == "1gbit":
            assert 0.9 <= row["network_gbps"] <= 1.1  # a whole 1 Gbit/s link, measured
        else:
            assert row["network_gbps"] > 5
    assert frame["servers"].nunique() == 4 and frame["clients"].nunique() == 4
    assert set(frame["replica"]) == {1, 2, 3} and set(frame["shard"]) == {True, False}
    assert (frame["sync"] == "odirect").all() and (frame["regime"] == "direct").all()


def test_network_is_among_the_top_predictors_for_read_and_write(frame: pd.DataFrame) -> None:
    fits, _ = fit_frame(frame, "hardware", ["write", "read"], models=["mlr"], seed=0, importance_n=256, bootstrap=0)
    ranks = {}
    for f in fits:
        order = [i.feature for i in sorted(f.importance["mlr"], key=lambda i: -i.vi)]
        ranks[f.metric] = order.index("network_gbps") + 1
        score = next(s for s in f.scores if s.model == "mlr")
        assert score.holdout.r2 > 0.6, (f.metric, score.holdout.r2)
    # Write: replication and the network set it together; the per-campaign disk figures, kept now that only
    # exact linear dependence removes a feature, take part of the network's share (see data/README.md).
    assert ranks["read"] == 1 and ranks["write"] <= 3, ranks
    kept = {f.name for f in fits[0].schema.features}
    assert {"network_gbps", "disk_read_mbps", "disk_write_mbps"} <= kept


@pytest.fixture(scope="module")
def grid() -> pd.DataFrame:
    return read_table(DATA / "hardware_grid.csv")


def test_grid_is_every_combination_once_in_both_formats(grid: pd.DataFrame) -> None:
    other = read_table(DATA / "hardware_grid.parquet")
    assert len(other) == len(grid) == 192
    pd.testing.assert_series_equal(other["read"], grid["read"])
    factors = ["campaign", "layout", "servers", "clients", "shard", "file_size"]
    combos = grid.groupby(factors, observed=True).size()
    assert len(combos) == 6 * 2 * 2 * 2 * 2 * 2 and (combos == 1).all()
    assert grid["config_hash"].nunique() == 192 and (grid["run_status"] == "done").all()
    assert (grid["trial_status"] == "ok").all() and not grid["warmup"].any()
    assert (grid["write"] > 0).all() and (grid["read"] > 0).all()


def test_grid_subsamples_recover_the_network_for_read(grid: pd.DataFrame) -> None:
    from gluster_model.model.design_size import design_size

    d = design_size(grid, "read", "hardware", sizes=[15, 144], subsets=20, seed=0)
    assert d.top == "network_gbps" and d.full_vi["network_gbps"] > 0.8
    small, large = d.points
    assert large.top_share >= 0.9 and large.r2_median > 0.7
    assert small.r2_median < large.r2_median and small.rank_corr < large.rank_corr


# -- the emulated-hardware dataset -----------------------------------------------------------------------------

HARDWARE = ["network_gbps", "disk_read_mbps", "disk_write_mbps", "client_ram_gb", "cpu_score"]


@pytest.fixture(scope="module")
def emulated() -> pd.DataFrame:
    return read_table(DATA / "hardware_emulated.csv")


@pytest.mark.parametrize("name", ["hardware_emulated", "hardware_emulated_loopback"])
def test_emulated_hardware_follows_its_settings_and_varies_independently(name: str) -> None:
    """Today's collection (namespace lab, clients apart) and the loopback lab's, kept as collected."""
    from gluster_model.lab.disk import parse_disk_rate
    from gluster_model.hardware.link import parse_rate
    from gluster_model.hardware.settings import parse_ram

    emulated = read_table(DATA / f"{name}.csv")
    other = read_table(DATA / f"{name}.parquet")
    assert len(other) == len(emulated) and list(other.columns) == list(emulated.columns)
    per = emulated.groupby("campaign", observed=True).first()
    assert len(per) >= 17  # hardware settings, each a campaign with its own baselines and facts
    scores: dict[float, list[float]] = {}
    for name, row in per.iterrows():
        setting = dict(kv.split("=") for kv in str(name).split(":")[1].split(","))
        link = parse_rate(setting["link"]) / 1e9
        assert abs(row["network_gbps"] / link - 1) < 0.1, (name, row["network_gbps"])
        disk = parse_disk_rate(setting["disk"]) / 1e6
        assert abs(row["disk_read_mbps"] / disk - 1) < 0.05 and abs(row["disk_write_mbps"] / disk - 1) < 0.05
        assert row["client_ram_gb"] == pytest.approx(parse_ram(setting["ram"], total=1 << 40) / 2**30)
        scores.setdefault(float(setting["cpu"]), []).append(float(row["cpu_score"]))
    medians = [float(pd.Series(v).median()) for _, v in sorted(scores.items())]
    assert medians == sorted(medians) and medians[-1] > 2.5 * medians[0]  # the score follows the quota
    # Across runs, the hardware inputs are not tied to each other (the design's purpose).
    corr = emulated[["network_gbps", "disk_read_mbps", "client_ram_gb", "cpu_score"]].astype(float).corr().abs()
    assert (corr.to_numpy()[~np.eye(4, dtype=bool)] < 0.3).all(), corr


def test_emulated_decision_is_answered_inside_the_data(emulated: pd.DataFrame, tmp_path: Path) -> None:
    from gluster_model.model import artifact
    from gluster_model.predict.scenarios import from_file
    from gluster_model.predict.whatif import model_inputs, what_if

    fits, _ = fit_frame(emulated, "hardware", ["write", "read"], models=["mlr", "loglinear", "physical"], seed=0,
                        importance_n=128, bootstrap=0)
    path = tmp_path / "m.json"
    artifact.save(artifact.build(fits, {"data": "hardware_emulated.csv"}), path)
    mf = artifact.load(path)
    q = from_file(DATA.parent / "experiments" / "whatif" / "emulated_decision.yaml", model_inputs(mf, mf.metrics))
    answer = what_if(mf, q)
    for m in answer.metrics:
        extrapolated = {p.scenario: p.flags for p in m.predictions if p.basis == "extrapolated"}
        assert not extrapolated, (m.metric, extrapolated)
        assert len(m.predictions) == 12


@pytest.mark.parametrize("name", ["gluster_config", "gluster_config_loopback"])
def test_gluster_config_covers_its_factors_on_fixed_hardware(name: str) -> None:
    """What data/README.md says of both collections (namespace lab with clients apart, and the loopback lab's,
    kept as collected): both formats the same table; hardware fixed; every translator both ways, both sync modes,
    both cache regimes, record sizes 8 KB to 8 MB; replicates that pair with the main runs."""
    f = read_table(DATA / f"{name}.csv")
    other = read_table(DATA / f"{name}.parquet")
    assert list(other.columns) == list(f.columns)
    for col in ("config_hash", "record_size", "io_cache", "sync", "regime", "write", "read", "random_read"):
        assert list(other[col]) == pytest.approx(list(f[col])) if f[col].dtype.kind == "f" else \
            list(other[col]) == list(f[col]), col
    # One hardware setting, measured by each session's baselines: the link within 1%.
    assert f["network_gbps"].max() / f["network_gbps"].min() < 1.01 and f["client_ram_gb"].nunique() == 1
    assert abs(f["network_gbps"].median() - 1) < 0.02
    assert f["record_size"].min() <= 8 << 10 and f["record_size"].max() >= 4 << 20
    for option in ("write_behind", "read_ahead", "io_cache", "quick_read", "md_cache"):
        assert set(f[option]) == {True, False}, option
    assert set(f["sync"]) == {"none", "osync"} and set(f["regime"]) == {"cached", "uncached"}
    # The regime follows the file size against the node's RAM (384 MB): 32 MB cached, 480 MB uncached.
    ram = f["client_ram_gb"].iloc[0] * (1 << 30)
    assert ((f["file_size"] > ram) == (f["regime"] == "uncached")).all()
    replicates = f[f["campaign"].str.contains(".replicates@", regex=False)]
    paired = set(replicates["config_hash"]) & set(f.loc[~f.index.isin(replicates.index), "config_hash"])
    assert len(f) - len(replicates) >= 150 and len(replicates) == 16 and len(paired) == 16
    assert f.loc[~f.index.isin(replicates.index), "config_hash"].nunique() == 150  # the design's 150 points
    # Page-cache reads are the fast ones, by an order of magnitude.
    med = f.groupby("regime")["read"].median()
    assert med["cached"] > 10 * med["uncached"]


def test_gluster_config_uncached_reads_come_from_one_server_or_from_both() -> None:
    """What data/README.md says of the clients-apart collection: no write beats what the clients' links carry
    (each client sends both copies); an uncached sequential read is served, by Gluster's default read policy
    (the replica is chosen by a hash of the file's gfid), either by one server for both clients (one link's
    worth in all) or by each server for one client (two links' worth), and never more; read-ahead costs in
    both cases."""
    f = read_table(DATA / "gluster_config.csv")
    link = f["network_gbps"] * 1000 / 8  # MB/s each way
    assert (f["write"] <= f["clients"] * link / f["replica"] * 1.02).all()
    u = f[f["regime"] == "uncached"]
    share = u["read"] / link[u.index]
    assert share.max() <= 2.0
    one, both = u[share < 1.0], u[share > 1.5]
    assert len(one) >= 20 and len(both) >= 20 and len(one) + len(both) >= 0.95 * len(u)
    for part in (one, both):
        ahead = part.groupby("read_ahead")["read"].median()
        assert ahead[True] < 0.95 * ahead[False], ahead


def test_clients_apart_never_outrun_their_links_and_hyperconverged_ones_do() -> None:
    """What data/README.md says of the two namespace-lab collections of one plan: with clients apart from the
    servers every byte crosses a client's link, so no run beats clients × link (÷ copies for a write); on the
    hyperconverged lab a client's own brick is reached without its NIC, and many runs do."""
    from gluster_model.hardware.link import parse_rate

    apart = read_table(DATA / "hardware_emulated.csv")
    other = read_table(DATA / "hardware_emulated.parquet")
    assert list(other.columns) == list(apart.columns) and list(other["write"]) == pytest.approx(list(apart["write"]))
    hyper = read_table(DATA / "hardware_emulated_hyperconverged.csv")
    # the plan's 12 settings, 6 runs each; today's collection adds the 5 settings of the variant `cover` and
    # the 3 of `replicates`, whose 18 runs repeat the first collection's (the same config hashes)
    assert len(apart) == 120 and apart["campaign"].nunique() == 20
    again = apart["campaign"].str.startswith("hardware_emulated.replicates@")
    assert again.sum() == 18 and set(apart.loc[again, "config_hash"]) < set(apart.loc[~again, "config_hash"])
    assert len(hyper) == 72 and hyper["campaign"].nunique() == 12
    for f in (apart, hyper):
        for name, row in f.groupby("campaign", observed=True).first().iterrows():
            link = parse_rate(dict(kv.split("=") for kv in str(name).split(":")[1].split(","))["link"]) / 1e9
            assert abs(row["network_gbps"] / link - 1) < 0.05, (name, row["network_gbps"])
        corr = f[["network_gbps", "disk_read_mbps", "client_ram_gb", "cpu_score"]].astype(float).corr().abs()
        assert (corr.to_numpy()[~np.eye(4, dtype=bool)] < 0.3).all(), corr

    def beyond(f: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
        link = f["network_gbps"] * 1000 / 8  # MB/s each way
        clients = f["clients"].astype(float)
        return f["write"] / (clients * link / f["replica"].astype(float)), f["read"] / (clients * link)

    w, r = beyond(apart)
    assert w.max() <= 1.0 and r.max() <= 1.0, (w.max(), r.max())
    assert (w > 0.8).sum() >= 10 and (r > 0.8).sum() >= 10  # and the links are what limits many of them
    w, r = beyond(hyper)
    assert (w > 1.05).sum() >= 10 and (r > 1.05).sum() >= 10 and r.max() > 5

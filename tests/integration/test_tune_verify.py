"""The study's second model, asked and checked on the real lab: `glmodel tune` recommends volume options for a
workload and writes them as a what-if question; `glmodel verify` builds Gluster's defaults and the recommendation
as volumes, measures both with the plan's protocol and sets the measured change beside the predicted one."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from gluster_model.lab import LabState
from gluster_model.store import open_store

from gluster_model.dataset import _UNIT_SCALE

from .conftest import client_apart, fitted_model, glmodel, kept_trials

BOOLS = ("write_behind", "read_ahead", "io_cache", "quick_read", "md_cache")
PLAN = {
    "name": "tuneci",
    "factors": {"layout": "distribute", "servers": 1, "clients": 1, "threads": 1, "file_size": "8MB",
                "record_size": ["64KB", "1MB"], "sync": "none", "cache_size": ["4MB", "32MB"],
                **{b: ["on", "off"] for b in BOOLS}},
    "design": {"type": "lhs", "n": 8, "seed": 1},
    "workload": {"tests": ["write", "read"]},
    "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none"},
    "baselines": {"network": False, "disk": False},
}


def _options_table(path: Path, campaign: str, seed: int, records: list[int],
                   write: Callable[[dict[str, bool]], float], read: Callable[[dict[str, bool]], float]) -> None:
    """A table in the shape `glmodel export` writes: two trials of every record size, io-cache size and
    translator on/off, write and read (MB/s) from the translators with 4% log-normal noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, (rec, cache, *flags) in enumerate(itertools.product(records, [4 << 20, 32 << 20], *[[False, True]] * 5)):
        o = dict(zip(BOOLS, flags))
        for trial in range(2):
            rows.append({"campaign": campaign, "run_id": i, "config_hash": f"c{i}", "trial": trial,
                         "record_size": rec, "cache_size": cache, **o, "file_size": 8 << 20, "sync": "none",
                         "write": write(o) * rng.lognormal(0, 0.04), "read": read(o) * rng.lognormal(0, 0.04)})
    pd.DataFrame(rows).to_csv(path, index=False)


def _training_table(path: Path) -> None:
    """A truth that makes io-cache (off by default) worth 60% on reads and nothing else matter, so the advice
    differs from Gluster's defaults in one option."""
    _options_table(path, "train@lab", 3, [64 << 10, 1 << 20], lambda o: 90.0,
                   lambda o: 100 * (1.6 if o["io_cache"] else 1.0))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return fitted_model(tmp_path_factory, "tune-model", _training_table, "--family", "gluster",
                        "--model", "loglinear")


def test_tuned_options_are_built_measured_and_judged_against_the_defaults(lab: LabState, model: Path,
                                                                          tmp_path: Path) -> None:
    advice_file, plan = tmp_path / "advice.yaml", tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    advice = json.loads(glmodel("tune", "--model", str(model), "--set", "record_size=1MB", "--metric", "read",
                                "--scenarios-out", str(advice_file), "--json", check=True).stdout)
    read = advice["metrics"][0]
    assert read["recommended"]["options"]["io_cache"] is True and read["defaults"]["options"]["io_cache"] is False
    store = str(tmp_path / "v.db")
    out = glmodel("verify", "--cluster", str(lab.cluster_file), "--model", str(model), "--scenarios",
                  str(advice_file), "--plan", str(plan), "--store", store, "--metric", "read", "--json", timeout=900)
    v = json.loads(out.stdout)
    assert v["skipped"] == {}
    # The model's truth is made up: whether io-cache pays on the lab decides whether the advice held (it held
    # when the tuned volume measured fastest), and the exit status says so.
    held = v["metrics"][0]["ranking_held"]
    assert out.returncode == v["exit_status"] == (0 if held else 1), out.stderr
    checks = {c["scenario"]: c for c in v["metrics"][0]["checks"]}
    assert set(checks) == {"Gluster defaults", "tuned for read"}
    base, tuned = checks["Gluster defaults"], checks["tuned for read"]
    # The change measured is the tuned volume's read minus the defaults' read, as the store has them; the change
    # predicted is tune's gain, and it is judged by the interval of a measured change: tune's interval of the
    # expected change (same centre), widened by both runs' noise.
    assert base["gain_measured"] is None
    assert tuned["gain_measured"] == pytest.approx(tuned["measured"] - base["measured"])
    assert tuned["gain_predicted"] == pytest.approx(read["gain"], rel=1e-6)
    assert tuned["gain_low"] < read["gain_low"] < read["gain_high"] < tuned["gain_high"]
    assert tuned["gain_low"] + tuned["gain_high"] == pytest.approx(read["gain_low"] + read["gain_high"], rel=1e-6)
    assert tuned["gain_inside"] == (tuned["gain_low"] <= tuned["gain_measured"] <= tuned["gain_high"])
    assert held == (tuned["measured"] > base["measured"])  # the only candidate: held when it measured fastest
    # Each scenario was built as asked: the defaults volume with io-cache off, the tuned one with it on, the
    # workload the same.
    with open_store(store, create=False) as st:
        runs = {bool(r.features.get("io_cache")): r for r in st.runs()}
        # the measured gain recomputed from the store's own kept trials (MB/s of each read), not from verify
        means = {}
        for on, r in runs.items():
            reads = [m.value * _UNIT_SCALE[m.unit] for t in kept_trials(st.trials(r.id))
                     for m in t.measurements if m.metric == "read"]
            assert reads, r
            means[on] = sum(reads) / len(reads)
    assert set(runs) == {False, True}
    assert {r.features["record_size"] for r in runs.values()} == {1 << 20}
    assert {r.features["file_size"] for r in runs.values()} == {8 << 20}
    assert tuned["gain_measured"] == pytest.approx(means[True] - means[False], rel=1e-6)
    text = glmodel("verify", "--cluster", str(lab.cluster_file), "--model", str(model), "--scenarios",
                   str(advice_file), "--plan", str(plan), "--store", store, "--metric", "read").stdout
    inside = int(bool(tuned["gain_inside"]))
    assert (f"measured change inside the interval of a measured change (the change's uncertainty and both runs' "
            f"noise) in {inside} of 1") in " ".join(text.split())


def _wrong_table(path: Path) -> None:
    """Wrong on purpose: write-behind off (Gluster's default is on) worth 60% on writes. On the lab it is the other
    way round for small records: each 8 KB write waits for its round trip (data/gluster_config.csv: 17 MB/s off,
    97 MB/s on, on the lab's bare veths)."""
    _options_table(path, "wrong@lab", 5, [8 << 10, 64 << 10], lambda o: 60 * (1.0 if o["write_behind"] else 1.6),
                   lambda o: 100.0)


def test_tune_advice_that_the_defaults_beat_is_said_not_to_hold_and_exits_1(
        lab_put_back: LabState, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    """tune's advice from a model wrong on purpose (write-behind off for 8 KB writes) is built and measured beside
    Gluster's defaults: the defaults measure faster, so the recommendation did not hold, its change falls outside
    the interval of a measured change, and verify exits 1 naming it.

    The client is node 3, apart from the brick on node 1, and every node holds what it receives for 1 ms while
    verify measures: without write-behind each of the 1,024 writes of a run waits a round trip of at least 2 ms
    (4 MB/s at most), while write-behind keeps many in flight. On the bare veths the gap is a round trip of tens of microseconds against the client's CPU, and on a
    machine busy with other labs both sides measured the same 28 MB/s, CPU-bound."""
    lab = lab_put_back
    wrong = fitted_model(tmp_path_factory, "tune-wrong", _wrong_table, "--family", "gluster", "--model", "loglinear")
    advice_file, plan = tmp_path / "advice.yaml", tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump({**PLAN, "factors": {**PLAN["factors"], "record_size": ["8KB", "64KB"]}}))
    advice = json.loads(glmodel("tune", "--model", str(wrong), "--set", "record_size=8KB", "--metric", "write",
                                "--scenarios-out", str(advice_file), "--json", check=True).stdout)
    write = advice["metrics"][0]
    assert write["recommended"]["options"]["write_behind"] is False and write["gain_low"] > 0
    glmodel("lab", "node", "--dir", str(lab.path), "--latency", "1ms", check=True)
    try:
        out = glmodel("verify", "--cluster", client_apart(lab, tmp_path), "--model", str(wrong), "--scenarios",
                      str(advice_file), "--plan", str(plan), "--store", str(tmp_path / "w.db"), "--metric",
                      "write", "--json", timeout=900)
    finally:
        glmodel("lab", "node", "--dir", str(lab.path), "--latency", "none", check=True)
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr
    v = json.loads(out.stdout)
    m = v["metrics"][0]
    checks = {c["scenario"]: c for c in m["checks"]}
    base, tuned = checks["Gluster defaults"], checks["tuned for write"]
    # write-behind off: every small write waits its round trip (at most 4 MB/s), well below the defaults
    assert tuned["measured"] < 5.0 and base["measured"] > 2 * tuned["measured"], (tuned, base)
    assert tuned["gain_measured"] < 0 < tuned["gain_predicted"] and tuned["gain_inside"] is False
    assert m["best_predicted"] == "tuned for write" and m["best_measured"] == "Gluster defaults"
    assert m["ranking_held"] is False and m["by_price"] is False and v["exit_status"] == 1
    assert "write: the recommended tuned for write did not measure best (Gluster defaults did)" in out.stderr

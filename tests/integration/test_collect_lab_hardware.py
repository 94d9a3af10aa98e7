"""A plan that varies the lab's hardware: link rate and brick backing change between volumes, each setting is a
campaign with its own measured baselines, and the lab is put back as it was."""

from __future__ import annotations

from pathlib import Path

import yaml

from gluster_model.dataset import trial_frame
from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import glmodel

PLAN = {
    "name": "hwci",
    # Two settings, to keep it short: (1gbit, xfs) and (1gbit, ext4).
    "factors": {"link": "1gbit", "brick_backing": ["xfs", "ext4"], "file_size": "1MB", "record_size": "64KB",
                "threads": 3},
    "workload": {"tests": ["write"]},
    "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none"},
    "baselines": {"iperf": {"seconds": 2, "omit": 0}, "fio": {"size": "8MB", "runtime": 1}},
}


def test_plan_changes_lab_hardware_and_baselines_measure_it(lab: LabState, tmp_path: Path) -> None:
    plan = tmp_path / "hw.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    store = str(tmp_path / "hw.db")
    cf = str(lab.cluster_file)
    dry = glmodel("collect", "--cluster", cf, "--plan", str(plan), "--dry-run", check=True)
    assert "2 lab hardware setting(s)" in dry.stdout and "hwci@lab:link=1gbit,brick_backing=ext4" in dry.stdout
    out = glmodel("collect", "--cluster", cf, "--plan", str(plan), "--store", store, timeout=900, check=True)
    assert "0 failed" in out.stdout and "restoring" in out.stdout
    with open_store(store, create=False) as st:
        camps = {c["name"]: c for c in st.campaigns()}
        assert set(camps) == {"hwci@lab:link=1gbit,brick_backing=xfs", "hwci@lab:link=1gbit,brick_backing=ext4"}
        assert len({c["hardware_key"] for c in camps.values()}) == 2  # each measured on its own
        frame = trial_frame(st)
    by = frame.groupby("campaign", observed=True)
    fs = by["base_filesystem"].first().astype(str).to_dict()
    assert fs == {"hwci@lab:link=1gbit,brick_backing=xfs": "xfs", "hwci@lab:link=1gbit,brick_backing=ext4": "ext4"}
    net = by["network_gbps"].first()
    # A node's 1 Gbit/s link, shared by its two peers, counts whole: within 10% of 1 Gbit/s.
    assert ((net > 0.9) & (net < 1.1)).all(), net
    assert (frame["write"] > 0).all() and len(frame) == 2
    # Put back as it was: unshaped, bricks in the lab directory.
    state = LabState.load(lab.path)
    assert state is not None and state.links == {} and state.backing == {}


def test_lab_factor_on_a_real_cluster_is_one_line(tmp_path: Path) -> None:
    key = tmp_path / "id"
    key.write_text("x")
    cluster = tmp_path / "real.yaml"
    cluster.write_text(yaml.safe_dump({"name": "real", "ssh": {"identity_file": str(key)},
                                       "servers": [{"host": "10.9.9.1", "brick_paths": ["/b"]}]}))
    plan = tmp_path / "hw.yaml"
    plan.write_text(yaml.safe_dump({**PLAN, "factors": {"link": ["1gbit", "10gbit"], "record_size": "64KB"}}))
    bad = glmodel("collect", "--cluster", str(cluster), "--plan", str(plan), "--dry-run")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "factors.link" in bad.stderr and "only a glmodel lab can change its hardware" in bad.stderr

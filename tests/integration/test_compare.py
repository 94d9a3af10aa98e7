"""`glmodel compare` on the real lab: one plan collected three times into one store, with a change between the
second and the third (the bricks' disks written at half the rate). The unchanged pair exits 0; the changed pair
exits 1 with every row slower, the disk named as a measured difference, and the Markdown and JSON saying so."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import glmodel

PLAN = {"name": "cmpci", "factors": {"layout": "replicate", "replica": 3, "file_size": "24MB",
                                     "record_size": ["256KB", "1MB"],
                                     "threads": 3, "sync": "odirect"},
        "workload": {"tests": ["write"]},
        # the default rule: a trial a busy machine disturbed (a third of the others' rate) is flagged and measured
        # again, as a user's campaign would, instead of leaving one row without a verdict
        "protocol": {"warmups": 0, "repetitions": 3, "outlier_rule": "rsd", "remount": "never"},
        "baselines": {"network": False, "disk": True}}


def test_compare_passes_an_unchanged_lab_and_fails_a_slower_disk(lab_put_back: LabState, tmp_path: Path) -> None:
    lab = lab_put_back
    plan, store = tmp_path / "cmp.yaml", str(tmp_path / "cmp.db")
    plan.write_text(yaml.safe_dump(PLAN))

    def collect(name: str) -> None:
        glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--store", store,
                "--campaign", name, timeout=900, check=True)

    # writes bound by the disks (O_DIRECT at 40 MB/s a brick, every file on every brick: no placement draw), so
    # the figure is the hardware's, not the load's; the throttled bricks on a 1 GiB ext4 device of their own
    # (an earlier test may have left the lab's default brick size small)
    try:
        glmodel("lab", "node", "--dir", str(lab.path), "--disk", "40MB/s", "--backing", "ext4", "--size", "1GB",
                check=True)
        collect("before")
        collect("again")
        glmodel("lab", "node", "--dir", str(lab.path), "--disk-write", "20MB/s", check=True)
        collect("after")
    finally:  # the bricks back on the lab directory, unthrottled, as the tests after this one expect
        glmodel("lab", "node", "--dir", str(lab.path), "--disk", "unlimited", check=True)
        glmodel("lab", "brick", "--dir", str(lab.path), "--backing", "dir", check=True)

    same = glmodel("compare", "--store", store, "--campaign", "again", "--against", "last", "--json")
    assert same.returncode == 0, same.stdout[-2000:] + same.stderr
    result = json.loads(same.stdout)
    assert result["a"]["campaigns"] == ["before"] and result["counts"]["slower"] == 0
    assert len(result["rows"]) == 2 and all(0.8 < r["ratio"] < 1.25 for r in result["rows"])

    md = tmp_path / "cmp.md"
    slower = glmodel("compare", "--store", store, "--campaign", "after", "--against", "before", "--json",
                     "--markdown", str(md))
    assert slower.returncode == 1, slower.stdout[-2000:] + slower.stderr
    result = json.loads(slower.stdout)
    rows = result["rows"]
    # half the disk rate: every row slower, its ratio near a half and inside its own interval
    assert [r["verdict"] for r in rows] == ["slower", "slower"]
    assert all(0.35 < r["ratio"] < 0.75 and r["low"] <= r["ratio"] <= r["high"] for r in rows)
    # the disk's write rate named as measured apart; its read rate, unchanged, not (a busy machine may move the
    # CPU score, which is named when it does)
    named = [h["input"] for h in result["hardware_differs"]]
    assert "disk_write_mbps" in named and "disk_read_mbps" not in named
    assert "2 row(s) slower beyond ±5%" in slower.stderr
    assert md.read_text().count("| **slower** |") == 2
    with open_store(store, create=False) as st:  # compare read the store and changed nothing in it
        assert [c.name for c in st.campaigns()] == ["before", "again", "after"]
    # the report says what changed since the campaign before the latest, as compare --against last does
    glmodel("report", "--store", store, "--out", str(tmp_path / "rep"), check=True, timeout=300)
    md = (tmp_path / "rep" / "report.md").read_text()
    since = md.split("## Since last time")[1]
    assert "after against again: 2 slower beyond ±5%" in since and since.count("| slower |") == 2

"""A run whose files cannot fit on its bricks is refused in one line before iozone starts, on the real lab (tmpfs
bricks of 64 MB): before, iozone's distributed mode stopped at "Test running:" and the trial waited an hour."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import yaml

from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import glmodel, lab_processes

PLAN = {"name": "toobig", "factors": {"layout": "replicate", "replica": 3, "file_size": "48MB", "record_size": "1MB",
                                     "threads": 3, "sync": "none"},
        "workload": {"tests": ["write"]},
        "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none", "remount": "never"},
        "baselines": {"network": False, "disk": False}}


def test_files_larger_than_the_bricks_are_refused_before_iozone_starts(lab: LabState, tmp_path: Path) -> None:
    d = str(lab.path)
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    store = str(tmp_path / "s.db")
    try:
        glmodel("lab", "brick", "--dir", d, "--backing", "tmpfs", "--size", "64MB", check=True)
        started = time.monotonic()
        done = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--store", store,
                       timeout=300)
        took = time.monotonic() - started
    finally:
        glmodel("lab", "brick", "--dir", d, "--backing", "dir", check=True)
    out = " ".join((done.stdout + done.stderr).split())  # the terminal folds long lines
    assert done.returncode != 0 and "Traceback" not in out
    assert took < 60, took
    with open_store(store, create=False) as st:
        camp = st.campaign("toobig@lab")
        assert camp is not None
        (run,) = st.runs(int(camp["id"]))
        assert st.trials(int(run["id"])) == []
    error = run["error"] or ""
    # 3 files of 48 MB on each brick of the replica set, 10% headroom: 158 MB against 64 MB of tmpfs.
    assert run["status"] == "failed" and "\n" not in error
    assert error.startswith("3 file(s) of 48 MB need 158 MB on a brick (with 10% headroom) but 10.213.1.1:"), error
    assert error.endswith("refused before iozone starts (a smaller file_size or fewer threads, or larger bricks)")
    assert all(f"10.213.1.{n}:" in error for n in (1, 2, 3)) and "64 MB" in error
    assert "refused before iozone starts" in out
    assert lab_processes(lab, r"(^|/)iozone ") == []  # none was started in the lab's nodes

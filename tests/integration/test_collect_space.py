"""A run whose files cannot fit on its bricks is refused in one line before iozone starts, on the real lab (tmpfs
bricks of 64 MB): before, iozone's distributed mode stopped at "Test running:" and the trial waited an hour. And
bricks that fill while a trial runs: the run fails in one line saying so, and completes once there is room."""

from __future__ import annotations

import os
import time
from pathlib import Path

import yaml

from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import collect_at_iozone_start, completes_on_second_attempt, glmodel, lab_processes, node_ip

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
        (run,) = st.runs(int(camp.id))
        assert st.trials(run.id) == []
    error = run.error or ""
    # 3 files of 48 MB on each brick of the replica set, 10% headroom: 158 MB against 64 MB of tmpfs.
    assert run.status == "failed" and "\n" not in error
    assert error.startswith(f"3 file(s) of 48 MB need 158 MB on a brick (with 10% headroom) but {node_ip(1)}:"), error
    assert error.endswith("refused before iozone starts (a smaller file_size or fewer threads, or larger bricks)")
    assert all(f"{node_ip(n)}:" in error for n in (1, 2, 3)) and "64 MB" in error
    assert "refused before iozone starts" in out
    assert lab_processes(lab, r"(^|/)iozone ") == []  # none was started in the lab's nodes


# O_SYNC: each write reaches the bricks before it returns, so ENOSPC reaches iozone (write-behind would keep it)
FILL = {"name": "filled", "factors": {"layout": "replicate", "replica": 3, "file_size": "16MB",
                                      "record_size": "1MB", "threads": 3, "sync": "osync"},
        "workload": {"tests": ["write"]},
        "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none", "remount": "never",
                     "startup_timeout": 15},
        "baselines": {"network": False, "disk": False}}


def test_a_disk_that_fills_during_a_trial_fails_the_run_in_one_line_and_collect_completes_after(
        lab: LabState, tmp_path: Path) -> None:
    """The run had room when it started (collect checked); then something else filled every brick's
    filesystem before iozone wrote. The run fails with one line saying the bricks filled and how much is free,
    nothing of the lab is left running, and once the space is freed the same command completes the run."""
    d = str(lab.path)
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(FILL))
    store = str(tmp_path / "s.db")
    fillers = [Path(n.bricks) / "filler" for n in lab.nodes]
    try:
        glmodel("lab", "brick", "--dir", d, "--backing", "tmpfs", "--size", "64MB", check=True)
        with collect_at_iozone_start(lab, plan, store) as proc:
            for f in fillers:  # 56 of 64 MB: less room than one 16 MB file
                with open(f, "wb") as fh:
                    os.posix_fallocate(fh.fileno(), 0, 56 << 20)
            out, err = proc.communicate(timeout=300)
        for f in fillers:
            f.unlink(missing_ok=True)
        text = " ".join((out + err).split())
        assert proc.returncode == 1 and "Traceback" not in text, text
        assert f"the brick filesystem filled during the trial (free now: {node_ip(1).rsplit('.', 1)[0]}." in text, text
        with open_store(store, create=False) as st:
            (run,) = st.runs()
            assert run.status == "failed" and "\n" not in (run.error or "")
            assert "filled during the trial" in run.error and run.error_host in {n.address for n in lab.nodes}
        assert lab_processes(lab, r"iozone -[+]s") == []
        completes_on_second_attempt(lab, plan, store)
    finally:
        for f in fillers:
            f.unlink(missing_ok=True)
        glmodel("lab", "brick", "--dir", d, "--backing", "dir", check=True)

"""A brick process dying while a trial runs, on the real lab: the run fails in one line that names the brick, no
iozone or volume of it is left, and the same command completes the campaign afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import time

import yaml

from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import collect_at_iozone_start, completes_on_second_attempt, glmodel, lab_processes

# One brick (distribute on one server): every file of the trial is on it, so its death fails the trial for sure.
PLAN = {"name": "brickdies", "factors": {"layout": "distribute", "servers": 1, "file_size": "16MB",
                                         "record_size": "1MB", "threads": 2, "sync": "osync"},
        "workload": {"tests": ["write"]},
        "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none", "remount": "never",
                     "startup_timeout": 15},
        "baselines": {"network": False, "disk": False}}


def _writing(bricks: Path) -> bool:
    """Whether iozone's children have begun writing: a file of the volume with data on the brick directory."""
    for path in bricks.rglob("*"):
        if ".glusterfs" not in path.parts and path.is_file() and path.stat().st_size > 0:
            return True
    return False


def test_a_brick_process_that_dies_mid_trial_is_named_and_the_campaign_completes_after(
        lab_put_back: LabState, tmp_path: Path) -> None:
    lab = lab_put_back
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    store = str(tmp_path / "s.db")
    first = lab.nodes[0]
    # The brick's disk writes 8 MB/s: the trial's 32 MB of O_SYNC writes last seconds, so the kill lands while
    # iozone writes on any machine (unthrottled, they took 30 ms and a loaded machine killed the brick after them).
    glmodel("lab", "node", "--dir", str(lab.path), "--node", first.address, "--disk-write", "8MB/s", check=True)
    with collect_at_iozone_start(lab, plan, store) as proc:
        # this run's volume's brick only: a brick process of an earlier test's volume may still be exiting
        volumes = subprocess.run(["gluster", "--mode=script", f"--glusterd-sock={first.socket}", "volume", "list"],
                                 capture_output=True, text=True, check=True).stdout.split()
        assert len(volumes) == 1, volumes
        bricks = [line.split()[0] for line in lab_processes(lab, r"glusterfsd") if first.marker in line
                  and volumes[0] in line]
        assert len(bricks) == 1, bricks
        deadline = time.monotonic() + 120
        while not _writing(Path(first.bricks)) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert proc.poll() is None, "the trial ended before its brick could be killed"
        os.kill(int(bricks[0]), signal.SIGKILL)  # as a crash would: no goodbye to the clients
        out, err = proc.communicate(timeout=300)
    text = " ".join((out + err).split())
    assert proc.returncode == 1 and "Traceback" not in text, text
    assert f"brick process(es) not running after the trial: {first.address}:" in text, text
    with open_store(store, create=False) as st:
        (run,) = st.runs()
        assert run["status"] == "failed" and "\n" not in (run["error"] or "")
        assert run["error_host"] == first.address and "not running after the trial" in run["error"]
    assert lab_processes(lab, r"iozone -[+]s") == []
    assert lab_processes(lab, r"glusterfsd") == []  # the volume is gone, and with it its brick processes
    completes_on_second_attempt(lab, plan, store)

"""However an iozone trial ends early, nothing of it is left: a start whose children do no I/O is stopped by the
watchdog with a diagnosis, and SIGINT or SIGTERM to `collect` mid-trial leave no iozone process and no bound
port, after which the next `collect` runs its trials. Real lab, real iozone, real signals."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import yaml

from gluster_model.bench.iozone import master_address, run_iozone

from gluster_model.bench.workload import Workload
from gluster_model.bench.iozone_ports import Holder, holders
from gluster_model.config.cluster import load_cluster
from gluster_model.gluster.apply import apply_volume, mount, teardown_volume
from gluster_model.gluster.volume import VolumeConfig
from gluster_model.lab import LabState
from gluster_model.remote.executor import SSHExecutor
from gluster_model.store import open_store

from .conftest import glmodel, lab_processes


def lab_holders(lab: LabState) -> list[Holder]:
    """The ports in iozone's range held by this lab's trials: the process a listening socket is found on names
    the address the lab's clients reach the master at (the master with ``-+h``; a process it forked to start a
    child over RSH, which shares the socket, with ``-+c``). Another iozone on the machine, a benchmark's beside
    the tests, is not this test's to find."""
    master = re.escape(master_address(load_cluster(lab.cluster_file).clients[0]))
    return [h for h in holders() if re.search(rf"-\+[hc] {master}( |$)", h.command)]


def live_iozones(lab: LabState) -> list[str]:
    """Command lines of the iozone processes of this test: its children in the lab's nodes, and masters this
    pytest started (through collect); an iozone of another lab or benchmark on the machine is not this test's.
    Zombies are dead."""
    mine = {p.pid for p in psutil.Process().children(recursive=True)}
    out = [line.split(" ", 1)[1] for line in lab_processes(lab, r"(^|/)iozone ")]
    for p in psutil.process_iter(["name", "status", "cmdline", "pid"]):
        if p.info["name"] == "iozone" and p.info["status"] != psutil.STATUS_ZOMBIE and p.info["pid"] in mine:
            out.append(" ".join(p.info["cmdline"] or []))
    return sorted(set(out))


def wait_for(pred: object, limit: float) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if pred():  # type: ignore[operator]
            return True
        time.sleep(0.2)
    return False


def test_a_start_that_does_no_io_is_stopped_by_the_watchdog_with_a_diagnosis(lab: LabState) -> None:
    # 3 files of 48 MB on each 64 MB brick of a replica set: iozone's children write nothing and its master
    # waits at "Test running:" (collect refuses such a run first; the engine is called directly here).
    spec = load_cluster(lab.cluster_file)
    vol = VolumeConfig(name="stuck", layout="replicate", replica=3)
    w = Workload(threads=3, file_size="48MB", record_size="64KB", tests=["write"])
    glmodel("lab", "brick", "--dir", str(lab.path), "--backing", "tmpfs", "--size", "64MB", check=True)
    try:
        with SSHExecutor(spec) as ex:
            apply_volume(ex, vol)
            try:
                points = mount(ex, vol.name)
                started = time.monotonic()
                # a 20 s window instead of the default 60 s: the same watchdog, 40 s less of the suite
                run = run_iozone(ex, vol.name, w, points, timeout=600, startup_timeout=20)
                took = time.monotonic() - started
            finally:
                teardown_volume(ex, vol.name)
    finally:
        glmodel("lab", "brick", "--dir", str(lab.path), "--backing", "dir", check=True)
    assert run.output is None and run.error is not None
    assert re.match(r"iozone's children did (no|no more) I/O (in|in the last) 20s \([23]\ds after it started\); "
                    "stopped", run.error), run.error
    assert "iozone's last line: 'Test running:'" in run.error and "MB free on the volume" in run.error
    assert took < 45, took  # the trial timeout was 600 s
    assert live_iozones(lab) == [] and lab_holders(lab) == []


# O_SYNC: each write waits for its three copies, so the trial lasts long enough to be interrupted in (buffered,
# a node's client writes its local copy over its own loopback and the trial was over within seconds).
PLAN = {"name": "stops", "factors": {"layout": "replicate", "replica": 3, "file_size": "192MB",
                                     "record_size": "1MB", "threads": 3, "sync": "osync"},
        "workload": {"tests": ["write"]},
        "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none", "remount": "never"},
        "baselines": {"network": False, "disk": False}}


def _interrupt_mid_trial(lab: LabState, plan: Path, store: str, sig: signal.Signals) -> tuple[str, bool, bool]:
    """`collect` signalled once iozone's children run: its output, whether they still ran just before the
    signal went (if not, the run rightly completes and the attempt tested nothing), and whether this lab's master
    held its port then (what must be gone after)."""
    env = {**os.environ, "COLUMNS": "200"}
    # SIGINT as a terminal gives it: a test run started in the background by a non-interactive shell inherits
    # SIGINT ignored, and Python keeps an ignored SIGINT ignored, so the signal would never reach collect.
    proc = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", "collect", "--cluster",
                             str(lab.cluster_file), "--plan", str(plan), "--store", store],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        # Mid-trial: the children run on the clients (their command line names the master with -+c).
        assert wait_for(lambda: any("-+s" in c for c in live_iozones(lab)), 120), "iozone never started"
        time.sleep(0.5)
        # One look at the machine's sockets can miss the master's: psutil finds a socket's process by reading
        # every process's file descriptors, and on a busy machine once found none (2026-11-30). Looked for up to
        # 5 s, then whether the children still run, right before the signal.
        held = wait_for(lambda: bool(lab_holders(lab)), 5)
        mid = any("-+s" in c for c in live_iozones(lab))
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return out, mid, held


def test_sigint_and_sigterm_mid_trial_leave_no_iozone_and_no_port_and_the_next_collect_runs(
        lab: LabState, tmp_path: Path) -> None:
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    store = str(tmp_path / "s.db")
    for sig in (signal.SIGINT, signal.SIGTERM):
        out, mid, held = _interrupt_mid_trial(lab, plan, store, sig)
        assert mid, f"{sig.name}: the trial ended before the signal went"
        assert held, f"{sig.name}: no master of this lab held a port mid-trial (the check after would be empty)"
        assert "glmodel: interrupted" in out and "Traceback" not in out, out
        # Nothing of the trial is left: no master, no forked listener, no child on any node, no port held.
        assert wait_for(lambda: live_iozones(lab) == [], 10), (sig, live_iozones(lab))
        assert lab_holders(lab) == [], (sig, lab_holders(lab))
    done = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--store", store,
                   timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with open_store(store, create=False) as st:
        camp = st.campaign("stops@lab")
        assert camp is not None
        (run,) = st.runs(int(camp.id))
        assert run.status == "done"
        trials = st.trials(run.id)
    assert [t.status for t in trials][-1] == "ok"

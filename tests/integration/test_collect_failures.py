"""A brick process dying while a trial runs, on the real lab: the run fails in one line that names the brick, no
iozone or volume of it is left, and the same command completes the campaign afterwards. glusterd dying while a
trial runs: the trial is kept, and the volume it cannot tear down is named in a line that stays. A server going
silent (its packets dropped): the stalled trial ends naming it, and the campaign completes once it answers."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import time

import yaml

from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import collect_at_iozone_start, completes_on_second_attempt, glmodel, kept_trials, lab_processes

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


def _wait_until_writing(proc: subprocess.Popen[str], bricks: Path, what: str) -> None:
    """Until iozone's children write to ``bricks``: the moment a fault lands inside the trial on any machine."""
    deadline = time.monotonic() + 120
    while not _writing(bricks) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert proc.poll() is None, f"the trial ended before {what}"


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
        _wait_until_writing(proc, Path(first.bricks), "its brick could be killed")
        os.kill(int(bricks[0]), signal.SIGKILL)  # as a crash would: no goodbye to the clients
        out, err = proc.communicate(timeout=300)
    text = " ".join((out + err).split())
    assert proc.returncode == 1 and "Traceback" not in text, text
    assert f"brick process(es) not running after the trial: {first.address}:" in text, text
    with open_store(store, create=False) as st:
        (run,) = st.runs()
        assert run.status == "failed" and "\n" not in (run.error or "")
        assert run.error_host == first.address and "not running after the trial" in run.error
    assert lab_processes(lab, r"iozone -[+]s") == []
    assert lab_processes(lab, r"glusterfsd") == []  # the volume is gone, and with it its brick processes
    completes_on_second_attempt(lab, plan, store)


def _tear_down_every_volume(lab: LabState) -> None:
    """Whatever volume a failed check left (glusterd answering again): torn down as collect does it."""
    from gluster_model.config.cluster import load_cluster
    from gluster_model.gluster.apply import teardown_volume
    from gluster_model.remote.executor import SSHExecutor

    names = _volumes(lab) or []
    if names:
        with SSHExecutor(load_cluster(lab.cluster_file)) as ex:
            for name in names:
                teardown_volume(ex, name)


def _volumes(lab: LabState) -> list[str] | None:
    """glmodel's volumes the first node's glusterd lists; None where it does not answer."""
    shown = subprocess.run(["gluster", "--mode=script", f"--glusterd-sock={lab.nodes[0].socket}", "volume", "list"],
                           capture_output=True, text=True)
    return [n for n in shown.stdout.split() if n.startswith("gm")] if shown.returncode == 0 else None


def _peers_back(lab: LabState, timeout: float = 120) -> None:
    """Until every node's glusterd answers and sees all its peers connected."""
    from gluster_model.lab import lab_status

    deadline = time.monotonic() + timeout
    while not all(n.glusterd and n.peers_connected == n.peers_total for n in lab_status(lab.path)[1]):
        assert time.monotonic() < deadline, "the lab's glusterd peers did not reconnect"
        time.sleep(1)


def _glusterd_answers(lab: LabState, timeout: float = 60) -> list[str]:
    """The volumes glusterd lists, once it answers again after a restart."""
    deadline = time.monotonic() + timeout
    while (names := _volumes(lab)) is None:
        assert time.monotonic() < deadline, "glusterd does not answer"
        time.sleep(0.5)
    return names


def test_glusterd_killed_mid_trial_keeps_the_trial_and_names_the_volume_it_could_not_tear_down(
        lab_put_back: LabState, tmp_path: Path) -> None:
    """glusterd is the management daemon, not the data path: killed while iozone writes, the trial completes and
    is kept; the volume cannot be torn down without it, and collect says so in a line that stays, naming the
    volume and the host, instead of leaving it behind in silence. With glusterd back, a collect that builds the
    volume again removes it."""
    import re

    from gluster_model.lab.lifecycle import start_glusterd

    lab = lab_put_back
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump({**PLAN, "name": "glusterddies"}))
    store = str(tmp_path / "s.db")
    first = lab.nodes[0]
    glmodel("lab", "node", "--dir", str(lab.path), "--node", first.address, "--disk-write", "8MB/s", check=True)
    try:
        try:
            with collect_at_iozone_start(lab, plan, store) as proc:
                _wait_until_writing(proc, Path(first.bricks), "glusterd could be killed")
                found = subprocess.run(["pgrep", "-f", f"glusterd .*bind-address={first.address}( |$)"],
                                       capture_output=True, text=True).stdout.split()
                assert len(found) == 1, found
                os.kill(int(found[0]), signal.SIGKILL)
                out, err = proc.communicate(timeout=300)
        finally:
            start_glusterd(first)
        text = " ".join((out + err).split())  # the console wraps a long line
        assert proc.returncode == 0 and "Traceback" not in text, text
        with open_store(store, create=False) as st:
            (run,) = st.runs()
            assert run.status == "done" and kept_trials(st.trials(run.id))  # the trial is kept
        said = re.search(r"volume (gm\w+) was not torn down \(" + re.escape(first.address)
                         + r": `gluster volume info (gm\w+)`", text)
        assert said is not None and said.group(1) == said.group(2), text
        name = said.group(1)
        assert f"`gluster volume delete {name}` on a server remove it" in text, text
        assert _glusterd_answers(lab) == [name]  # left, as the line said
        # a collect that builds the volume again (a store of its own: the first has its run done) removes it
        glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--store",
                str(tmp_path / "again.db"), timeout=600, check=True)
        assert _glusterd_answers(lab) == []
    finally:
        _tear_down_every_volume(lab)


def test_a_server_whose_packets_are_dropped_mid_trial_is_named_and_the_campaign_completes_after(
        lab_put_back: LabState, tmp_path: Path) -> None:
    """A server that goes silent while a trial writes to it (every packet dropped in its namespace, as a hung
    host or a firewall does: no connection is closed) stalls the trial; collect ends it, names that server as
    the one that does not answer (not the client that saw the stall), says the volume it could not tear down,
    and once the server answers again the same command completes the campaign."""
    from gluster_model.lab.netns import in_netns

    lab = lab_put_back
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump({**PLAN, "name": "silent",
                                    "factors": {**PLAN["factors"], "layout": "replicate", "replica": 2, "servers": 2,
                                                "file_size": "64MB"}}))
    store = str(tmp_path / "s.db")
    silent = lab.nodes[1]
    glmodel("lab", "node", "--dir", str(lab.path), "--node", silent.address, "--disk-write", "8MB/s", check=True)
    rules = [["iptables", "-I", chain, "-j", "DROP"] for chain in ("INPUT", "OUTPUT")]
    try:
        with collect_at_iozone_start(lab, plan, store) as proc:
            _wait_until_writing(proc, Path(silent.bricks), "the server could go silent")
            for rule in rules:
                subprocess.run(in_netns(silent.netns, rule), check=True)
            out, err = proc.communicate(timeout=600)
    finally:
        for chain in ("INPUT", "OUTPUT"):
            subprocess.run(in_netns(silent.netns, ["iptables", "-F", chain]), check=False)
    text = " ".join((out + err).split())
    assert proc.returncode == 1 and "Traceback" not in text, text
    assert f"FAILED on {silent.address}: trial 0" in text and f"no answer from {silent.address} within" in text, text
    with open_store(store, create=False) as st:
        (run,) = st.runs()
        assert run.status == "failed" and run.error_host == silent.address and "\n" not in run.error
    assert "was not torn down" in text and f"({silent.address}: no answer from" in text, text
    # the server answers again once its glusterd has its peers back (a volume's stop and delete need every
    # peer: right after the flush they may still be reconnecting, and the teardown would fail again)
    _peers_back(lab)
    # then the same command completes the campaign, and removes the volume left behind
    completes_on_second_attempt(lab, plan, store)
    assert _glusterd_answers(lab) == []

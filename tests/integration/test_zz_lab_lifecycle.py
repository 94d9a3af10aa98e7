"""Lab lifecycle on real processes: leftovers after a kill -9, port clashes, down twice.

On a lab of this file's own beside the session lab: these tests kill a lab, bring it up again and take it down,
and the tests after them in this process (in whatever order xdist hands out the files) keep the session lab.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gluster_model.config.cluster import load_cluster
from gluster_model.errors import LabError
from gluster_model.gluster.cli import gluster_argv
from gluster_model.lab import LabState, lab_mounts, lab_pids, lab_status, lab_up
from gluster_model.lab.cgroups import lab_group_name
from gluster_model.lab.netns import lab_id, node_address
from gluster_model.remote.executor import SSHExecutor

from .conftest import SPARE_SUBNET, glmodel, lab_running


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    """This file's own 3-node lab, on a subnet of its own beside the session lab's."""
    with lab_running(tmp_path_factory, "lifecycle", SPARE_SUBNET) as state:
        yield state


def _zombie_or_gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True


def _mount_a_volume(state: LabState) -> str:
    sock = state.nodes[0].socket
    bricks = [f"{n.address}:{n.bricks}/lifecycle" for n in state.nodes]
    subprocess.run(gluster_argv("volume", "create", "lifecycle", *bricks, "force", socket=sock), check=True,
                   capture_output=True, timeout=60)
    subprocess.run(gluster_argv("volume", "start", "lifecycle", socket=sock), check=True, capture_output=True,
                   timeout=60)
    target = str(Path(state.nodes[0].mounts) / "lifecycle")
    os.makedirs(target, exist_ok=True)
    subprocess.run(["mount", "-t", "glusterfs", f"{state.nodes[0].address}:/lifecycle", target], check=True,
                   timeout=60)
    Path(target, "f").write_text("data")
    return target


def test_second_lab_on_a_taken_subnet_is_refused_with_the_fix(lab: LabState, tmp_path: Path) -> None:
    with pytest.raises(LabError) as info:
        lab_up(tmp_path / "other", nodes=1, subnet=lab.subnet)
    msg = str(info.value)
    assert f"subnet {lab.subnet} is in use by the lab in" in msg
    assert f"glmodel lab down --dir {lab.path}" in msg
    assert not (tmp_path / "other").exists()  # refused before anything was made


def test_status_cli(lab: LabState) -> None:
    proc = glmodel("lab", "status", "--dir", str(lab.path))
    assert proc.returncode == 0 and proc.stdout.count("2/2") == 3


def _network_traces(state: LabState) -> list[str]:
    """The lab's network namespaces, bridge and veths still on the machine."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    found = [line.split()[0] for line in netns.splitlines() if any(n.netns in line.split() for n in state.nodes)]
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    return found + [line.split(":")[1].strip() for line in links.splitlines() if lab_id(state.dir) in line]


def _another_labs(device: str, state: LabState) -> bool:
    """Whether the block device ``MAJ:MIN`` is a loop device backed by a file outside this lab (another lab's
    brick image: the session lab's, or a lab of the other test process); an unbound one is nobody's."""
    try:
        backing = Path(f"/sys/dev/block/{device}/loop/backing_file").read_text().strip()
    except OSError:
        return False
    return not backing.startswith(state.dir + "/")


def _hardware_traces(state: LabState) -> list[str]:
    """What of the lab's own settings is still on the machine: throttle entries, cgroups, loop devices."""
    found = []
    for kind in ("read_bps", "write_bps", "read_iops", "write_iops"):
        path = Path(f"/sys/fs/cgroup/blkio/blkio.throttle.{kind}_device")
        found += [f"{path.name}: {line}" for line in (path.read_text().splitlines() if path.exists() else [])
                  if line.split() and not _another_labs(line.split()[0], state)]
    found += [str(p) for p in Path("/sys/fs/cgroup").glob(f"*/{lab_group_name(state.dir)}")]
    loops = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    found += [line for line in loops.splitlines() if state.dir in line]
    return found


def _small_machines(state: LabState) -> None:
    glmodel("lab", "node", "--dir", state.dir, "--node", "1", "--disk", "100MB/s", "--size", "1GB", "--ram", "1GB",
            "--cpu", "0.5", check=True)
    glmodel("lab", "node", "--dir", state.dir, "--node", "2", "--disk-write", "80MB/s", "--size", "1GB", check=True)
    assert len(_hardware_traces(state)) >= 5  # 2 throttle entries, 2 cgroups, 2 loop devices
    assert len(_network_traces(state)) == 7, _network_traces(state)  # 3 namespaces, the bridge and 3 veths


def test_leftovers_of_a_killed_lab_are_cleared_by_up(lab: LabState) -> None:
    _small_machines(lab)
    target = _mount_a_volume(lab)
    pids = lab_pids(lab.path)
    assert len(pids) >= 3 * 3  # glusterd, sshd and a brick per node at least, plus the FUSE client
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    with pytest.raises(OSError):  # the FUSE mount is now stale: "Transport endpoint is not connected"
        os.stat(target)
    assert target in lab_mounts(lab.path)

    state = lab_up(lab.path, nodes=3)
    assert lab_mounts(lab.path) == [] and _hardware_traces(state) == []
    assert len(_network_traces(state)) == 7, _network_traces(state)  # the new lab's, none left from the old
    _, nodes = lab_status(lab.path)
    assert all(n.glusterd and n.sshd and n.peers_connected == 2 for n in nodes)
    assert glmodel("check", "--cluster", str(state.cluster_file)).returncode == 0


def test_down_stops_everything_and_is_safe_twice(lab: LabState) -> None:
    _small_machines(lab)
    _mount_a_volume(lab)
    glmodel("lab", "link", "--dir", str(lab.path), "--node", node_address(2, lab.subnet), "--rate", "1gbit", check=True)
    # A process an SSH session left behind on a node (as an interrupted iozone leaves its children): an orphan
    # whose command line names nothing of the lab, found only because it runs in the node's namespace.
    spec = load_cluster(lab.cluster_file)
    with SSHExecutor(spec) as ex:
        ex.run(node_address(2, lab.subnet), ["sh", "-c", "setsid sleep 4321 </dev/null >/dev/null 2>&1 &"])
    # the shell returned once it forked: on a busy machine the orphan may exec a moment later
    deadline = time.monotonic() + 30
    while not (found := subprocess.run(["pgrep", "-f", "^sleep 4321$"], capture_output=True,
                                       text=True).stdout.split()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert found, "the orphan never started"
    orphan = int(found[0])
    before = lab_pids(lab.path)
    assert orphan in before
    proc = glmodel("lab", "down", "--dir", str(lab.path))
    assert proc.returncode == 0 and "stopped volume lifecycle" in proc.stderr
    # The namespaces went, and the NICs, their shaping and the bridge with them.
    assert "removed the nodes' network namespaces, NICs and the bridge" in proc.stderr
    assert lab_pids(lab.path) == [] and lab_mounts(lab.path) == []
    assert "removed disk throttles and node cgroups" in proc.stderr and _hardware_traces(lab) == []
    assert _network_traces(lab) == []
    # Dead or a zombie waiting for an init that may not reap (as in some containers): either way, not running.
    assert all(_zombie_or_gone(p) for p in before) and _zombie_or_gone(orphan)
    assert not (lab.path / "state.json").exists()
    again = glmodel("lab", "down", "--dir", str(lab.path))
    assert again.returncode == 0 and "nothing to do" in again.stderr
    status = glmodel("lab", "status", "--dir", str(lab.path))
    assert status.returncode == 1 and "no lab in" in status.stderr

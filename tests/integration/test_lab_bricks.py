"""Brick backing on the real lab: xfs and ext4 loop devices and tmpfs, seen by host facts and the disk baseline,
used by a real volume, refused while in use, and removed without a trace."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from gluster_model.bench.fio import DiskSpec, run_disk
from gluster_model.config.cluster import load_cluster
from gluster_model.gluster.apply import apply_volume, mount, teardown_volume, unmount
from gluster_model.gluster.volume import VolumeConfig
from gluster_model.lab import LabState, NodeState
from gluster_model.lab.netns import in_netns
from gluster_model.preflight import gather_facts
from gluster_model.remote.executor import SSHExecutor

from .conftest import glmodel, node_ip


def _loops(lab: LabState) -> str:
    """``losetup -a`` lines of this lab's loop devices (another lab's on the machine are not this test's)."""
    out = subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    return "".join(ln for ln in out.splitlines(True) if f"{lab.path}/" in ln)


def test_xfs_ext4_tmpfs_bricks_are_detected_measured_used_and_removed(lab: LabState) -> None:
    d = str(lab.path)
    try:
        glmodel("lab", "brick", "--dir", d, "--node", "1", "--backing", "xfs", "--size", "1GB", check=True)
        glmodel("lab", "brick", "--dir", d, "--node", "2", "--backing", "ext4", "--size", "1GB", check=True)
        shown = glmodel("lab", "brick", "--dir", d, "--node", "3", "--backing", "tmpfs", "--size", "1GB", check=True)
        assert f"{node_ip(1)}  xfs" in shown.stdout and f"{node_ip(3)}  tmpfs" in shown.stdout
        assert str(lab.path / "nodes" / "1" / "bricks.img") in _loops(lab)
        spec = load_cluster(lab.cluster_file)
        with SSHExecutor(spec) as ex:
            facts = gather_facts(ex)
            fstypes = {a: f.brick_fstypes for a, f in facts.items()}
            assert fstypes == {node_ip(1): ["xfs"], node_ip(2): ["ext4"], node_ip(3): ["tmpfs"]}

            bricks = {b.host: b for b in run_disk(ex, DiskSpec(size="32MB", runtime=2))}
            assert all(b.error is None and b.jobs["seq_read"].bytes_per_s > 0 for b in bricks.values()), bricks
            # Each brick measured at its own backing (no speed compared: the loop devices' images sit in the same
            # page cache as tmpfs, and on a loaded machine tmpfs wrote 780 MB/s against a loop's 987).
            assert {a: b.path for a, b in bricks.items()} == {
                node_ip(i): str(lab.path / "nodes" / str(i) / "bricks") for i in (1, 2, 3)}, bricks

            cfg = VolumeConfig(name="mixedfs", layout="replicate", replica=3)
            apply_volume(ex, cfg)
            try:
                points = mount(ex, "mixedfs", [spec.host(node_ip(1))])
                _client_connects_from_its_node(points[node_ip(1)], lab.nodes[0])
                ex.run(node_ip(1), f"head -c 1048576 /dev/zero > {points[node_ip(1)]}/f && sync", timeout=60)
                for n in (1, 2, 3):  # every copy landed on its own filesystem
                    assert list((lab.path / "nodes" / str(n) / "bricks").glob("mixedfs-b*/f")), n
                busy = glmodel("lab", "brick", "--dir", d, "--node", "1", "--backing", "ext4")
                assert busy.returncode == 1 and "in use" in busy.stderr and "Traceback" not in busy.stderr
                assert len(busy.stderr.strip().splitlines()) == 1
                unmount(ex, "mixedfs", [spec.host(node_ip(1))])
            finally:
                teardown_volume(ex, "mixedfs")
    finally:
        glmodel("lab", "brick", "--dir", d, "--backing", "dir", check=True)
    # Every loop device detached: gone, or, where something still had it open (a brick process still exiting on a
    # loaded machine, a probe), marked to detach when that last user closes it (autoclear, which `losetup -d` sets
    # on a busy device; a device the lab never detached has none).
    deadline = time.monotonic() + 15
    while "bricks.img" in _loops(lab) and time.monotonic() < deadline:
        time.sleep(0.5)
    lingering = subprocess.run(["losetup", "--list", "--noheadings", "-O", "AUTOCLEAR,BACK-FILE"],
                               capture_output=True, text=True).stdout
    assert all(ln.split()[0] == "1" for ln in lingering.splitlines() if f"{lab.path}/" in ln), lingering
    mounts = Path("/proc/self/mounts").read_text()
    assert str(lab.path / "nodes" / "1" / "bricks") not in mounts
    assert not list(lab.path.glob("nodes/*/bricks.img"))
    assert LabState.load(lab.path).backing == {}  # type: ignore[union-attr]


def _client_connects_from_its_node(mount_point: str, node: NodeState) -> None:
    """A lab client runs in its node's namespace and connects to bricks from the node's address, over its NIC."""
    pid = next(p for p in subprocess.run(["pgrep", "-f", f"glusterfs.*{mount_point}"], capture_output=True,
                                         text=True).stdout.split())
    address = node.address
    lines = [ln for ln in subprocess.run(in_netns(node.netns, ["ss", "-tnp"]), capture_output=True,
                                         text=True).stdout.splitlines()
             if f"pid={pid}," in ln and ":24007" not in ln]  # 24007: the volfile fetch from glusterd
    assert len(lines) == 3, lines  # one connection per brick
    assert all(ln.split()[3].rsplit(":", 1)[0] == address for ln in lines), lines


def test_bad_backing_is_one_line(lab: LabState) -> None:
    bad = glmodel("lab", "brick", "--dir", str(lab.path), "--backing", "zfs")
    assert bad.returncode == 2 and "not a brick backing" in bad.stderr and "xfs" in bad.stderr
    assert "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1, bad.stderr

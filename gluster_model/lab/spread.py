"""Where a replicated volume's reads come from on the lab: the bytes each node's brick processes read while
three clients each read their own file (the check that Gluster's default read policy spreads reads over the
bricks as on separate machines). Used by the lab's integration test and by ``benchmarks/lab_nodes.py``."""

from __future__ import annotations

import subprocess
from pathlib import Path

from . import netns
from .state import LabState
from ..config.cluster import load_cluster
from ..gluster.apply import apply_volume, mount, teardown_volume, unmount
from ..gluster.volume import VolumeConfig
from ..remote.executor import SSHExecutor


def brick_reads(state: LabState) -> dict[str, int]:
    """Bytes each node's brick processes (glusterfsd in its namespace) have read so far: their /proc/PID/io rchar."""
    out = {}
    for node in state.nodes:
        total = 0
        for pid in netns.pids(node.netns):
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() == "glusterfsd":
                    io = dict(ln.split(": ") for ln in Path(f"/proc/{pid}/io").read_text().splitlines())
                    total += int(io["rchar"])
            except OSError:  # a process that ended between the listing and the read
                continue
        out[node.address] = total
    return out


def replica_read_spread(state: LabState, size: int = 32 << 20) -> dict[str, int]:
    """Bytes served by each node's bricks when every node, as a client, reads back its own ``size`` file of a
    replica-N volume (N = the nodes) after its cache was dropped; the volume is removed afterwards."""
    spec = load_cluster(state.cluster_file)
    cfg = VolumeConfig(name="spread", layout="replicate", replica=len(state.nodes))  # Gluster's default read policy
    with SSHExecutor(spec) as ex:
        apply_volume(ex, cfg)
        try:
            points = mount(ex, cfg.name)
            ex.run_many(list(points), lambda a: ["sh", "-c", f"head -c {size} /dev/urandom > {points[a]}/f-{a}"],
                        timeout=120)
            unmount(ex, cfg.name)  # the clients' caches go with their mounts
            subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], check=True, timeout=120)
            points = mount(ex, cfg.name)
            before = brick_reads(state)
            ex.run_many(list(points), lambda a: ["sh", "-c", f"cat {points[a]}/f-{a} > /dev/null"], timeout=120)
            after = brick_reads(state)
            unmount(ex, cfg.name)
        finally:
            teardown_volume(ex, cfg.name)
    return {a: after[a] - before[a] for a in after}

"""The lab's nodes as machines: how long `lab up` takes, whether a node's link and disk settings measure what they
say, and whether Gluster's default read policy spreads a replica-3 volume's reads over its bricks as on separate
machines.

Prints: the bring-up time of a 3-node lab; iperf3 between the nodes at 300 Mbit/s (each pair at once, so a
node's figure is the sum over its pairs, as its one NIC carries them); fio on each brick at 60 MB/s; and, for a
replica-3 volume read by three clients (each its own 32 MiB file), the MiB each node's bricks served.

Run: .venv/bin/python benchmarks/lab_nodes.py     (brings up a lab in a temporary directory and removes it)
"""

from __future__ import annotations

import subprocess
import tempfile
import time
from pathlib import Path

from gluster_model import api
from gluster_model.config.cluster import load_cluster
from gluster_model.gluster.apply import apply_volume, mount, teardown_volume, unmount
from gluster_model.gluster.volume import VolumeConfig
from gluster_model.lab import LabState, lab_down, lab_up, netns
from gluster_model.lab.hardware import set_nodes
from gluster_model.remote.executor import SSHExecutor

MIB = 1 << 20


def brick_reads(state: LabState) -> dict[str, int]:
    """Bytes each node's brick processes have read so far (rchar of /proc/PID/io)."""
    out = {}
    for node in state.nodes:
        total = 0
        for pid in netns.pids(node.netns):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "glusterfsd":
                io = dict(ln.split(": ") for ln in Path(f"/proc/{pid}/io").read_text().splitlines())
                total += int(io["rchar"])
        out[node.address] = total
    return out


def read_spread(state: LabState, size: int = 32 * MIB) -> dict[str, float]:
    """MiB served by each node's bricks when each of three clients reads its own file of a replica-3 volume."""
    spec = load_cluster(state.cluster_file)
    cfg = VolumeConfig(name="spread", layout="replicate", replica=3)  # Gluster's default read policy
    with SSHExecutor(spec) as ex:
        apply_volume(spec, ex, cfg)
        try:
            points = mount(spec, ex, cfg.name)
            ex.run_many(list(points), lambda a: ["sh", "-c", f"head -c {size} /dev/urandom > {points[a]}/f-{a}"],
                        timeout=120)
            unmount(spec, ex, cfg.name)
            subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], check=True, timeout=120)
            points = mount(spec, ex, cfg.name)
            before = brick_reads(state)
            ex.run_many(list(points), lambda a: ["sh", "-c", f"cat {points[a]}/f-{a} > /dev/null"], timeout=120)
            after = brick_reads(state)
            unmount(spec, ex, cfg.name)
        finally:
            teardown_volume(spec, ex, cfg.name)
    return {a: (after[a] - before[a]) / MIB for a in after}


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="glmodel-bench-") as d:
        lab_dir = Path(d) / "lab"
        t0 = time.monotonic()
        state = lab_up(lab_dir, nodes=3, brick_size=1 << 30)
        print(f"lab up, 3 nodes: {time.monotonic() - t0:.1f} s")
        try:
            print("reads of a replica-3 volume, three clients, MiB served per node's bricks: "
                  + ", ".join(f"{a} {v:.0f}" for a, v in read_spread(state).items()))
            set_nodes(lab_dir, [], {"link": 300 * 10**6, "backing": "ext4", "disk_read": 60 * 10**6,
                                    "disk_write": 60 * 10**6}, brick_size=1 << 30)
            matrix = api.bench_iperf(state.cluster_file, seconds=5, directions=["write"])
            sent: dict[str, float] = {}
            for m in matrix.measured():
                if m.value is not None and m.test == "write":
                    sent[m.host] = sent.get(m.host, 0.0) + m.value
            print("iperf3 at 300mbit, Gbit/s sent per node (all pairs at once): "
                  + ", ".join(f"{h} {v / 1e9:.3f}" for h, v in sorted(sent.items())))
            disks = api.bench_disk(state.cluster_file, {"size": "64MB", "runtime": 3, "steady": True,
                                                        "tests": ["seq_read", "seq_write"]})
            for b in disks:
                figures = ", ".join(f"{t} {j.bytes_per_s / 1e6:.1f} MB/s" for t, j in b.jobs.items())
                print(f"fio at 60MB/s, {b.host}: {figures}")
        finally:
            lab_down(lab_dir)


if __name__ == "__main__":
    main()

"""The lab's nodes as machines: how long `lab up` takes, whether a node's link and disk settings measure what they
say, and whether Gluster's default read policy spreads a replica-3 volume's reads over its bricks as on separate
machines.

Prints: the bring-up time of a 3-node lab; iperf3 between the nodes at 300 Mbit/s (each pair at once, so a
node's figure is the sum over its pairs, as its one NIC carries them); fio on each brick at 60 MB/s; and, for a
replica-3 volume read by three clients (each its own 32 MiB file), the MiB each node's bricks served.

Run: .venv/bin/python benchmarks/lab_nodes.py     (brings up a lab in a temporary directory and removes it)
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from gluster_model import api
from gluster_model.lab import lab_down, lab_up
from gluster_model.lab.hardware import set_nodes
from gluster_model.lab.spread import replica_read_spread

MIB = 1 << 20


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="glmodel-bench-") as d:
        lab_dir = Path(d) / "lab"
        t0 = time.monotonic()
        state = lab_up(lab_dir, nodes=3, brick_size=1 << 30)
        print(f"lab up, 3 nodes: {time.monotonic() - t0:.1f} s")
        try:
            print("reads of a replica-3 volume, three clients, MiB served per node's bricks: "
                  + ", ".join(f"{a} {v / MIB:.0f}" for a, v in replica_read_spread(state).items()))
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

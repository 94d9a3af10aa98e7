"""The lab's nodes as machines on a network: each in its own namespace, and Gluster's defaults behave as on
separate machines (a replica-3 volume read by three clients is read from all three bricks)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from gluster_model.config.cluster import load_cluster
from gluster_model.lab import LabState, netns
from gluster_model.lab.spread import replica_read_spread
from gluster_model.remote.executor import SSHExecutor


def test_each_node_sees_only_its_own_address_and_has_its_own_hostname(lab: LabState) -> None:
    spec = load_cluster(lab.cluster_file)
    with SSHExecutor(spec) as ex:
        names = {a: r.stdout.strip() for a, r in ex.run_many([n.address for n in lab.nodes], ["hostname"]).items()}
    assert names == {n.address: n.address for n in lab.nodes}
    for node in lab.nodes:
        shown = subprocess.run(netns.in_netns(node.netns, ["ip", "-4", "-o", "addr", "show"]), capture_output=True,
                               text=True, check=True).stdout
        addresses = sorted(line.split()[3] for line in shown.splitlines())
        assert addresses == sorted(["127.0.0.1/8", f"{node.address}/24"]), addresses
        # glusterd and sshd of the node run inside its namespace
        inside = {Path(f"/proc/{p}/comm").read_text().strip() for p in netns.pids(node.netns)}
        assert {"glusterd", "sshd"} <= inside, inside


def test_replica_reads_from_three_clients_spread_over_the_bricks(lab: LabState) -> None:
    size = 32 << 20
    served = replica_read_spread(lab, size)
    # 3 × 32 MiB were read. With one address space, or one hostname for all nodes, every brick looked local to
    # every client and AFR read from whichever brick answered last (0/32/64 MiB). Here each client's own brick
    # is local to it, as on separate machines, so each brick serves its own client's file.
    assert sum(served.values()) >= 3 * size, served
    assert all(0.9 * size <= v <= 1.5 * size for v in served.values()), {a: round(v / 2**20) for a, v in served.items()}

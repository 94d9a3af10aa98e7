"""Lab link shaping on the real lab: one node at 1 Gbit/s, the others at loopback speed, measured by iperf3."""

from __future__ import annotations

import subprocess

from gluster_model.bench.iperf import IperfSpec, run_iperf
from gluster_model.config.cluster import load_cluster
from gluster_model.lab import LabState
from gluster_model.lab.links import IFB
from gluster_model.remote.executor import SSHExecutor

from .conftest import glmodel


def _lo_qdiscs() -> str:
    return subprocess.run(["tc", "qdisc", "show", "dev", "lo"], capture_output=True, text=True).stdout


def test_one_node_at_1gbit_is_measured_as_such_and_unshaping_leaves_nothing(lab: LabState) -> None:
    shaped = glmodel("lab", "link", "--dir", str(lab.path), "--node", "1", "--rate", "1gbit", check=True)
    assert "127.1.1.1  1gbit" in shaped.stdout and "127.1.1.2  unlimited" in shaped.stdout
    try:
        assert "htb" in _lo_qdiscs()
        spec = load_cluster(lab.cluster_file)
        with SSHExecutor(spec) as ex:
            matrix = run_iperf(spec, ex, IperfSpec(seconds=3, omit=1, directions=["write"]))
        pairs = {(p.client, p.server): p.received_bps or 0.0 for p in matrix.ok()}
        assert len(pairs) == 6, matrix.pairs
        sent = pairs[("127.1.1.1", "127.1.1.2")] + pairs[("127.1.1.1", "127.1.1.3")]
        received = pairs[("127.1.1.2", "127.1.1.1")] + pairs[("127.1.1.3", "127.1.1.1")]
        # Node 1's link, shared by its two peers as a NIC is, carries ~1 Gbit/s each way (full duplex).
        assert 0.9e9 <= sent <= 1.1e9, pairs
        assert 0.9e9 <= received <= 1.1e9, pairs
        # Between the unshaped nodes, far more.
        assert min(pairs[("127.1.1.2", "127.1.1.3")], pairs[("127.1.1.3", "127.1.1.2")]) > 2e9, pairs
        status = glmodel("lab", "status", "--dir", str(lab.path), check=True)
        assert "1gbit" in status.stdout
    finally:
        glmodel("lab", "link", "--dir", str(lab.path), "--rate", "unlimited", check=True)
    assert "htb" not in _lo_qdiscs() and "ingress" not in _lo_qdiscs()
    assert subprocess.run(["ip", "link", "show", IFB], capture_output=True).returncode != 0
    assert LabState.load(lab.path).links == {}  # type: ignore[union-attr]


def test_bad_rate_is_one_line(lab: LabState) -> None:
    bad = glmodel("lab", "link", "--dir", str(lab.path), "--rate", "fast")
    assert bad.returncode == 2 and "not a link rate" in bad.stderr and "Traceback" not in bad.stderr

"""Clients apart from the servers (`glmodel lab up --client-nodes K`) against a hyperconverged cluster (every node
client and server): on the same nodes, link and volume, a client that holds no brick sends every copy of a write
and every byte of a read through its NIC, while a client that is also a server reaches its own brick without
it. This is what lets the link set throughput, as on a cluster whose clients are other machines."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import yaml

from gluster_model.dataset import read_table
from gluster_model.lab import LabState, lab_up

from .conftest import glmodel

PLAN = {
    "name": "apart",
    "factors": {"link": ["300mbit"], "layout": "replicate", "replica": 2, "servers": 2, "clients": 1,
                "file_size": "24MB", "record_size": "1MB", "threads": 2, "sync": "odirect"},
    "design": {"type": "grid"},
    "workload": {"tests": ["write", "read"]},
    "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none"},
    "baselines": {"disk": False, "iperf": {"seconds": 2, "omit": 0, "directions": ["write"]}},
}
LINK_MBPS = 300e6 / 8 / 1e6  # 37.5 MB/s


def _measure(cluster: Path, tmp_path: Path, name: str) -> pd.Series:
    plan = tmp_path / "apart.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    store, table = tmp_path / f"{name}.db", tmp_path / f"{name}.csv"
    glmodel("collect", "--cluster", str(cluster), "--plan", str(plan), "--store", str(store), check=True,
            timeout=600)
    glmodel("export", "--store", str(store), "--format", "csv", "--out", str(table), check=True)
    (row,) = [r for _, r in read_table(table).iterrows()]
    return row


def test_a_client_apart_from_the_servers_sends_every_byte_through_its_link(lab: LabState, tmp_path: Path) -> None:
    try:
        glmodel("lab", "up", "--dir", str(lab.path), "--nodes", "3", "--client-nodes", "1", "--brick-size", "1GB",
                check=True, timeout=180)
        data = yaml.safe_load(lab.cluster_file.read_text())
        assert [h["name"] for h in data["servers"]] == ["node1", "node2"]
        assert [h["name"] for h in data["clients"]] == ["node3"] and "brick_paths" not in data["clients"][0]
        status = glmodel("lab", "status", "--dir", str(lab.path), check=True).stdout
        assert re.findall(r"10\.213\.\d+\.\d+\W+(client\+server|server|client)\b", status) == ["server", "server",
                                                                                           "client"], status
        checked = glmodel("check", "--cluster", str(lab.cluster_file), timeout=300)
        assert checked.returncode == 0, checked.stdout + checked.stderr

        apart = _measure(lab.cluster_file, tmp_path, "apart")
        # The same two servers, their own clients: node1 writes one copy to its own brick and reads it back.
        hyper = {**data, "lab": {"state_dir": str(lab.path)},
                 "ssh": {**data["ssh"], "identity_file": str(lab.path / "ssh" / "id_ed25519"),
                         "known_hosts": str(lab.path / "ssh" / "known_hosts")}}
        del hyper["clients"]
        hyper_file = tmp_path / "hyper.yaml"
        hyper_file.write_text(yaml.safe_dump(hyper))
        both = _measure(hyper_file, tmp_path, "hyper")
    finally:  # the session's lab as the other tests know it
        lab_up(lab.path, nodes=3, brick_size=1 << 30)

    # Apart: the iperf baseline is the client's link, both copies of a write share it, a read takes it whole.
    assert 0.28 <= apart["network_gbps"] <= 0.31, apart["network_gbps"]
    assert 0.75 * LINK_MBPS / 2 <= apart["write"] <= 1.1 * LINK_MBPS / 2, apart["write"]
    assert apart["read"] <= 1.1 * LINK_MBPS, apart["read"]
    # Hyperconverged: one copy stays on the client's own node, and reads come from its own brick.
    assert both["write"] > 1.4 * apart["write"] and both["read"] > 1.4 * apart["read"], (both["write"],
                                                                                        both["read"])

"""The trial knob, one module (hardware/knobs/mtu.py), on real parts: `lab node --mtu` sets each node's NIC in its
namespace and puts back what it had; a plan's `mtu` factor on the lab addressed as a plain cluster (emulation)
reaches every host, is what the campaign's host facts recorded, and is put back at the plan's end."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from gluster_model.lab import LabState
from gluster_model.lab.clusterfile import write_plain_cluster_file
from gluster_model.lab.netns import NIC, in_netns
from gluster_model.store import open_store

from .conftest import glmodel


def _mtu(netns: str) -> int:
    out = subprocess.run(in_netns(netns, ["ip", "-o", "link", "show", "dev", NIC]), capture_output=True, text=True,
                         check=True).stdout
    found = re.search(r" mtu (\d+) ", out)
    assert found, out
    return int(found.group(1))


def test_the_mtu_knob_sets_lab_nodes_and_emulated_hosts_and_puts_back_what_they_had(
        lab: LabState, tmp_path: Path) -> None:
    had = {n.address: _mtu(n.netns) for n in lab.nodes}
    node = lab.nodes[0]
    try:
        out = glmodel("lab", "node", "--dir", str(lab.path), "--node", node.address, "--mtu", "1400", check=True)
        assert "mtu 1400" in out.stdout and _mtu(node.netns) == 1400
        assert all(_mtu(n.netns) == had[n.address] for n in lab.nodes[1:])  # only the node named
        glmodel("lab", "node", "--dir", str(lab.path), "--node", node.address, "--mtu", "default", check=True)
        assert _mtu(node.netns) == had[node.address]
        bad = glmodel("lab", "node", "--dir", str(lab.path), "--mtu", "20000")
        assert bad.returncode == 2 and "is not an MTU" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1

        # the same knob through emulation: the lab's nodes as a plain cluster's hosts
        cf = write_plain_cluster_file(lab.path, tmp_path / "plain.yaml", tmp_path / "records")
        plan = tmp_path / "mtu.yaml"
        plan.write_text(yaml.safe_dump({
            "name": "mtu", "factors": {"mtu": [1400], "file_size": "4MB", "record_size": "1MB", "threads": 2},
            "workload": {"tests": ["write"]}, "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none"},
            "baselines": {"network": False, "disk": False}}))
        store = tmp_path / "mtu.db"
        done = glmodel("collect", "--yes", "--cluster", str(cf), "--plan", str(plan), "--store", str(store),
                       timeout=600)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        with open_store(store, create=False) as st:
            (camp,) = st.campaigns()
            assert camp.setting == {"mtu": "1400"}
            facts = {h.address: h.facts for h in st.hosts(int(camp.id))}
        # every host measured at the setting (its facts read after the change), every one put back after
        assert sorted(facts) == sorted(had) and {f.nic_mtu for f in facts.values()} == {1400}, facts
        assert {a: _mtu(n.netns) for a, n in ((n.address, n) for n in lab.nodes)} == had
    finally:
        glmodel("lab", "node", "--dir", str(lab.path), "--mtu", "default")

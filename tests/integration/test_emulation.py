"""Emulated hardware on a cluster that is not a lab (the lab's nodes, addressed through a cluster file without its
`lab:` section): a plan's link setting shapes each host's NIC, is recorded on the host first, and is undone at
the plan's end, after a kill -9 by `glmodel restore`, and reported by `glmodel check` while it is in place."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from gluster_model.lab import LabState
from gluster_model.lab.netns import in_netns
from gluster_model.store import open_store

from .conftest import glmodel

PLAN = {
    "name": "emu",
    "factors": {"link": ["300mbit"], "file_size": "4MB", "record_size": "1MB", "threads": 3, "sync": "odirect"},
    "design": {"type": "grid"},
    "workload": {"tests": ["write"]},
    "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none"},
    "baselines": {"disk": False, "iperf": {"seconds": 2, "omit": 0, "directions": ["write"]}},
}


def _shaped(lab: LabState) -> list[str]:
    """The lab nodes whose NIC has an HTB root qdisc now."""
    out = []
    for node in lab.nodes:
        shown = subprocess.run(in_netns(node.netns, ["tc", "qdisc", "show", "dev", "eth0"]), capture_output=True,
                               text=True, check=True).stdout
        if "htb" in shown:
            out.append(node.address)
    return out


def _real_cluster(lab: LabState, tmp_path: Path) -> tuple[Path, Path]:
    data = yaml.safe_load(lab.cluster_file.read_text())
    del data["lab"]  # to glmodel, an ordinary cluster now: no lab state to change hardware with
    data["ssh"]["identity_file"] = str(lab.path / "ssh" / "id_ed25519")
    data["ssh"]["known_hosts"] = str(lab.path / "ssh" / "known_hosts")
    records = tmp_path / "records"
    data["emulation"] = {"allow": True, "record_dir": str(records)}
    cf = tmp_path / "real.yaml"
    cf.write_text(yaml.safe_dump(data))
    return cf, records


def test_link_emulation_is_recorded_on_each_host_and_always_undone(lab: LabState, tmp_path: Path) -> None:
    cf, records = _real_cluster(lab, tmp_path)
    plan = tmp_path / "emu.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    store = tmp_path / "emu.db"
    collect = ["collect", "--cluster", str(cf), "--plan", str(plan), "--store", str(store)]

    # Killed -9 while the hosts are shaped: nothing of the campaign's own runs, but each host holds its record.
    proc = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", *collect], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while len(_shaped(lab)) < 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
        assert len(_shaped(lab)) == 3, "the plan's link setting never reached the hosts"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert sorted(p.name for p in records.iterdir()) == [f"emulation-{n.address}.undo" for n in lab.nodes]

    checked = glmodel("check", "--cluster", str(cf))
    assert checked.returncode == 1 and "emulated hardware change(s) still in place" in checked.stderr
    assert f"glmodel restore --cluster {cf}" in checked.stderr

    restored = glmodel("restore", "--cluster", str(cf), check=True)
    assert restored.stdout.splitlines() == [f"node{n.index}: restored 3 change(s)" for n in lab.nodes]
    assert _shaped(lab) == [] and list(records.iterdir()) == []
    again = glmodel("restore", "--cluster", str(cf), check=True)
    assert again.stdout.splitlines() == [f"node{n.index}: nothing to restore" for n in lab.nodes]

    # Run to its end: measured at 300 Mbit/s, and the hosts put back afterwards.
    done = glmodel(*collect, timeout=600, check=True)
    assert "0 failed" in done.stdout and "restored 3 change(s)" in done.stdout
    assert _shaped(lab) == [] and list(records.iterdir()) == []
    with open_store(str(store), create=False) as st:
        (campaign,) = st.campaigns()
        rows = [b for b in st.baselines(campaign["hardware_key"]) if b["kind"] == "network" and b["test"] == "write"]
    sent: dict[str, float] = {}
    for b in rows:  # every pair at once: a host's two pairs share its NIC
        sent[b["host"]] = sent.get(b["host"], 0.0) + (b["value"] or 0.0)
    assert len(sent) == 3 and all(0.28e9 <= v <= 0.31e9 for v in sent.values()), sent

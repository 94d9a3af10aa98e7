"""`glmodel check` and `glmodel trust` against the real lab."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from gluster_model.lab import LabState, start_sshd, stop_sshd

from .conftest import glmodel, node_ip


def test_check_passes_on_healthy_lab(cluster_file: Path) -> None:
    proc = glmodel("check", "--cluster", str(cluster_file))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all 3 host(s) ready" in proc.stdout
    assert proc.stdout.count("ready") >= 4 and "NOT READY" not in proc.stdout
    # the lab's nodes are one machine (one boot id): each asks its quota of the cores (all of them where it has
    # none), and where they ask more than the machine has, keeps its part of the cores under load, of what its CPU
    # score's single process used alone; the figures from the facts check reports, the arithmetic the test's own
    import json

    facts = [h["facts"] for h in json.loads(glmodel("check", "--cluster", str(cluster_file), "--json").stdout)["hosts"]]
    assert len({f["boot_id"] for f in facts}) == 1, facts
    cores = facts[0]["cpus"]
    wants = [min(f.get("cpu_quota_cores") or cores, cores) for f in facts]
    shown = " ".join(proc.stdout.split())
    assert shown.count(f"shares one machine's {cores} core(s) with") == 3, shown
    for want in set(wants):
        share = cores * want / sum(wants) if sum(wants) > cores else want
        kept = round(100 * min(1.0, share / min(want, 1.0)))
        line = f"their CPU limits ask {sum(wants):g}; under load it keeps {kept}% of its CPU score alone"
        assert shown.count(line) == wants.count(want), (line, shown)


def test_check_json_reports_facts(cluster_file: Path) -> None:
    import json

    proc = glmodel("check", "--cluster", str(cluster_file), "--json")
    report = json.loads(proc.stdout)
    assert report["ok"] is True and len(report["hosts"]) == 3
    for host in report["hosts"]:
        facts = host["facts"]
        assert facts["gluster_version"].startswith("10.")
        assert facts["ram_bytes"] > 0 and facts["cpus"] >= 1
        assert "Version" in facts["iozone_version"]
        assert abs(facts["clock_offset_s"]) < 1.0  # one machine, one clock
        brick = next(iter(facts["bricks"].values()))
        assert brick["free_bytes"] > 0


def test_check_fails_and_names_host_when_its_sshd_stops(lab: LabState, cluster_file: Path) -> None:
    node2 = lab.nodes[1]
    stop_sshd(node2, lab.path)
    try:
        proc = glmodel("check", "--cluster", str(cluster_file))
        assert proc.returncode == 1
        assert "1 host(s) not ready: node2" in proc.stderr
        assert f"{node_ip(2)}:2222 refused" in proc.stderr
        assert "node1" in proc.stdout and "node3" in proc.stdout  # the others are still reported
        assert proc.stdout.count("eth0") == 2  # each ready node's NIC is named
    finally:
        start_sshd(node2, lab)
    assert glmodel("check", "--cluster", str(cluster_file)).returncode == 0


def test_unknown_host_key_refused_until_trusted(lab: LabState, tmp_path: Path) -> None:
    data = yaml.safe_load(lab.cluster_file.read_text())
    shutil.copy(lab.path / "ssh" / "id_ed25519", tmp_path / "id")
    data["ssh"]["identity_file"] = str(tmp_path / "id")
    data["ssh"]["known_hosts"] = str(tmp_path / "known_hosts")
    data["lab"]["state_dir"] = str(lab.path)
    cf = tmp_path / "fresh.yaml"
    cf.write_text(yaml.safe_dump(data))

    refused = glmodel("check", "--cluster", str(cf))
    assert refused.returncode == 1
    assert "host key not in" in refused.stderr and "glmodel trust --cluster" in refused.stderr

    shown = glmodel("trust", "--cluster", str(cf))  # no --yes, no terminal: shows, records nothing
    assert shown.returncode == 0 and "SHA256:" in shown.stdout and "not recorded" in shown.stdout
    assert not (tmp_path / "known_hosts").exists()

    recorded = glmodel("trust", "--cluster", str(cf), "--yes")
    assert "recorded 3 key(s)" in recorded.stdout
    lines = (tmp_path / "known_hosts").read_text().splitlines()
    assert sorted(ln.split()[0] for ln in lines) == [f"[{node_ip(i)}]:2222" for i in (1, 2, 3)]
    assert glmodel("check", "--cluster", str(cf)).returncode == 0

    again = glmodel("trust", "--cluster", str(cf), "--yes")
    assert again.stdout.count("known") >= 3 and "recorded" not in again.stdout


def test_changed_host_key_is_refused_and_not_replaced(lab: LabState, tmp_path: Path) -> None:
    data = yaml.safe_load(lab.cluster_file.read_text())
    shutil.copy(lab.path / "ssh" / "id_ed25519", tmp_path / "id")
    known = (lab.path / "ssh" / "known_hosts").read_text().splitlines()
    impostor = (lab.path / "nodes" / "2" / "ssh_host_ed25519_key.pub").read_text().split()[1]
    known[0] = known[0].rsplit(" ", 1)[0] + " " + impostor  # node1 listed with node2's key
    (tmp_path / "known_hosts").write_text("\n".join(known) + "\n")
    data["ssh"].update(identity_file=str(tmp_path / "id"), known_hosts=str(tmp_path / "known_hosts"))
    cf = tmp_path / "mitm.yaml"
    cf.write_text(yaml.safe_dump(data))

    proc = glmodel("check", "--cluster", str(cf))
    assert proc.returncode == 1 and "node1" in proc.stderr and "host key CHANGED" in proc.stderr
    before = (tmp_path / "known_hosts").read_text()
    trust = glmodel("trust", "--cluster", str(cf), "--yes")
    assert trust.returncode == 1 and "host key changed for node1: not replaced" in trust.stderr
    assert (tmp_path / "known_hosts").read_text() == before

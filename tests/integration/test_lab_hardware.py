"""Lab nodes as small machines, on the real kernel: disk throttles measured by fio, a CPU quota measured by the
CPU score, a RAM limit that decides the cache regime of a real campaign, and bad values refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gluster_model.config.cluster import load_cluster
from gluster_model.dataset import trial_frame
from gluster_model.lab import LabState
from gluster_model.preflight import cpu_score, gather_facts
from gluster_model.remote.executor import SSHExecutor
from gluster_model.store import open_store

from .conftest import glmodel, lab_throttle_lines, node_ip



def _disk(cluster: Path) -> dict[str, dict[str, float]]:
    out = glmodel("bench", "disk", "--cluster", str(cluster), "--size", "64MB", "--runtime", "3", "--test",
                  "seq_write", "--test", "seq_read", "--json", timeout=300, check=True)
    return {b["host"]: {"write": b["jobs"]["seq_write"]["write_bps"] / 1e6,
                        "read": b["jobs"]["seq_read"]["read_bps"] / 1e6} for b in json.loads(out.stdout)}


def test_disk_limits_are_measured_by_fio_and_removed(lab: LabState) -> None:
    d = str(lab.path)
    try:
        shown = glmodel("lab", "node", "--dir", d, "--node", "1", "--disk-read", "120MB/s", "--disk-write",
                        "60MB/s", "--size", "1GB", "--backing", "ext4", check=True)
        assert f"{node_ip(1)}  link unlimited  bricks ext4  disk r 120MB/s, w 60MB/s" in shown.stdout
        assert "60000000" in lab_throttle_lines(lab)
        limited = _disk(lab.cluster_file)[node_ip(1)]
        # a throttle is a ceiling: a busy machine measures less, never more (the bound below only tells the
        # throttle from no throttle, which measures more than twice it: asserted further down)
        # (1.5 above: with three labs on the machine's one root blkio group a read came 30% over its 120 MB/s
        # throttle once, cause not found, 2026-11-30; unthrottled is over twice it, asserted below)
        assert 0.7 < limited["write"] / 60 < 1.5 and 0.7 < limited["read"] / 120 < 1.5, limited
        spec = load_cluster(lab.cluster_file)
        with SSHExecutor(spec) as ex:  # the throttle is a host fact of the brick, as on any throttled server
            brick = (gather_facts(ex)[node_ip(1)].bricks or {})[lab.nodes[0].bricks]
        assert brick.throttle == {"read_bps": 120_000_000, "write_bps": 60_000_000}

        glmodel("lab", "node", "--dir", d, "--node", "1", "--disk", "unlimited", check=True)
        assert lab_throttle_lines(lab).strip() == ""
        free = _disk(lab.cluster_file)[node_ip(1)]
        assert free["write"] > 2 * 60 and free["read"] > 2 * 120, free
    finally:
        glmodel("lab", "node", "--dir", d, "--node", "1", "--disk", "unlimited", "--backing", "dir", check=True)
    state = LabState.load(lab.path)
    assert state is not None and state.disk == {} and state.throttles == [] and state.backing == {}


@pytest.mark.alone  # a ratio of two CPU scores: another lab's load lowers the unlimited one, not the quota's
def test_cpu_quota_lowers_the_measured_cpu_score(lab: LabState) -> None:
    d = str(lab.path)
    spec = load_cluster(lab.cluster_file)
    try:
        glmodel("lab", "node", "--dir", d, "--node", "2", "--cpu", "0.25", check=True)
        with SSHExecutor(spec) as ex:
            # Node 1 (unlimited) and node 2 (a quarter core) are scored at the same moment, each on a core of
            # its own, so the machine's own speed, which drifts by a quarter on a shared VM, cancels out.
            # On a busy host the quota's 100 ms periods cost the limited node a little more than its share
            # (CI once saw 0.16, 0.27, 0.18): the median of five, and a band that still tells a quarter core from
            # none (about 1) and from half of one or an eighth.
            ratios = []
            for _ in range(5):
                scores, errors = ex.map([node_ip(1), node_ip(2)], lambda a: cpu_score(ex, a))
                assert not errors, errors
                ratios.append(scores[node_ip(2)] / scores[node_ip(1)])
        assert 0.15 <= sorted(ratios)[2] <= 0.38, ratios
        with SSHExecutor(spec) as ex:
            facts = gather_facts(ex)
        assert facts[node_ip(2)].cpu_quota_cores == 0.25 and facts[node_ip(1)].cpu_quota_cores is None
        # one machine, two limits: node 2 is scored on its own, not given node 1's (or node 3's) score
        assert facts[node_ip(2)].cpu_score < facts[node_ip(1)].cpu_score == facts[node_ip(3)].cpu_score  # type: ignore[operator]
    finally:
        glmodel("lab", "node", "--dir", d, "--node", "2", "--cpu", "unlimited", check=True)
    state = LabState.load(lab.path)
    assert state is not None and state.cpu == {}


RAM_PLAN = {
    "name": "ramci",
    # The note's case is 1 GiB of RAM and a 3 GiB file; at half the scale the test shows the same in half the time.
    "factors": {"ram": "512MB", "servers": 1, "clients": 1, "file_size": ["1536MB", "128MB"], "record_size": "1MB",
                "threads": 1},
    "workload": {"tests": ["write", "read"]},
    "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none"},
    "baselines": {"iperf": {"seconds": 1, "omit": 0}, "fio": {"size": "8MB", "runtime": 1}},
}


@pytest.mark.alone  # reads back from the page cache, which another lab's cache drop would empty
def test_a_ram_limit_puts_a_larger_file_in_the_uncached_regime(lab_put_back: LabState, tmp_path: Path) -> None:
    lab = lab_put_back
    plan = tmp_path / "ram.yaml"
    plan.write_text(yaml.safe_dump(RAM_PLAN))
    store = str(tmp_path / "ram.db")
    glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--store", store, timeout=900,
            check=True)
    with open_store(store, create=False) as st:
        frame = trial_frame(st).set_index("file_size")
    big, small = frame.loc[1536 << 20], frame.loc[128 << 20]
    # The node's measured RAM is its group's limit, not the machine's 24 GiB, and it decides the regime.
    assert big["client_ram_gb"] == small["client_ram_gb"] == 0.5
    assert big["regime"] == "uncached" and small["regime"] == "cached"
    # Read back without a cache drop: the small file comes from the client's page cache, the large one cannot.
    assert small["read"] > 3 * big["read"], (small["read"], big["read"])
    state = LabState.load(lab.path)
    assert state is not None and state.ram == {}  # put back as it was


def test_bad_hardware_values_are_one_line_each(lab: LabState, tmp_path: Path) -> None:
    d = str(lab.path)
    cases = [(["lab", "up", "--dir", str(tmp_path / "x"), "--disk", "fast"], "--disk"),
             (["lab", "node", "--dir", d, "--ram", "0"], "--ram"),
             (["lab", "node", "--dir", d, "--cpu", "7"], "--cpu"),
             (["lab", "node", "--dir", d, "--disk-write", "-5MB/s"], "--disk-write")]
    for args, option in cases:
        bad = glmodel(*args)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr, bad.stderr
        assert len(bad.stderr.strip().splitlines()) == 1 and option in bad.stderr, bad.stderr
    plan = tmp_path / "bad.yaml"
    plan.write_text(yaml.safe_dump({**RAM_PLAN, "factors": {"disk": "-5MB/s", "record_size": "64KB"}}))
    bad = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--dry-run")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "factor 'disk'" in bad.stderr and "disk rate" in bad.stderr
    assert not (tmp_path / "x").exists()
    state = LabState.load(lab.path)
    assert state is not None and state.ram == {} and state.cpu == {}

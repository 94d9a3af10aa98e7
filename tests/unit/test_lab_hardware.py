"""Per-node hardware of the lab as settings: parsing with one-line refusals, and the kernel writes each
setting becomes (pure builders; the real kernel is exercised by tests/integration/test_lab_hardware.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gluster_model.errors import LabError
from gluster_model.hardware.limits import cpu_score_script, parse_cpu_score, parse_limits, parse_throttles
from gluster_model.hardware.group import cpu_files, memory_file
from gluster_model.lab import cgroups
from gluster_model.hardware.settings import parse_cpu, parse_ram
from gluster_model.lab.disk import parse_disk_rate, parse_iops, show_limits, v1_entries, v2_line
from gluster_model.hardware.settings import canonical, parse_setting
from gluster_model.errors import ParseError


def test_disk_rates_are_si_like_fio_and_refuse_words_and_negatives() -> None:
    assert parse_disk_rate("150MB/s") == 150_000_000 and parse_disk_rate("1.5 GB/s") == 1_500_000_000
    assert parse_disk_rate("200MiB/s") == 200 << 20 and parse_disk_rate("40mbps") == 40_000_000
    assert parse_disk_rate("unlimited") is None
    for bad in ("fast", "-5MB/s", "0MB/s", "5 furlongs", ""):
        with pytest.raises(ValueError, match="disk rate"):
            parse_disk_rate(bad)
    assert parse_iops("500") == 500 and parse_iops("unlimited") is None
    with pytest.raises(ValueError, match="IOPS"):
        parse_iops("0")


def test_ram_and_cpu_limits_name_what_is_allowed() -> None:
    assert parse_ram("1GB", total=4 << 30) == 1 << 30 and parse_ram("unlimited", total=4 << 30) is None
    with pytest.raises(ValueError, match="at least 256MB"):
        parse_ram("0", total=4 << 30)
    with pytest.raises(ValueError, match="more than this machine's 4.0 GiB"):
        parse_ram("8GB", total=4 << 30)
    with pytest.raises(ValueError, match="not an amount of RAM"):
        parse_ram("lots", total=4 << 30)
    assert parse_cpu("0.25", cpus=2) == 0.25 and parse_cpu("2", cpus=2) == 2 and parse_cpu("none", cpus=2) is None
    with pytest.raises(ValueError, match="more than this machine's 2 CPU"):
        parse_cpu("7", cpus=2)
    for bad in ("0", "-1", "nan", "half"):
        with pytest.raises(ValueError):
            parse_cpu(bad, cpus=2)


def test_settings_and_their_canonical_text() -> None:
    assert parse_setting("disk", "60MB/s") == {"disk_read": 60_000_000, "disk_write": 60_000_000}
    assert parse_setting("disk_iops", "300") == {"disk_read_iops": 300, "disk_write_iops": 300}
    assert canonical("disk", "150 MB/s") == "150MB/s" and canonical("link", "1 Gbit") == "1gbit"
    assert canonical("cpu", "0.50") == "0.5" and canonical("backing", "XFS") == "xfs"
    with pytest.raises(ValueError, match="not a lab setting"):
        parse_setting("gpu", "1")


def test_throttle_writes_set_exactly_the_limits_and_remove_the_rest() -> None:
    limits = {"read_bps": 120_000_000, "write_bps": 60_000_000}
    assert v1_entries("7:3", limits) == [("blkio.throttle.read_bps_device", "7:3 120000000"),
                                         ("blkio.throttle.write_bps_device", "7:3 60000000"),
                                         ("blkio.throttle.read_iops_device", "7:3 0"),
                                         ("blkio.throttle.write_iops_device", "7:3 0")]
    assert v2_line("7:3", limits) == "7:3 rbps=120000000 wbps=60000000 riops=max wiops=max"
    assert v2_line("7:3", {}) == "7:3 rbps=max wbps=max riops=max wiops=max"
    assert show_limits(limits) == "r 120MB/s, w 60MB/s" and show_limits({}) == "unlimited"


def test_memory_and_cpu_knobs_for_both_cgroup_versions() -> None:
    assert memory_file(1, 1 << 30) == ("memory.limit_in_bytes", str(1 << 30)) and memory_file(1, None)[1] == "-1"
    assert memory_file(2, None) == ("memory.max", "max")
    assert cpu_files(1, 0.25) == [("cpu.cfs_period_us", "100000"), ("cpu.cfs_quota_us", "25000")]
    assert cpu_files(1, None)[1] == ("cpu.cfs_quota_us", "-1")
    assert cpu_files(2, 1.5) == [("cpu.max", "150000 100000")] and cpu_files(2, None) == [("cpu.max", "max 100000")]


V1_MOUNTS = """cgroup /sys/fs/cgroup/cpu cgroup rw,relatime,cpu 0 0
cgroup /sys/fs/cgroup/memory cgroup rw,relatime,memory 0 0
cgroup /sys/fs/cgroup/blkio cgroup rw,relatime,blkio 0 0
cgroup2 /sys/fs/cgroup/unified cgroup2 rw,relatime 0 0
"""


def test_controllers_are_found_from_the_mount_table_and_a_missing_one_is_named() -> None:
    assert cgroups.hierarchy("memory", V1_MOUNTS) == cgroups.Hierarchy(1, cgroups.Path("/sys/fs/cgroup/memory"))
    assert cgroups.hierarchy("io", V1_MOUNTS).root.name == "blkio"
    only_cpu = "cgroup /sys/fs/cgroup/cpu,cpuacct cgroup rw,cpu,cpuacct 0 0\n"
    assert cgroups.hierarchy("cpu", only_cpu).root.name == "cpu,cpuacct"
    with pytest.raises(LabError, match="no `memory` cgroup controller"):
        cgroups.hierarchy("memory", only_cpu)
    assert cgroups.lab_group_name("/tmp/a") != cgroups.lab_group_name("/tmp/b")


def test_limits_are_the_tightest_level_and_no_limit_is_none() -> None:
    v1 = ("cpu.cfs_quota_us=25000\ncpu.cfs_period_us=100000\ncpu.cfs_quota_us=-1\ncpu.cfs_period_us=100000\n"
          "memory.limit_in_bytes=1073741824\nmemory.limit_in_bytes=9223372036854771712\n")
    assert parse_limits(v1, mem_total=24 << 30, cpus=2) == {"ram_limit_bytes": 1 << 30, "cpu_quota_cores": 0.25}
    v2 = "memory.max=max\ncpu.max=max 100000\nmemory.max=536870912\ncpu.max=50000 100000\n"
    assert parse_limits(v2, mem_total=24 << 30, cpus=2) == {"ram_limit_bytes": 512 << 20, "cpu_quota_cores": 0.5}
    # A limit above what the machine has limits nothing.
    assert parse_limits("memory.max=99999999999999\ncpu.max=400000 100000\n", 24 << 30, 2) == \
        {"ram_limit_bytes": None, "cpu_quota_cores": None}


def test_cpu_score_takes_the_fastest_repeat_and_refuses_garbage() -> None:
    assert "sha256sum" in cpu_score_script(1 << 20, 2)
    assert parse_cpu_score("200000000\n100000000\n", nbytes=32 << 20) == pytest.approx((32 << 20) / 0.1 / 1e6)
    for bad in ("", "12ms", "-5"):
        with pytest.raises(ParseError, match="cpu score"):
            parse_cpu_score(bad)


def test_brick_throttles_are_matched_by_device() -> None:
    text = ("dev /l/n1/bricks 7:2\ndev /l/n1/other 8:0\nblkio.throttle.read_bps_device 7:2 120000000\n"
            "blkio.throttle.write_bps_device 7:2 60000000\nblkio.throttle.write_bps_device 7:9 5\n")
    assert parse_throttles(text) == {"/l/n1/bricks": {"read_bps": 120000000, "write_bps": 60000000}}


def test_a_plan_records_the_lab_before_it_and_a_later_plan_puts_back_that_not_a_killed_plans_setting(
        tmp_path: Path) -> None:
    """kill -9 skips a plan's restore: the lab's state keeps what the lab was before it, so the next plan (or
    `glmodel restore`) puts that back, not the setting the killed plan had reached."""
    from gluster_model.campaign.lab_setting import lab_snapshot
    from gluster_model.config.cluster import cluster_from_data
    from gluster_model.lab.state import LabState, NodeState

    state = LabState(str(tmp_path), 2222, [NodeState(1, "10.213.1.1", str(tmp_path / "n1"))], status="up")
    state.save()
    cluster = cluster_from_data({"name": "lab", "lab": {"state_dir": str(tmp_path)},
                                 "servers": [{"host": "10.213.1.1", "brick_paths": ["/b"]}]}, "lab.yaml", tmp_path)
    notes: list[str] = []
    first = lab_snapshot(cluster, notes.append)
    assert first.lab is not None and first.lab["10.213.1.1"]["link"] is None and notes == []
    recorded = LabState.load(tmp_path)
    assert recorded is not None and recorded.before_plan == first.lab
    # the plan throttled the link and was killed: the state says 100 Mbit/s, the record still says unlimited
    recorded.links["10.213.1.1"] = 100_000_000
    recorded.save()
    second = lab_snapshot(cluster, notes.append)
    assert second.lab == first.lab and second.lab is not None and second.lab["10.213.1.1"]["link"] is None
    assert notes and "puts it back" in notes[0]


def test_a_lab_of_an_earlier_release_keeps_its_delays_as_the_latency_knobs_entries(tmp_path: Path) -> None:
    """An earlier release kept each node's delay in a table of its own; loaded now, it is the latency knob's
    record (what ``lab down``, ``lab status`` and a plan's restore read), the delay the node had before it none."""
    import json

    from gluster_model.lab.hardware import node_settings, snapshot
    from gluster_model.lab.state import STATE_FILE, LabState

    node = {"index": 1, "address": "10.213.1.1", "dir": str(tmp_path / "nodes" / "1"), "netns": "glm-x-1"}
    old = {"dir": str(tmp_path), "ssh_port": 22, "nodes": [node], "status": "up", "latency": {"10.213.1.1": 1000}}
    (tmp_path / STATE_FILE).write_text(json.dumps(old))
    state = LabState.load(tmp_path)
    assert state is not None
    assert state.stepped == {"latency": {"10.213.1.1": {"value": 1000, "was": "none"}}}
    assert node_settings(state, "10.213.1.1")["latency"] == "1ms"
    assert snapshot(state)["10.213.1.1"]["latency"] == 1000


def test_a_brick_size_given_without_a_change_of_backing_is_kept(tmp_path: Path) -> None:
    """`lab brick --backing dir --size 1GB` on nodes already on the directory changes no node, but the size is
    the next backing's (a disk limit gives a node an ext4 image of it): it is saved, not lost with the process."""
    from gluster_model.lab.hardware import set_backing
    from gluster_model.lab.state import LabState, NodeState

    state = LabState(str(tmp_path), 22, [NodeState(1, "10.213.1.1", str(tmp_path / "nodes" / "1"))],
                     brick_size=64 << 20)
    state.save()
    assert set_backing(state, {"10.213.1.1": "dir"}, 1 << 30) == []
    again = LabState.load(tmp_path)
    assert again is not None and again.brick_size == 1 << 30

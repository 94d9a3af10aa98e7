"""Emulation composed with what a host has already (pure): a block throttle, a CPU quota or memory limit on the
group its Gluster processes are in, and a NIC shaped by glmodel (a lab's link) are ceilings, shares are of them,
and the undo puts each back exactly; traffic control glmodel did not make is refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gluster_model.config.cluster import cluster_from_data
from gluster_model.hardware.disk import parse_devices, parse_existing
from gluster_model.hardware.emulation import EmulationError, Nic, Share, disk_plan, group_plan, link_plan
from gluster_model.hardware.group import Limits, parse_limits
from gluster_model.hardware.link import parse_state, shaping_argv

DEVICE = ("cgroup=v1\nbrick=/bricks/a\tmm=7:3\tfs=ext4\tsrc=/dev/loop3\ttop=7:3\tpart=0\tname=loop3\tdm=\tslaves=\t"
          "dev=/dev/loop3\thad={had}\n")


def _text(argv: list[list[str]]) -> list[str]:
    return [" ".join(a) for a in argv]


def test_a_devices_own_throttle_is_a_ceiling_and_comes_back_as_it_was() -> None:
    _, (dev,) = parse_devices(DEVICE.format(had="read_bps:52000000,write_bps:52000000,write_iops:800,"))
    assert dev.existing == {"read_bps": 52_000_000, "write_bps": 52_000_000, "write_iops": 800}
    # half of what the device does under its own throttle (fio read 51 MB/s through it), never above the throttle
    undo, do, words = disk_plan("h", "v1", [dev], {"read_bps": Share(0.5), "write_bps": 80_000_000},
                                {"7:3": {"read": 51e6, "write": 51.5e6}})
    assert "'7:3 25500000'" in " ".join(_text(do))  # read: 50% of the measured 51 MB/s
    # write: 80 MB/s asked, the device's own 52 MB/s kept; its IOPS limit stays in force
    assert "'7:3 52000000' > /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device" in " ".join(_text(do))
    assert "'7:3 800' > /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device" in " ".join(_text(do))
    assert "kept as a ceiling" in words
    # the undo writes back exactly the entries the device had (and clears the one it did not have)
    back = " ".join(_text(undo))
    for entry in ("'7:3 52000000' > /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device",
                  "'7:3 52000000' > /sys/fs/cgroup/blkio/blkio.throttle.write_bps_device",
                  "'7:3 0' > /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device",
                  "'7:3 800' > /sys/fs/cgroup/blkio/blkio.throttle.write_iops_device"):
        assert entry in back, entry
    with pytest.raises(ValueError, match="unexpected throttle entry"):
        parse_existing("read_bps:fast,", "/bricks/a")


def test_a_device_without_a_throttle_is_cleared_on_undo_as_before() -> None:
    _, (dev,) = parse_devices(DEVICE.format(had=""))
    undo, _, words = disk_plan("h", "v1", [dev], {"read_bps": 40_000_000}, {"7:3": {"read": 100e6}})
    assert all(" 0' > " in line for line in _text(undo)) and "kept" not in words


def test_limits_of_the_group_glusterd_is_in_are_read_and_nested_under() -> None:
    facts = ("cgroup=v1\nmemtotal=8000000\nnproc=4\nparent_cpu=/glmodel-lab-ab12/node2\n"
             "parent_memory=/glmodel-lab-ab12/node2\nmemory.limit_in_bytes=1073741824\n"
             "memory.limit_in_bytes=9223372036854771712\ncpu.cfs_quota_us=50000\ncpu.cfs_period_us=100000\n"
             "cpu.cfs_quota_us=-1\ncpu.cfs_period_us=100000\n")
    had = parse_limits(facts)
    assert had == Limits({"cpu": "/glmodel-lab-ab12/node2", "memory": "/glmodel-lab-ab12/node2"}, 0.5, 1 << 30)
    spec = cluster_from_data({"name": "c", "emulation": {"allow": True},
                              "servers": [{"host": "h", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    undo, do, words = group_plan(spec, "h", ("v1", 8 << 30, 4), Share(0.5), Share(0.5), had)
    # shares of the lesser of the host and its limits: half of 0.5 core, half of 1 GiB
    assert words.startswith("RAM 512MB; CPU 0.25 core(s)") and "inside the limits" in words
    text = " ".join(_text(do))
    assert "mkdir -p /sys/fs/cgroup/cpu/glmodel-lab-ab12/node2/glmodel-emu-h" in text
    assert "rmdir /sys/fs/cgroup/cpu/glmodel-lab-ab12/node2/glmodel-emu-h" in " ".join(_text(undo))
    with pytest.raises(EmulationError, match="more than the host has"):
        group_plan(spec, "h", ("v1", 8 << 30, 4), None, 1.0, had)  # a core is more than its 0.5
    with pytest.raises(ValueError, match="not a plain path"):
        parse_limits("parent_cpu=/a/../b\n")


def test_a_lab_link_is_a_ceiling_put_back_at_its_exact_rate_and_a_foreign_qdisc_is_refused() -> None:
    lab = "qdisc: qdisc htb 1: root refcnt 2 r2q 10\nqdisc: qdisc ingress ffff: parent ffff:fff1\n" \
          "alias: glmodel-link 133333333\n"
    had = parse_state(lab)
    assert had == ("glmodel", 133_333_333)
    undo, do, rate = link_plan(Nic("h", "eth0", None), Share(0.5), labelled_gbps=2.0, had=had)
    assert rate == 66_666_666  # half of the lab's link, not of the 2 Gbit/s label
    assert _text(undo)[3:] == _text(shaping_argv("eth0", 133_333_333))  # made again exactly as the lab made it
    assert _text(do)[3:] == _text(shaping_argv("eth0", 66_666_666))
    assert link_plan(Nic("h", "eth0", None), 500_000_000, had=had)[2] == 133_333_333  # never faster than it was
    assert parse_state("qdisc: qdisc noqueue 0: root refcnt 2\n") == ("none", None)
    assert parse_state("qdisc: qdisc mq 0: root\nqdisc: qdisc fq_codel 0: parent :1\n") == ("none", None)
    foreign = parse_state("qdisc: qdisc tbf 8001: root refcnt 2 rate 1Gbit burst 125000b\n")
    with pytest.raises(EmulationError, match=r"^h: its NIC eth0 has traffic control glmodel did not set "
                                             r"\(qdisc tbf 8001: root"):
        link_plan(Nic("h", "eth0", 10_000), Share(0.5), had=foreign)


def test_cgroup_v2_controllers_get_a_group_of_their_own_with_its_limits_and_back() -> None:
    """A hybrid host (memory on v1, cpu and io on the unified hierarchy): RAM in the v1 group, the CPU quota and
    the brick devices' throttle in a v2 group at the unified root with the controllers handed down; undone in
    the reverse order, the controllers glmodel handed down taken back."""
    facts = ("cgroup=none\nmemtotal=8000000\nnproc=4\nhier_cpu=v2:/sys/fs/cgroup/unified\n"
             "hier_memory=v1:/sys/fs/cgroup/memory\nhier_io=v2:/sys/fs/cgroup/unified\nv2_parent=/\n")
    had = parse_limits(facts)
    assert had.where == {"cpu": (2, "/sys/fs/cgroup/unified"), "memory": (1, "/sys/fs/cgroup/memory"),
                         "io": (2, "/sys/fs/cgroup/unified")}
    spec = cluster_from_data({"name": "c", "emulation": {"allow": True, "record_dir": "/r"},
                              "servers": [{"host": "h", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    undo, do, words = group_plan(spec, "h", ("none", 8 << 30, 4), 1 << 30, 0.5, had,
                                 {"7:3": {"read_bps": 30_000_000, "write_bps": 30_000_000}})
    text = _text(do)
    grp = "/sys/fs/cgroup/unified/glmodel-emu-h"
    assert f"mkdir -p {grp}" in text and "mkdir -p /sys/fs/cgroup/memory/glmodel-emu-h" in text
    assert f"sh -c echo '50000 100000' > {grp}/cpu.max" in text
    assert f"sh -c echo '7:3 rbps=30000000 wbps=30000000 riops=max wiops=max' > {grp}/io.max" in text
    assert not any("/sys/fs/cgroup/cpu/" in t for t in text)  # the CPU is not limited twice
    assert any("+cpu > /sys/fs/cgroup/unified/cgroup.subtree_control" in t for t in text)
    assert any("+io > /sys/fs/cgroup/unified/cgroup.subtree_control" in t for t in text)
    assert words.endswith("(cgroup v2: cpu, io)")
    back = _text(undo)
    # the v2 group goes first (its daemons back to where the origins file says), then what v1 had, then the file
    # (and the group a device's measurement joins beside it: the disk limit without the CPU quota)
    assert f"sh -c echo '7:3 rbps=30000000 wbps=30000000 riops=max wiops=max' > {grp}-dev/io.max" in text
    assert not any(f"{grp}-dev/cpu.max" in t for t in text)
    assert f"rmdir {grp};" in back[0] and f"rmdir {grp}-dev;" in back[1]
    assert "-$c > /sys/fs/cgroup/unified/cgroup.subtree_control" in back[2]
    assert back[-1] == "rm -f /r/emulation-h.origins"
    # a v2 group with limits of its own around the daemons is not nested under: refused in one line
    limited = parse_limits(facts + "cpu.max=50000 100000\n")
    with pytest.raises(EmulationError, match=r"^h: its Gluster processes are in a cgroup v2 group with limits of "
                                             r"its own \(cpu.max 50000 100000\)"):
        group_plan(spec, "h", ("none", 8 << 30, 4), None, 0.5, limited)
    # a controller neither hierarchy offers
    with pytest.raises(EmulationError, match="no `io` cgroup controller"):
        group_plan(spec, "h", ("none", 8 << 30, 4), None, None, parse_limits("hier_cpu=v1:/sys/fs/cgroup/cpu\n"),
                   {"7:3": {"read_bps": 30_000_000}})


def test_check_names_the_limits_a_host_has_in_place() -> None:
    from gluster_model.preflight import _limits_had

    sections = {"shaping": (0, "qdisc: qdisc htb 1: root refcnt 2\nalias: glmodel-link 400000000\n")}
    facts = {"ram_limit_bytes": 1 << 30, "cpu_quota_cores": 0.5,
             "bricks": {"/b": {"throttle": {"read_bps": 60_000_000, "write_bps": 60_000_000}}, "/c": {}}}
    assert _limits_had(facts, sections) == ["NIC shaped by glmodel at 400mbit", "RAM 1.0 GiB", "CPU 0.5 core(s)",
                                            "brick /b 60MB/s"]
    foreign = {"shaping": (0, "qdisc: qdisc tbf 8001: root refcnt 2 rate 1Gbit\n")}
    assert _limits_had({}, foreign) == ["NIC traffic control glmodel did not set (qdisc tbf 8001: root refcnt 2 "
                                        "rate 1Gbit)"]
    assert _limits_had({"ram_limit_bytes": None}, {"shaping": (0, "qdisc: qdisc noqueue 0: root\n")}) == []

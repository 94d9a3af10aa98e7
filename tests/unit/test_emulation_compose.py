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
    facts = ("cgroup=v1\nmemtotal=8000000\nnproc=4\nparent_cpu=/glmodel-lab-ab12/node2\ncpu_quota=50000/100000\n"
             "parent_memory=/glmodel-lab-ab12/node2\nmem_limit=1073741824\nmem_limit=9223372036854771712\n")
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

"""Brick backing commands for the lab (pure argv builders; the real thing runs in the integration tests)."""

from __future__ import annotations

import pytest

from gluster_model.hardware.settings import parse_backing
from gluster_model.lab.bricks import attach_argv, format_argv


def test_parse_backing() -> None:
    assert parse_backing(" XFS ") == "xfs" and parse_backing("none") == "dir" and parse_backing("tmpfs") == "tmpfs"
    with pytest.raises(ValueError, match="not a brick backing .*dir, ext4, xfs, tmpfs"):
        parse_backing("btrfs")


def test_loop_backing_is_sparse_direct_io_then_formatted_and_mounted() -> None:
    first = attach_argv("xfs", "/l/n1/bricks.img", "/l/n1/bricks", 1 << 30)
    assert first == [["truncate", "-s", str(1 << 30), "/l/n1/bricks.img"],
                     ["losetup", "--find", "--show", "--direct-io=on", "/l/n1/bricks.img"]]
    then = attach_argv("xfs", "/l/n1/bricks.img", "/l/n1/bricks", 1 << 30, "/dev/loop4")
    assert then == [["mkfs.xfs", "-f", "-q", "-i", "size=512", "/dev/loop4"],
                    ["mount", "-t", "xfs", "-o", "noatime", "/dev/loop4", "/l/n1/bricks"]]
    assert format_argv("ext4", "/dev/loop4")[:2] == ["mkfs.ext4", "-F"]


def test_tmpfs_and_dir() -> None:
    assert attach_argv("tmpfs", "/i", "/m", 64 << 20) == [
        ["mount", "-t", "tmpfs", "-o", f"size={64 << 20},mode=0755", "glmodel-brick", "/m"]]
    assert attach_argv("dir", "/i", "/m", 0) == []
    with pytest.raises(ValueError):
        format_argv("tmpfs", "/dev/loop0")

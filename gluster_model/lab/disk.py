"""Disk speed per lab node: block I/O throttling of the loop device that holds the node's bricks.

The kernel's block throttling limits what reaches a device, whatever the process or the page cache does above
it. On cgroup v1 the limits are entries ``MAJ:MIN RATE`` in the root blkio group's ``blkio.throttle.*_device``
files, which also hold the kernel's own writeback and read-ahead (50 MB/s set gave 51–53 MB/s for O_DIRECT,
buffered writes with fsync, and reads on an ext4 loop device). On cgroup v2 they are a line of ``io.max`` in the
node's group, which holds all its processes (v2 charges writeback to the group that dirtied the pages).

Rates are in SI units, as disks are sold and as fio and dd print them: 150MB/s is 150·10⁶ bytes per second.
The disk baseline (fio on the brick path) measures what a setting gives; the models use that, never the label.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import LabError
from ..hardware.disk import (KINDS, MAX_IOPS, MIN_RATE, parse_disk_rate, parse_iops, show_disk_rate, show_limits,
                          v1_entries, v2_line)
from . import bricks, cgroups
from .run import write_knob
from .state import LabState, NodeState

__all__ = ["KINDS", "MAX_IOPS", "MIN_RATE", "apply", "clear", "device_of", "forget", "parse_disk_rate", "parse_iops",
           "show_disk_rate", "show_limits", "v1_entries", "v2_line"]

def device_of(node: NodeState) -> str | None:
    """'MAJ:MIN' of the loop device holding the node's bricks (None: bricks on the lab dir or tmpfs)."""
    image = node.path / bricks.IMAGE
    if not image.exists():
        return None
    devices = bricks.loop_devices(str(image))
    if not devices:
        return None
    rdev = os.stat(devices[0]).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def apply(state: LabState, node: NodeState) -> None:
    """Give the node's brick device the limits recorded for it in ``state.disk`` (none: remove its entries)."""
    limits = state.disk.get(node.address, {})
    majmin = device_of(node)
    if majmin is None:
        if limits:
            raise LabError(f"{node.address}: its bricks have no block device of their own (backing "
                           f"{state.backing.get(node.address, 'dir')}); give the node an ext4 or xfs backing first "
                           f"(`glmodel lab node --node {node.index} --backing ext4`)")
        return
    where = cgroups.hierarchy("io")
    if where.version == 1:
        files = [(where.root / name, text) for name, text in v1_entries(majmin, limits)]
    else:
        group, _ = cgroups.ensure(state, node, "io")
        files = [(group / "io.max", v2_line(majmin, limits))]
    for path, _ in files:
        if limits and [str(path), majmin] not in state.throttles:
            state.throttles.append([str(path), majmin])
    state.save()  # recorded before it is written
    for path, text in files:
        write_knob(path, text)
    if not limits:
        forget(state, majmin)


def forget(state: LabState, majmin: str) -> None:
    state.throttles = [t for t in state.throttles if t[1] != majmin]
    state.save()


def clear(state: LabState, majmin: str | None = None) -> list[str]:
    """Remove the throttle entries the lab wrote (those of one device, or all); returns what failed."""
    failed = []
    for path, mm in list(state.throttles):
        if majmin is not None and mm != majmin:
            continue
        text = v2_line(mm, {}) if path.endswith("io.max") else f"{mm} 0"
        if Path(path).exists():
            try:
                write_knob(Path(path), text)
            except LabError as exc:
                failed.append(str(exc))
                continue
        state.throttles.remove([path, mm])
    state.save()
    return failed

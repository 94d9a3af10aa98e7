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
import re
from collections.abc import Mapping
from pathlib import Path

from ..errors import LabError
from . import bricks, cgroups
from .run import write_knob
from .state import LabState, NodeState

KINDS = ("read_bps", "write_bps", "read_iops", "write_iops")
_V1_FILES = {"read_bps": "blkio.throttle.read_bps_device", "write_bps": "blkio.throttle.write_bps_device",
             "read_iops": "blkio.throttle.read_iops_device", "write_iops": "blkio.throttle.write_iops_device"}
_V2_KEYS = {"read_bps": "rbps", "write_bps": "wbps", "read_iops": "riops", "write_iops": "wiops"}
_RATE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgt]i?)?b(?:/s|ps)?$", re.IGNORECASE)
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30,
          "ti": 1 << 40}
MIN_RATE = 10**6  # 1 MB/s: slower would make every trial take minutes
MAX_IOPS = 10**7


def parse_disk_rate(text: str) -> int | None:
    """'150MB/s', '1.5GB/s', '200MiB/s' -> bytes per second; 'unlimited' -> None (no throttling)."""
    t = str(text).strip().lower().replace(" ", "")
    if t in ("unlimited", "none", "off"):
        return None
    m = _RATE.match(t)
    if not m:
        raise ValueError(f"{text!r} is not a disk rate (use e.g. 40MB/s, 150MB/s, 1GB/s, or unlimited)")
    rate = int(float(m.group(1)) * _SCALE[(m.group(2) or "").lower()])
    if rate < MIN_RATE:
        raise ValueError(f"{text!r}: a disk rate is at least 1MB/s (or unlimited)")
    return rate


def parse_iops(text: str | int) -> int | None:
    """'500' -> 500 operations per second; 'unlimited' -> None."""
    t = str(text).strip().lower()
    if t in ("unlimited", "none", "off"):
        return None
    if not t.isdigit() or not 1 <= int(t) <= MAX_IOPS:
        raise ValueError(f"{text!r} is not an IOPS limit (a whole number from 1 to {MAX_IOPS}, or unlimited)")
    return int(t)


def show_disk_rate(bps: int | None) -> str:
    if bps is None:
        return "unlimited"
    for unit, scale in (("GB/s", 10**9), ("MB/s", 10**6)):
        if bps >= scale:
            return f"{bps / scale:g}{unit}"
    return f"{bps}B/s"


def show_limits(limits: Mapping[str, int]) -> str:
    """'r 120MB/s, w 60MB/s' (or 'unlimited') for status tables."""
    parts = []
    if "read_bps" in limits or "write_bps" in limits:
        r, w = limits.get("read_bps"), limits.get("write_bps")
        parts.append(show_disk_rate(r) if r == w else f"r {show_disk_rate(r)}, w {show_disk_rate(w)}")
    for kind, label in (("read_iops", "r"), ("write_iops", "w")):
        if kind in limits:
            parts.append(f"{label} {limits[kind]} IOPS")
    return ", ".join(parts) or "unlimited"


def v1_entries(majmin: str, limits: Mapping[str, int]) -> list[tuple[str, str]]:
    """(file, text) writes that give device ``majmin`` exactly ``limits`` on cgroup v1 (0 removes an entry)."""
    return [(_V1_FILES[k], f"{majmin} {limits.get(k, 0)}") for k in KINDS]


def v2_line(majmin: str, limits: Mapping[str, int]) -> str:
    """The ``io.max`` line that gives device ``majmin`` exactly ``limits`` on cgroup v2 ("max" is no limit)."""
    return majmin + "".join(f" {_V2_KEYS[k]}={limits.get(k, 'max')}" for k in KINDS)


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

"""Disk speed as the kernel's block throttling gives it: rates, throttle entries, and the device under a brick.

Pure functions shared by the lab (``lab.disk``, which writes the entries for its nodes' loop devices) and by
emulation on any cluster (``emulation``, which writes them over SSH): rates parsed and shown, cgroup v1 entries
and the v2 ``io.max`` line built, and the block device that holds a brick path found from what ``findmnt`` and
sysfs say on the host.

Which device is throttled: block throttling accepts whole devices only (the kernel refuses a partition), so a
brick on a partition throttles the disk that holds it; a brick on LVM/device-mapper or md throttles that device
itself (both are whole block devices whose I/O passes the throttle before it is split over the devices under
them). A brick on a filesystem without a block device (tmpfs, overlay, NFS, btrfs/ZFS pools report an anonymous
device) cannot be throttled, and is refused naming the brick and its filesystem.

Rates are in SI units, as disks are sold and as fio and dd print them: 150MB/s is 150·10⁶ bytes per second.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

KINDS = ("read_bps", "write_bps", "read_iops", "write_iops")
_V1_FILES = {"read_bps": "blkio.throttle.read_bps_device", "write_bps": "blkio.throttle.write_bps_device",
             "read_iops": "blkio.throttle.read_iops_device", "write_iops": "blkio.throttle.write_iops_device"}
V2_KEYS = {"read_bps": "rbps", "write_bps": "wbps", "read_iops": "riops", "write_iops": "wiops"}
_RATE = re.compile(r"^(\d+(?:\.\d+)?)\s*([kmgt]i?)?b(?:/s|ps)?$", re.IGNORECASE)
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12, "ki": 1 << 10, "mi": 1 << 20, "gi": 1 << 30,
          "ti": 1 << 40}
MIN_RATE = 10**6  # 1 MB/s: slower would make every trial take minutes
MAX_IOPS = 10**7
V1_ROOT = "/sys/fs/cgroup/blkio"  # where cgroup v1 mounts the blkio hierarchy on every distribution we know
_MAJMIN = re.compile(r"^\d{1,4}:\d{1,7}$")


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
    if not t.isdecimal() or not 1 <= int(t) <= MAX_IOPS:
        raise ValueError(f"{text!r} is not an IOPS limit (a whole number from 1 to {MAX_IOPS}, or unlimited)")
    return int(t)


def show_disk_rate(bps: int | float | None) -> str:
    if bps is None:
        return "unlimited"
    for unit, scale in (("GB/s", 10**9), ("MB/s", 10**6)):
        if bps >= scale:
            return f"{bps / scale:.4g}{unit}"
    return f"{bps:.0f}B/s"


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
    return majmin + "".join(f" {V2_KEYS[k]}={limits.get(k, 'max')}" for k in KINDS)


def v1_argv(majmin: str, limits: Mapping[str, int], root: str = V1_ROOT) -> list[list[str]]:
    """Commands that write ``v1_entries`` into the root blkio group (``limits`` empty: the entries removed)."""
    if not _MAJMIN.match(majmin):
        raise ValueError(f"{majmin!r} is not a block device number (MAJ:MIN)")
    return [["sh", "-c", f"echo {shlex.quote(text)} > {shlex.quote(root + '/' + name)}"]
            for name, text in v1_entries(majmin, limits)]


# --- the device under a brick path -------------------------------------------------------------------------------

@dataclass(frozen=True)
class BrickDevice:
    """What holds one brick path on a host, and the device block throttling would act on (``throttle``)."""

    brick: str
    majmin: str  # of the filesystem holding the brick
    fstype: str
    source: str
    throttle: str | None  # MAJ:MIN to throttle; None: no block device under this brick
    name: str  # kernel name of the throttled device (sda, dm-0, md0, loop3)
    via: str  # how it was reached: "disk", "partition of sda", "LVM/device-mapper vg-lv", "md (sdb,sdc)"
    dev: str  # /dev path of the throttled device, for reading it in a probe
    existing: Mapping[str, int] = field(default_factory=dict)  # throttle entries the device had already (v1)


def devices_script(paths: Sequence[str]) -> str:
    """Shell text printing, per brick path, the filesystem under it and the block device to throttle.

    A brick directory not made yet is looked up through its nearest existing parent (where its data will go).
    One line per path, tab-separated ``key=value`` fields; the cgroup hierarchy in use on a line of its own.
    """
    quoted = " ".join(shlex.quote(p) for p in paths)
    return (
        'u=$(awk \'$3=="cgroup2" {print $2; exit}\' /proc/self/mounts); '
        'if [ -f /sys/fs/cgroup/blkio/blkio.throttle.read_bps_device ]; then echo "cgroup=v1"; '
        'elif [ -n "$u" ] && grep -qw io "$u/cgroup.controllers" 2>/dev/null; then echo "cgroup=v2"; '
        'else echo "cgroup=none"; fi; '
        f"for b in {quoted}; do p=$b; "
        'while [ ! -e "$p" ] && [ "$p" != / ]; do p=$(dirname "$p"); done; '
        'mm=$(findmnt -n -o MAJ:MIN -T "$p" | head -n 1 | tr -d " "); '
        'fs=$(findmnt -n -o FSTYPE -T "$p" | head -n 1 | tr -d " "); '
        'src=$(findmnt -n -o SOURCE -T "$p" | head -n 1); s=/sys/dev/block/$mm; top=""; part=0; '
        'if [ -n "$mm" ] && [ -e "$s" ]; then top=$mm; '
        'if [ -e "$s/partition" ]; then part=1; top=$(cat "$s/../dev"); fi; fi; '
        't=/sys/dev/block/$top; name=""; dm=""; slaves=""; dev=""; '
        'if [ -n "$top" ]; then name=$(basename "$(readlink -f "$t")"); dm=$(cat "$t/dm/name" 2>/dev/null); '
        'slaves=$(ls "$t/slaves" 2>/dev/null | tr "\\n" "," ); '
        'dev=/dev/$(sed -n "s/^DEVNAME=//p" "$t/uevent"); fi; '
        # the throttle entries the device has already (a host's own limit, or a lab's): kept as ceilings
        'had=""; if [ -n "$top" ]; then for k in read_bps write_bps read_iops write_iops; do '
        'v=$(awk -v d="$top" \'$1==d {print $2}\' /sys/fs/cgroup/blkio/blkio.throttle.${k}_device 2>/dev/null); '
        '[ -n "$v" ] && had="$had$k:$v,"; done; fi; '
        'printf "brick=%s\\tmm=%s\\tfs=%s\\tsrc=%s\\ttop=%s\\tpart=%s\\tname=%s\\tdm=%s\\tslaves=%s\\tdev=%s\\thad=%s\\n" '
        '"$b" "$mm" "$fs" "$src" "$top" "$part" "$name" "$dm" "$slaves" "$dev" "$had"; done')


def parse_devices(text: str) -> tuple[str, list[BrickDevice]]:
    """(cgroup hierarchy "v1"/"v2"/"none", one BrickDevice per brick) from ``devices_script``'s output.

    Raises ValueError for output that is not that script's (a line without a brick, a malformed device number).
    """
    cgroup = "none"
    out = []
    for line in text.splitlines():
        if line.startswith("cgroup="):
            cgroup = line.split("=", 1)[1].strip()
            continue
        if not line.strip():
            continue
        kv = dict(f.split("=", 1) for f in line.split("\t") if "=" in f)
        if not kv.get("brick"):
            raise ValueError(f"unexpected line from the device lookup: {line[:120]!r}")
        top = kv.get("top", "").strip() or None
        mm = kv.get("mm", "").strip()
        if top is not None and not _MAJMIN.match(top):
            raise ValueError(f"{kv['brick']}: {top!r} is not a block device number")
        name = kv.get("name", "").strip()
        slaves = [s for s in kv.get("slaves", "").split(",") if s]
        if kv.get("part") == "1":
            via = f"partition of {name}"
        elif kv.get("dm"):
            via = f"LVM/device-mapper {kv['dm']}" + (f" on {','.join(slaves)}" if slaves else "")
        elif name.startswith("md"):
            via = "md" + (f" on {','.join(slaves)}" if slaves else "")
        else:
            via = "disk"
        out.append(BrickDevice(kv["brick"], mm, kv.get("fs", ""), kv.get("src", ""), top, name, via,
                               kv.get("dev", ""), parse_existing(kv.get("had", ""), kv["brick"])))
    return cgroup, out


def parse_existing(text: str, brick: str) -> dict[str, int]:
    """``read_bps:52428800,write_iops:500,`` -> {kind: value}; a kind or value that is not one refused."""
    out: dict[str, int] = {}
    for part in filter(None, text.strip().split(",")):
        kind, _, value = part.partition(":")
        if kind not in KINDS or not value.isdecimal():
            raise ValueError(f"{brick}: unexpected throttle entry {part[:60]!r}")
        if int(value) > 0:
            out[kind] = int(value)
    return out


def unthrottlable(devices: Sequence[BrickDevice]) -> BrickDevice | None:
    """The first brick with no block device under it (tmpfs, overlay, NFS, a pool's anonymous device)."""
    return next((d for d in devices if d.throttle is None), None)


def targets(devices: Sequence[BrickDevice]) -> dict[str, BrickDevice]:
    """MAJ:MIN -> the first brick on it: one throttle per device, however many bricks share it."""
    out: dict[str, BrickDevice] = {}
    for d in devices:
        if d.throttle is not None:
            out.setdefault(d.throttle, d)
    return out


# --- what the host's disks do without a throttle -------------------------------------------------------------------

def probe_script(dev: str, brick: str, size_mb: int = 128) -> str:
    """Shell text that reads ``size_mb`` MiB from the raw device ``dev`` and writes as much into the brick path's
    filesystem, both with O_DIRECT, and prints dd's summary lines ("read: ..." and "write: ...")."""
    d, b = shlex.quote(dev), shlex.quote(brick)
    return (f"p={b}; " + 'while [ ! -e "$p" ] && [ "$p" != / ]; do p=$(dirname "$p"); done; '
            f"f=\"$p/.glmodel-probe-$$\"; "
            f"r=$(dd if={d} of=/dev/null bs=1M count={size_mb} iflag=direct 2>&1 | tail -n 1); "
            f"w=$(dd if=/dev/zero of=\"$f\" bs=1M count={size_mb} oflag=direct conv=fsync 2>&1 | tail -n 1); "
            'rm -f "$f"; echo "read: $r"; echo "write: $w"')


_DD = re.compile(r"^(\d+) bytes .* copied, ([\d.,]+) s")


def parse_probe(text: str) -> dict[str, float]:
    """{"read": bytes/s, "write": bytes/s} from ``probe_script`` (a direction dd could not do is left out)."""
    out: dict[str, float] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(": ")
        m = _DD.match(rest.strip())
        if key in ("read", "write") and m:
            seconds = float(m.group(2).replace(",", "."))
            if seconds > 0:
                out[key] = int(m.group(1)) / seconds
    return out

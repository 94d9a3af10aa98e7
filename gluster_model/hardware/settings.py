"""Hardware settings as text, one parser for all: the CLI's `lab` options, plan factors, what-if `lab:` entries
and emulated settings on a cluster read a link rate, a disk rate, RAM, CPU or a brick backing here.

======================  ==============================================
name                    value
======================  ==============================================
link                    bit/s: 100mbit, 1gbit, unlimited
backing                 dir, ext4, xfs, tmpfs
disk_read, disk_write   bytes/s: 40MB/s, 150MB/s, unlimited
disk_read_iops, ..      operations/s: 500, unlimited
ram                     bytes: 512MB, 2GB, unlimited
cpu                     cores: 0.25, 1, unlimited
======================  ==============================================

RAM and CPU are bounded by what the machine that gets them has: this machine for a lab node
(``on_this_machine``), each host's own on a cluster (checked there by ``emulation``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, get_args

from ..units import gluster_size, parse_size
from .disk import parse_disk_rate, parse_iops, show_disk_rate
from .link import parse_rate, show_rate

Backing = Literal["dir", "ext4", "xfs", "tmpfs"]
BACKINGS: tuple[str, ...] = get_args(Backing)
MIN_RAM = 256 << 20  # below this a node's glusterfsd, FUSE client and sshd themselves do not fit
MIN_CPU = 0.05  # below this a node's glusterd misses its own time-outs


def parse_backing(text: str) -> Backing:
    """'xfs', 'EXT4', 'tmpfs', 'dir' (or 'none') -> the backing; anything else is refused with what is allowed."""
    t = str(text).strip().lower()
    if t == "none":
        t = "dir"
    if t not in BACKINGS:
        raise ValueError(f"{text!r} is not a brick backing (use {', '.join(BACKINGS)})")
    return t  # type: ignore[return-value]


def machine_ram() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0


def parse_ram(text: str, total: int | None = None) -> int | None:
    """'2GB', '512MB' (binary units, as RAM is sold) -> bytes; 'unlimited' -> None. At most the machine's RAM."""
    t = str(text).strip()
    if t.lower() in ("unlimited", "none", "off"):
        return None
    try:
        n = parse_size(t)
    except ValueError:
        raise ValueError(f"{text!r} is not an amount of RAM (use e.g. 512MB, 2GB, or unlimited)") from None
    if n < MIN_RAM:
        raise ValueError(f"{text!r}: a node needs at least {gluster_size(MIN_RAM)} of RAM (or unlimited)")
    total = machine_ram() if total is None else total
    if total and n > total:
        raise ValueError(f"{text!r} is more than this machine's {total / 2**30:.1f} GiB of RAM")
    return n


def show_ram(n: int | None) -> str:
    return "unlimited" if n is None else gluster_size(n) if n % (1 << 20) == 0 else f"{n}B"


def parse_cpu(text: str | float, cpus: int | None = None) -> float | None:
    """'0.5' -> half a core, '2' -> two cores; 'unlimited' -> None. At most the machine's CPU count."""
    t = str(text).strip().lower()
    if t in ("unlimited", "none", "off"):
        return None
    try:
        cores = float(t)
    except ValueError:
        raise ValueError(f"{text!r} is not a CPU share (cores as a number, e.g. 0.25, 0.5, 1, or unlimited)") from None
    cpus = (os.cpu_count() or 1) if cpus is None else cpus
    if not cores == cores or cores < MIN_CPU:  # NaN, too small, or negative
        raise ValueError(f"{text!r}: a node gets at least {MIN_CPU} of a core (or unlimited)")
    if cores > cpus:
        raise ValueError(f"{text!r} is more than this machine's {cpus} CPU(s)")
    return round(cores, 3)


def show_cpu(cores: float | None) -> str:
    return "unlimited" if cores is None else f"{cores:g}"


# name -> (parser of its text, shower of its value); "unlimited" parses to None everywhere but backing.
KNOBS: dict[str, tuple[Callable[[str], Any], Callable[[Any], str]]] = {
    "link": (parse_rate, show_rate),
    "backing": (parse_backing, str),
    "disk_read": (parse_disk_rate, show_disk_rate),
    "disk_write": (parse_disk_rate, show_disk_rate),
    "disk_read_iops": (parse_iops, lambda v: "unlimited" if v is None else str(v)),
    "disk_write_iops": (parse_iops, lambda v: "unlimited" if v is None else str(v)),
    "ram": (parse_ram, show_ram),
    "cpu": (parse_cpu, show_cpu),
}
# Shorthands that set a read and a write knob to one value.
PAIRS = {"disk": ("disk_read", "disk_write"), "disk_iops": ("disk_read_iops", "disk_write_iops")}


def parse_setting(name: str, text: str, *, on_this_machine: bool = True) -> dict[str, Any]:
    """One setting's text -> {knob: value}; ValueError saying what is allowed (a shorthand sets two knobs).
    Without ``on_this_machine`` RAM and CPU are not bounded by this machine's (a cluster host checks its own)."""
    targets = PAIRS.get(name, (name,))
    if targets[0] not in KNOBS:
        raise ValueError(f"{name!r} is not a lab setting (use {', '.join([*KNOBS, *PAIRS])})")
    if on_this_machine or targets[0] not in ("ram", "cpu"):
        value = KNOBS[targets[0]][0](text)
    else:
        value = parse_ram(text, total=0) if targets[0] == "ram" else parse_cpu(text, cpus=1 << 20)
    return {t: value for t in targets}


def canonical(name: str, text: str) -> str:
    """A setting's text in its one canonical form ('1 Gbit' -> '1gbit', '150 MB/s' -> '150MB/s')."""
    knob = PAIRS.get(name, (name,))[0]
    return str(KNOBS[knob][1](parse_setting(name, text)[knob]))


def campaign_setting(campaign: str) -> dict[str, str]:
    """The hardware setting a campaign was measured at, from its name (``campaign.records.setting_campaign``
    writes it; a cluster's name holds no ':'): 'hw@lab:link=1gbit,disk=60MB/s' -> {'link': '1gbit', 'disk':
    '60MB/s'}; {} for a campaign at the cluster's own hardware."""
    _, _, where = str(campaign).partition("@")
    _, colon, tail = where.partition(":")
    if not colon:
        return {}
    return {k: v for k, _, v in (part.partition("=") for part in tail.split(",") if part)}

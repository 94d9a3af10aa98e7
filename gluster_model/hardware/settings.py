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

The knobs set by commands on a host (``hardware/knobs/``: latency, a delay per packet received such as 250us,
1ms or none; mtu) bring their own parsers.

RAM and CPU are bounded by what the machine that gets them has: this machine for a lab node
(``on_this_machine``), each host's own on a cluster (checked there by ``emulation``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from ..units import gluster_size, parse_size
from .disk import parse_disk_rate, parse_iops, show_disk_rate
from .knob import Knob as Knob
from .knob import KnobValue as KnobValue
from .knob import KnobValues as KnobValues
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


_DISK = ("disk_read_mbps", "disk_write_mbps", "disk_randread_iops", "disk_randwrite_iops")


def _show_iops(v: int | None) -> str:
    return "unlimited" if v is None else str(v)


def _plugged() -> tuple[Knob, ...]:
    """Every ``KNOB`` of the modules in ``hardware/knobs/``, in name order."""
    import importlib
    import pkgutil

    from . import knobs

    found = []
    for info in sorted(pkgutil.iter_modules(knobs.__path__), key=lambda m: m.name):
        knob = getattr(importlib.import_module(f"{knobs.__name__}.{info.name}"), "KNOB", None)
        if not isinstance(knob, Knob) or knob.step is None:
            raise ImportError(f"hardware/knobs/{info.name}.py defines no KNOB set by commands (a Knob with a step)")
        found.append(knob)
    return tuple(found)


# In the order the CLI lists them.
KNOB_LIST: tuple[Knob, ...] = (
    Knob("link", "Link rate, shaped with tc: 100mbit, 1gbit, 10gbit, unlimited.", parse_rate, show_rate,
         moves=("network_gbps",), emulated=True, baselines=("network",)),
    Knob("backing", "Brick backing: dir (the lab directory), ext4 or xfs (a loop device), tmpfs.", parse_backing, str,
         moves=_DISK, factor="brick_backing", baselines=("disk",)),
    Knob("disk", "Disk read and write rate of the brick device (block throttling): 40MB/s, 150MB/s, unlimited. "
         "Gives dir-backed nodes an ext4 loop device.", sets=("disk_read", "disk_write"), moves=_DISK, emulated=True,
         baselines=("disk",)),
    Knob("disk_read", "Disk read rate only, e.g. 120MB/s.", parse_disk_rate, show_disk_rate,
         moves=("disk_read_mbps",), emulated=True, limit="read_bps", baselines=("disk",)),
    Knob("disk_write", "Disk write rate only, e.g. 60MB/s.", parse_disk_rate, show_disk_rate,
         moves=("disk_write_mbps",), emulated=True, limit="write_bps", baselines=("disk",)),
    Knob("disk_iops", "Disk read and write IOPS limit, e.g. 500, or unlimited.",
         sets=("disk_read_iops", "disk_write_iops"), moves=_DISK, emulated=True, baselines=("disk",)),
    Knob("disk_read_iops", "Disk read IOPS limit.", parse_iops, _show_iops, moves=_DISK, option=False,
         limit="read_iops", baselines=("disk",)),
    Knob("disk_write_iops", "Disk write IOPS limit.", parse_iops, _show_iops, moves=_DISK, option=False,
         limit="write_iops", baselines=("disk",)),
    Knob("ram", "RAM of the node's processes and page cache (a memory cgroup): 512MB, 2GB, unlimited.",
         parse_ram, show_ram, moves=("client_ram_gb",), emulated=True,
         baselines=("disk",)),  # fio falls back to buffered I/O where O_DIRECT is refused: the page cache counts
    Knob("cpu", "CPU cores of the node's processes (a CPU quota): 0.25, 0.5, 1, unlimited.", parse_cpu, show_cpu,
         moves=("cpu_score",), emulated=True),
    *_plugged(),  # the knobs set by commands on a host, one module each (hardware/knobs/)
)
# The knobs set by commands on a host, by name (lab/hardware.py and emulation run their steps).
STEPPED: dict[str, Knob] = {k.name: k for k in KNOB_LIST if k.step is not None}
# name -> (parser of its text, shower of its value), for the knobs that hold a value.
KNOBS: dict[str, tuple[Callable[[str], KnobValue], Callable[[Any], str]]] = {
    k.name: (k.parse, k.show) for k in KNOB_LIST if k.parse is not None and k.show is not None}
# The disk knobs: knob -> the block-throttle limit it sets (one map for the lab's nodes and emulated hosts).
DISK_LIMITS: dict[str, str] = {k.name: k.limit for k in KNOB_LIST if k.limit is not None}
# The measured inputs the knobs move, each a model input a cluster has rather than is given (``moves``), in the
# order the models list them; the brick filesystem is measured too, a category.
MEASURED_INPUTS: tuple[str, ...] = ("network_gbps", "network_rtt_ms", *_DISK, "client_ram_gb", "cpu_score")
assert set(MEASURED_INPUTS) == {m for k in KNOB_LIST for m in k.moves}, "a knob moves an input not listed"
# Shorthands that set a read and a write knob to one value.
PAIRS = {k.name: k.sets for k in KNOB_LIST if k.sets}
# The knobs a plan and the CLI name (shorthands included; not the ones reached through a shorthand only).
OPTIONS: tuple[Knob, ...] = tuple(k for k in KNOB_LIST if k.option)
# The plan factors a cluster that allows it can emulate on its hosts.
EMULATED: tuple[str, ...] = tuple(k.factor_name for k in OPTIONS if k.emulated)
# The plan factors that cannot be a share of a host's own hardware.
NO_SHARES: frozenset[str] = frozenset(k.factor_name for k in OPTIONS if not k.shares)


def baselines_moved_by(name: str) -> tuple[str, ...]:
    """The baselines a setting of knob or plan factor ``name`` can move (``Knob.baselines``); both for a name no
    knob has (nothing is kept on a guess)."""
    knob = next((k for k in KNOB_LIST if name in (k.name, k.factor)), None)
    return knob.baselines if knob is not None else ("network", "disk")


def knob_of(factor: str) -> str:
    """The knob a plan factor sets: 'brick_backing' -> 'backing'; a knob's own name otherwise."""
    return next((k.name for k in KNOB_LIST if k.factor == factor), factor)


def moved_by(measured: str) -> tuple[str, ...]:
    """Every name (knob and plan factor) of the settings that move a measured input: 'network_gbps' ->
    ('link',)."""
    names: list[str] = []
    for k in KNOB_LIST:
        if measured in k.moves:
            names += [k.name, *([k.factor] if k.factor else [])]
    return tuple(names)


def parse_setting(name: str, text: str, *, on_this_machine: bool = True) -> KnobValues:
    """One setting's text -> {knob: value}; ValueError saying what is allowed (a shorthand sets two knobs).
    Without ``on_this_machine`` RAM and CPU are not bounded by this machine's (a cluster host checks its own)."""
    targets = PAIRS.get(name, (name,))
    if targets[0] not in KNOBS:
        raise ValueError(f"{name!r} is not a lab setting (use {', '.join([*KNOBS, *PAIRS])})")
    if on_this_machine or targets[0] not in ("ram", "cpu"):
        value: KnobValue = KNOBS[targets[0]][0](text)
    else:
        value = parse_ram(text, total=0) if targets[0] == "ram" else parse_cpu(text, cpus=1 << 20)
    return {t: value for t in targets}


def canonical(name: str, text: str) -> str:
    """A setting's text in its one canonical form ('1 Gbit' -> '1gbit', '150 MB/s' -> '150MB/s')."""
    knob = PAIRS.get(name, (name,))[0]
    return str(KNOBS[knob][1](parse_setting(name, text)[knob]))

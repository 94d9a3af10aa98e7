"""Each lab node as a small machine: its link, brick backing, disk speed, RAM and CPU as settings.

``set_hardware`` is the one way to change them (``lab up``, ``lab node`` and plans with lab factors all use it):
it checks every value first, then applies each kind through its own module, in an order that works (a disk
limit needs the node's brick device, so the backing comes first). Each module records what it adds in the
lab's state before adding it; ``remove_all`` takes the throttles and groups away again.

Settings, with their text forms (the same in the CLI, plans and ``lab status``):

======================  ==============================================  ================
name                    value                                           module
======================  ==============================================  ================
link                    bit/s: 100mbit, 1gbit, unlimited                links (tc on the NIC)
backing                 dir, ext4, xfs, tmpfs                           bricks (loop)
disk_read, disk_write   bytes/s: 40MB/s, 150MB/s, unlimited             disk (blkio/io)
disk_read_iops, ..      operations/s: 500, unlimited                    disk
ram                     bytes: 512MB, 2GB, unlimited                    ram (memory)
cpu                     cores: 0.25, 1, unlimited                       cpu (cpu quota)
latency, mtu, ..        as each knob of ``hardware/knobs/`` reads it    its own commands
======================  ==============================================  ================

A knob of ``hardware/knobs/`` (set by commands on a host: ``hardware.knob.HostStep``) is set on a node by the
very commands that set it on a cluster's host, run in the node's namespace (``set_stepped``).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import LabError
from ..hardware.knob import whole
from ..hardware.link import parse_rate, show_rate
from ..hardware.settings import (DISK_LIMITS, KNOBS, PAIRS, STEPPED, KnobValue, KnobValues, parse_backing,
                                 parse_setting, show_cpu, show_ram)
from . import bricks, cgroups, cpu, disk, links, ram
from .clusterfile import write_cluster_file
from .netns import NIC, in_netns
from .run import Progress, quiet
from .state import LabState
from .state import find_node, load_lab



def set_hardware(state: LabState, addresses: Sequence[str], settings: Mapping[str, KnobValue],
                 brick_size: int | None = None, progress: Progress = quiet) -> None:
    """Give the nodes at ``addresses`` the parsed ``settings`` (knob -> value; None is unlimited).

    A disk limit on a node whose bricks sit on the lab directory gives that node an ext4 loop device first,
    since only a block device of its own can be throttled.
    """
    state.check_known(list(addresses))
    unknown = sorted(set(settings) - set(KNOBS))
    if unknown:
        raise LabError(f"unknown lab setting(s) {', '.join(unknown)} (use {', '.join(KNOBS)})")
    backing = settings.get("backing")
    wants_disk = any(settings.get(k) is not None for k in DISK_LIMITS)
    if backing is None and wants_disk:
        plain = [a for a in addresses if state.backing.get(a, "dir") in ("dir", "tmpfs")]
        if plain:
            progress("disk limits need a block device: backing those nodes' bricks with ext4")
            set_backing(state, {a: "ext4" for a in plain}, brick_size)
    elif backing is not None or brick_size is not None:
        set_backing(state, {a: str(backing or state.backing.get(a, "dir")) for a in addresses}, brick_size)
    if "link" in settings:
        set_links(state, {a: _whole(settings, "link") for a in addresses})
    disk_knobs = {k: v for k, v in settings.items() if k in DISK_LIMITS}
    if disk_knobs:
        for a in addresses:
            limits = dict(state.disk.get(a, {}))
            for knob, value in disk_knobs.items():
                if value is None:
                    limits.pop(DISK_LIMITS[knob], None)
                else:
                    limits[DISK_LIMITS[knob]] = int(value)
            if limits:
                state.disk[a] = limits
            else:
                state.disk.pop(a, None)
            disk.apply(state, state.node(a))
    for knob in STEPPED:
        if knob in settings:
            set_stepped(state, knob, {a: settings[knob] for a in addresses})
    for knob, table, module in (("ram", state.ram, ram), ("cpu", state.cpu, cpu)):
        if knob in settings:
            apply = module.apply  # called within this iteration: no late binding
            _per_node(state, table, {a: settings[knob] for a in addresses}, lambda a, _: apply(state, state.node(a)))
    state.save()
    if state.status == "up":
        write_cluster_file(state)


def _whole(settings: Mapping[str, KnobValue], knob: str) -> int | None:
    """A knob's value that is a whole number (bit/s, µs) or None (``hardware.knob.whole``)."""
    try:
        return whole(knob, settings[knob])
    except ValueError as exc:
        raise LabError(f"lab setting {exc}") from None


def _per_node(state: LabState, table: dict[str, Any], values: Mapping[str, Any],
              install: Callable[[str, Any], None]) -> None:
    """Record each node's value in the state's ``table`` (None: none), saved before ``install`` applies it, so
    lab down undoes what a crash in between left."""
    state.check_known(values)
    for address, value in values.items():
        if value is None:
            table.pop(address, None)
        else:
            table[address] = value
        state.save()
        install(address, value)


def set_links(state: LabState, rates: Mapping[str, int | None]) -> None:
    """Give nodes a link rate (bit/s; None: unlimited), shaping each node's NIC with tc (see links)."""
    # A namespace's qdiscs and IFB device go with it, so lab down needs no record of them.
    _per_node(state, state.links, rates, lambda a, rate: links.install(state.node(a).netns, rate))
    if state.status == "up":
        write_cluster_file(state)  # its network label follows the shaping (the models use measured speeds)


def set_stepped(state: LabState, knob: str, values: Mapping[str, KnobValue]) -> None:
    """Give nodes a knob set by commands (``hardware.knob.HostStep``), run in each node's namespace on its NIC
    with its files in the node's directory (a process it starts runs in the namespace: lab down ends it); None
    puts back what the node had, read before the first change and recorded with the value."""
    step = STEPPED[knob].step
    assert step is not None
    state.check_known(values)
    table = state.stepped.setdefault(knob, {})
    for address, value in values.items():
        node = state.node(address)
        entry = table.get(address)
        files = f"{node.path}/"
        try:
            if value is None:
                if entry is None:
                    continue  # never changed here: nothing to put back
                commands = step.restore(str(entry["was"]), NIC, files)
                del table[address]
            else:
                if entry is None:
                    was = _in_node(node.netns, ["sh", "-c", step.read(NIC)]).strip()
                    step.restore(was, NIC, files)  # refuses what it could not put back, before any change
                else:
                    was = entry["was"]
                commands = step.apply(value, NIC, files)
                table[address] = {"value": value, "was": was}
        except ValueError as exc:
            raise LabError(f"{address}: {knob}: {exc}") from None
        state.save()  # recorded before it is changed
        for argv in commands:
            _in_node(node.netns, argv)
    if not table:
        state.stepped.pop(knob, None)
        state.save()


def _in_node(netns: str, argv: list[str]) -> str:
    """Run a command in a node's network namespace; its output, or a LabError with its message."""
    done = subprocess.run(in_netns(netns, argv), capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise LabError(f"{netns}: {' '.join(argv)} failed: {(done.stderr or done.stdout).strip()[:200]}")
    return done.stdout


def set_backing(state: LabState, kinds: Mapping[str, str], size: int | None = None) -> list[str]:
    """Give nodes a brick backing (dir, ext4, xfs, tmpfs; see bricks); returns the nodes that changed.

    A node whose bricks directory holds anything (a volume's bricks) is refused: its data would be lost. A
    node's disk limits follow it onto its new device.
    """
    state.check_known(kinds)
    size = size or state.brick_size
    wanted = {a: parse_backing(k) for a, k in kinds.items()}
    changed = [a for a, k in wanted.items()
               if state.backing.get(a, "dir") != k or (k != "dir" and size != state.brick_size)]
    for address in changed:
        bricks_dir = Path(state.node(address).bricks)
        used = [p.name for p in bricks_dir.iterdir() if p.name != "lost+found"] if bricks_dir.is_dir() else []
        if used:
            raise LabError(f"{address}: its bricks directory {bricks_dir} is in use ({', '.join(sorted(used)[:3])}); "
                           f"delete the volumes on it first (glmodel volume teardown)")
        if state.disk.get(address) and wanted[address] in ("dir", "tmpfs"):
            raise LabError(f"{address} has disk limits, which need a block device; remove them first "
                           f"(`--disk unlimited`) or choose ext4 or xfs")
    if size != state.brick_size:
        state.brick_size = size
        state.save()  # a later backing's size, whether or not a node changes now
    for address in changed:
        n = state.node(address)
        old = disk.device_of(n)
        if old is not None:
            disk.clear(state, old)  # before the device is let go: a loop device outlives its image
        bricks.detach(n.path, Path(n.bricks))
        state.backing.pop(address, None)
        if wanted[address] != "dir":
            state.backing[address] = wanted[address]
        state.save()  # recorded before it is mounted, so lab down undoes it even after a crash
        bricks.attach(wanted[address], n.path, Path(n.bricks), size)
        if state.disk.get(address):
            disk.apply(state, n)
    if changed and state.status == "up":
        write_cluster_file(state)
    return changed


def node_settings(state: LabState, address: str) -> dict[str, str]:
    """One node's settings as text, for ``lab status`` and ``lab node``."""
    return {"link": show_rate(state.links.get(address)),
            "bricks": state.backing.get(address, "dir"),
            "disk": disk.show_limits(state.disk.get(address, {})),
            "ram": show_ram(state.ram.get(address)),
            "cpu": show_cpu(state.cpu.get(address)),
            **{k: str(knob.show(_stepped_value(state, k, address)) if knob.show else "")
               for k, knob in STEPPED.items()}}


def _stepped_value(state: LabState, knob: str, address: str) -> KnobValue:
    entry = state.stepped.get(knob, {}).get(address)
    value: KnobValue = entry["value"] if entry else None
    return value


def snapshot(state: LabState) -> dict[str, KnobValues]:
    """Every node's settings as parsed values, to put the lab back with ``restore`` after a plan changed it."""
    return {n.address: {"link": state.links.get(n.address), "backing": state.backing.get(n.address, "dir"),
                        **{k: state.disk.get(n.address, {}).get(key) for k, key in DISK_LIMITS.items()},
                        "ram": state.ram.get(n.address), "cpu": state.cpu.get(n.address),
                        **{k: _stepped_value(state, k, n.address) for k in STEPPED}}
            for n in state.nodes}


def restore(state: LabState, snap: Mapping[str, Mapping[str, KnobValue]], progress: Progress = quiet) -> None:
    """Give every node the settings of a ``snapshot`` again (nodes with equal settings in one call)."""
    groups: dict[str, list[str]] = {}
    for address, settings in snap.items():
        groups.setdefault(repr(sorted(settings.items())), []).append(address)
    for addresses in groups.values():
        settings = dict(snap[addresses[0]])
        # Limits go first so a backing without a block device is never asked to keep a disk limit.
        set_hardware(state, addresses, {k: v for k, v in settings.items() if k != "backing"}, progress=progress)
        set_hardware(state, addresses, {"backing": settings["backing"]}, progress=progress)


def remove_all(state: LabState) -> list[str]:
    """Remove every throttle entry and cgroup the lab recorded; returns what could not be removed."""
    failed = disk.clear(state)
    left = cgroups.remove(state.cgroups)
    state.cgroups = [p for p in state.cgroups if any(x.startswith(p + " ") for x in left)]
    state.save()
    return failed + [f"cgroup {x}" for x in left]


def set_nodes(lab_dir: Path, nodes: Sequence[str], settings: Mapping[str, KnobValue], *,
              brick_size: int | None = None,
              progress: Callable[[str], None] = lambda m: None) -> list[tuple[str, dict[str, str]]]:
    """Give the nodes named (address, index or nodeN; every node when none is) the settings, then read back every
    node's settings as (address, {knob: shown value})."""
    state = load_lab(lab_dir)
    targets = [find_node(lab_dir, n)[1].address for n in nodes] if nodes else [n.address for n in state.nodes]
    if settings or brick_size is not None:
        set_hardware(state, targets, settings, brick_size=brick_size, progress=progress)
    return [(n.address, node_settings(state, n.address)) for n in state.nodes]

"""Slower hardware on any cluster, opt-in and always undone: the storage NIC shaped, the brick disks throttled.

A cluster file's ``emulation: {allow: true}`` lets a plan's hardware factors run on a real cluster, as on the lab:

- ``link``: every host's NIC that holds its cluster address gets the rate both ways (``link``'s commands, the
  ones the lab runs in its nodes);
- ``disk``, ``disk_read``, ``disk_write``, ``disk_iops``: every server's block device under each brick path is
  throttled (``disk``'s entries, the ones the lab writes for its loop devices; the device found through
  partitions, LVM/device-mapper and md);
- ``ram``, ``cpu``: every host gets a group with that memory limit and CPU quota holding its Gluster processes
  and everything glmodel runs there afterwards (``group``);
- the knobs set by commands on a host (``hardware/knobs/``): ``latency`` (every packet arriving on the host's
  cluster NIC held that long by the standard-library ``delayer``, its source written beside the record; needs
  iptables and python3), ``mtu``: the same commands the lab runs in its nodes, what the host had put back.

Each cgroup controller where the host has it: a v1 hierarchy, else the unified (v2) one (``group``: on v2 the
disks' throttle is the group's ``io.max``, made with its RAM and CPU limits). What a host has already (a block
throttle, the limits of its daemons' group, a NIC shaped by glmodel) stays a ceiling and is put back exactly;
traffic control or a packet queue glmodel did not make is refused in one line.

Only slower: a rate above a NIC's reported speed, or above what a brick's device measured just before (a short
O_DIRECT read of the device and write into the brick's filesystem), is refused naming the host and its figure;
so is a brick with no block device under it (tmpfs, NFS, a pool's anonymous device), naming the brick.

Always undone. Before changing anything, a host records on itself, in ``<record_dir>/emulation-<address>.undo``,
the commands that undo the change; the campaign runs them at its end, on failure and on Ctrl-C; ``glmodel
restore`` runs whatever is recorded (idempotent), and ``glmodel check`` reports a record still there. The record
lives on the host, not only in the store, so a campaign killed with -9, or a store on another machine, cannot
leave a host slowed without a trace there.

Scripts are built by pure functions (every value quoted); ``apply_hardware`` and ``restore`` are the only places
that run them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..config.cluster import ClusterSpec, Host
from ..errors import ConfigError, GlmodelError, RemoteError
from .group import (Limits, apply_argv, cpu_files, facts_script, memory_file, parse_facts, parse_limits, undo_argv,
                    v2_apply_argv, v2_undo_argv)
from .nic import nic_script, parse_nic
from ..remote.executor import Executor, shell
from .link import parse_state, removal_argv, shaping_argv, show_rate, state_script
from .disk import (BrickDevice, devices_script, parse_devices, parse_probe, probe_script, show_disk_rate,
                         show_limits, targets, unthrottlable, v1_argv, v2_line)
from ..units import gluster_size
from .settings import EMULATED as EMULATED  # the plan factors a cluster can emulate
from .knob import whole
from .knobs.latency import status_words
from .settings import DISK_LIMITS, STEPPED, KnobValue

DISK_KNOBS = DISK_LIMITS  # knob -> its block-throttle limit (``settings.KNOB_LIST``)
_SHARE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")


@dataclass(frozen=True)
class Share:
    """A setting as a share of what the host has: 0.5 is half its NIC's speed, half what its brick device
    measured just before, half its RAM or half its CPUs ("50%" in a plan)."""

    fraction: float

    def __str__(self) -> str:
        return f"{self.fraction * 100:g}%"


def parse_share(text: str) -> Share | None:
    """'50%' -> Share(0.5); '100%' -> None (the host as it is). ValueError for anything but a share from 1% to
    100% (``is_share`` tells a share's text from a setting's)."""
    m = _SHARE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a share (use e.g. 25%, 50%)")
    f = float(m.group(1)) / 100
    if not 0.01 <= f <= 1:
        raise ValueError(f"{text!r}: a share of the host's hardware is from 1% to 100% (emulation only slows down)")
    return None if f == 1 else Share(round(f, 4))


def is_share(text: object) -> bool:
    return isinstance(text, str) and bool(_SHARE.match(text))


_NIC = re.compile(r"^[A-Za-z0-9_.-]{1,15}$")  # a Linux interface name (IFNAMSIZ), nothing a shell would read


class EmulationError(GlmodelError):
    """Emulated hardware could not be set or undone on a host."""


def record_path(cluster: ClusterSpec, host: Host) -> str:
    """Where ``host`` records how to undo what glmodel changed on it (one file per address: lab nodes share a disk)."""
    return cluster.emulation_file(host.address, "undo")


def apply_script(record: str, undo: list[list[str]], do: list[list[str]]) -> str:
    """Shell text that appends the ``undo`` commands to the record first, then runs ``do``, stopping at a failure.

    The record's directory and file are root's alone (umask 077): ``restore`` executes what it holds.
    """
    directory = record.rsplit("/", 1)[0] or "/"
    lines = " ".join(shlex.quote(shlex.join(argv)) for argv in undo)
    steps = " && ".join(shlex.join(argv) for argv in do)
    return (f"umask 077 && mkdir -p {shlex.quote(directory)} && printf '%s\\n' {lines} >> {shlex.quote(record)}"
            + (f" && {steps}" if steps else ""))


def restore_script(record: str) -> str:
    """Shell text that runs every recorded undo command (each may find its change already gone), removes the
    record, and prints how many it ran ("restored N") or "none"."""
    r = shlex.quote(record)
    return (f'if [ -f {r} ]; then n=$(wc -l < {r}); sh {r} >/dev/null 2>&1; rm -f {r}; echo "restored $n"; '
            f"else echo none; fi")


DELAYER_LINE = "# delayer: "  # before a running delayer's status in what ``status_script`` prints


def knob_files(cluster: ClusterSpec, address: str) -> str:
    """The prefix of the files a knob set by commands keeps on a host (the delayer's source, pid and status),
    beside the host's record."""
    return cluster.emulation_file(address, "")


def status_script(record: str, delayer_status: str | None = None) -> str:
    """Shell text that prints the recorded undo commands, one a line (nothing: nothing emulated on the host),
    and, where ``delayer_status`` (the latency knob's status file) exists, one ``DELAYER_LINE`` with it."""
    r = shlex.quote(record)
    text = f"if [ -f {r} ]; then cat {r}; fi"
    if delayer_status is not None:
        d = shlex.quote(delayer_status)
        text += f"; if [ -f {d} ]; then printf '\\n%s%s\\n' {shlex.quote(DELAYER_LINE)} \"$(cat {d})\"; fi"
    return text


_GROUP = re.compile(r"rmdir \S*/(glmodel-emu-[A-Za-z0-9-]+)")
_DELAYED = re.compile(r"iptables -D INPUT -i (\S+) -j NFQUEUE ")  # an undo line taking a delay's rule away
_THROTTLED = re.compile(r"(\d+:\d+) 0\b.*blkio\.throttle")  # an undo line: the device's entry set to 0


def describe_record(text: str) -> tuple[int, str]:
    """(how many undo commands, what they put back in words) from a host's record (pure): "link shaping on eth0;
    packet delay on eth0 (held 1ms, 53 us late a packet on average over 100,362); disk throttle on 7:3; RAM/CPU
    group glmodel-emu-10-0-0-2" (the delayer's figures where ``status_script`` printed its status)."""
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith(DELAYER_LINE)]
    held = [w for ln in text.splitlines()
            if ln.startswith(DELAYER_LINE) and (w := status_words(ln.removeprefix(DELAYER_LINE)))]
    nics = [ln.split(" dev ", 1)[1].split()[0] for ln in lines if ln.startswith("tc qdisc del dev ") and
            ln.endswith(" root")]
    disks = list(dict.fromkeys(m.group(1) for ln in lines if (m := _THROTTLED.search(ln))))
    groups = list(dict.fromkeys(m.group(1) for ln in lines if (m := _GROUP.search(ln))))
    delayed = list(dict.fromkeys(m.group(1) for ln in lines if (m := _DELAYED.search(ln))))
    words = [f"link shaping on {', '.join(nics)}"] if nics else []
    words += [f"packet delay on {', '.join(delayed)}" + (f" ({held[0]})" if held else "")] if delayed else []
    words += [f"disk throttle on {', '.join(disks)}"] if disks else []
    words += [f"RAM/CPU group {', '.join(groups)}"] if groups else []
    return len(lines), "; ".join(words)


def check_factors(cluster: ClusterSpec, factors: list[str], source: str) -> None:
    """Refuse, in one line, hardware factors a real cluster cannot have (not allowed, or not emulated)."""
    if not factors:
        return
    name = factors[0]
    if not cluster.emulation.allow:
        raise ConfigError(source, f"factors.{name}",
                          f"{cluster.name} does not allow glmodel to change its hardware; set `emulation: {{allow: "
                          f"true}}` in {cluster.source} to let it shape the hosts' NICs and throttle their brick "
                          f"disks (undone after the plan, or by `glmodel restore`), or remove '{name}'")
    other = [f for f in factors if f not in EMULATED]
    if other:
        raise ConfigError(source, f"factors.{other[0]}",
                          f"on a cluster (not a glmodel lab) glmodel emulates {', '.join(EMULATED)} only; remove "
                          f"'{other[0]}' or run the plan on `glmodel lab up`")


@dataclass(frozen=True)
class Nic:
    host: str
    name: str
    speed_mbps: int | None


def find_nic(executor: Executor, host: Host) -> Nic:
    """The interface that holds the host's cluster address, with its speed when the host reports one."""
    out = executor.run(host.address, shell(nic_script(host.address)), timeout=30).stdout
    facts = parse_nic(out)
    name = facts["nic"]
    if not isinstance(name, str) or not _NIC.match(name) or name == "lo":
        raise EmulationError(f"{host.address}: no network interface holds the address {host.address} (found "
                             f"{name!r}); glmodel shapes the NIC that carries the cluster's traffic")
    speed = facts["nic_speed_mbps"]
    return Nic(host.address, name, speed if isinstance(speed, int) else None)


def link_plan(nic: Nic, rate: int | Share, labelled_gbps: float | None = None,
              had: tuple[str, int | None] = ("none", None)) -> tuple[list[list[str]], list[list[str]], int]:
    """(undo, do, rate) that give ``nic`` the rate; a rate above its reported speed is refused (pure). A share
    is of the NIC's reported speed, else of the cluster file's ``hardware.network.gbps`` for the host.

    ``had``: the NIC's traffic control before (``link.parse_state``). Shaping glmodel made (a lab's link) is a
    ceiling: the rate is at most it, a share is of it, and the undo makes it again at its exact rate. Anything
    else a host has (its own qdisc) is not replaced: refused in one line naming it."""
    kind, ceiling = had
    if kind not in ("none", "glmodel"):
        raise EmulationError(f"{nic.host}: its NIC {nic.name} has traffic control glmodel did not set ({kind}); "
                             "glmodel does not replace it: remove the link factor for this cluster, or take that "
                             "setting away first")
    if isinstance(rate, Share):
        speed = nic.speed_mbps * 10**6 if nic.speed_mbps is not None else (
            int(labelled_gbps * 10**9) if labelled_gbps else None)
        if ceiling is not None:
            speed = min(speed, ceiling) if speed is not None else ceiling
        if speed is None:
            raise EmulationError(f"{nic.host}: its NIC {nic.name} reports no speed to take {rate} of; set "
                                 "hardware.network.gbps for it in the cluster file, or give the link as a rate")
        rate = max(int(speed * rate.fraction), 10**6)
    if nic.speed_mbps is not None and rate > nic.speed_mbps * 10**6:
        raise EmulationError(f"{nic.host}: {show_rate(rate)} is faster than its NIC {nic.name} "
                             f"({show_rate(nic.speed_mbps * 10**6)}); emulation only makes hardware slower")
    if ceiling is not None:  # never faster than the host was; put back as it was
        return (removal_argv(nic.name) + shaping_argv(nic.name, ceiling), removal_argv(nic.name)
                + shaping_argv(nic.name, min(rate, ceiling)), min(rate, ceiling))
    return removal_argv(nic.name), shaping_argv(nic.name, rate), rate


def disk_plan(host: str, cgroup: str, devices: list[BrickDevice], limits: Mapping[str, int | Share],
              measured: Mapping[str, Mapping[str, float]]) -> tuple[list[list[str]], list[list[str]], str]:
    """(undo, do, in words) that throttle every device under the host's bricks to ``limits`` (pure).

    ``measured``: MAJ:MIN -> {"read"/"write": bytes/s} without a throttle of glmodel's; a rate above it is
    refused, and a share is of it. A throttle the device had already (``BrickDevice.existing``: the host's own,
    or a lab's) is a ceiling: every value is at most it, a share is of the lesser of it and what was measured,
    its other entries stay in force, and the undo writes it back as it was.
    """
    resolved_all, words = disk_limits(host, devices, limits, measured)
    if cgroup != "v1":
        raise EmulationError(f"{host}: cgroup {cgroup} host; " + (
            "its brick disks are throttled by its group's io.max (group_plan), not by v1's blkio root" if cgroup == "v2"
            else "glmodel throttles brick disks through cgroup v1's blkio hierarchy or v2's io controller, and it "
                 "has neither: remove the disk factors for this cluster"))
    undo: list[list[str]] = []
    do: list[list[str]] = []
    for majmin, d in targets(devices).items():
        undo += v1_argv(majmin, dict(d.existing))
        do += v1_argv(majmin, {**d.existing, **resolved_all[majmin]})
    return undo, do, words


def disk_limits(host: str, devices: list[BrickDevice], limits: Mapping[str, int | Share],
                measured: Mapping[str, Mapping[str, float]]) -> tuple[dict[str, dict[str, int]], str]:
    """Each brick device's limits for the setting (MAJ:MIN -> kind -> value) and what they are in words (pure;
    ``disk_plan`` says how shares, measured figures and a device's own throttle bound them)."""
    bad = unthrottlable(devices)
    if bad is not None:
        raise EmulationError(f"{host}: brick {bad.brick} is on {bad.fstype or 'no filesystem'} ({bad.source or '?'}, "
                             f"device {bad.majmin or '?'}), not a block device; glmodel throttles the disk, partition, "
                             "LVM/device-mapper or md device under each brick")
    out: dict[str, dict[str, int]] = {}
    words = []
    for majmin, d in targets(devices).items():
        resolved: dict[str, int] = {}
        for kind, value in limits.items():
            direction = "read" if kind.startswith("read") else "write"
            have = measured.get(majmin, {}).get(direction)
            ceiling = d.existing.get(kind)
            if have is not None and ceiling is not None and kind.endswith("bps"):
                have = min(have, ceiling)
            if isinstance(value, Share) and kind.endswith("iops") and ceiling is not None:
                value = max(int(ceiling * value.fraction), 1)
            elif isinstance(value, Share):
                if kind.endswith("iops") or have is None:
                    raise EmulationError(f"{host}: no measured {direction} {'IOPS' if kind.endswith('iops') else 'rate'}"
                                         f" of {d.name} to take {value} of; give the disk setting as a rate")
                value = max(int(have * value.fraction), 10**6)
            elif kind.endswith("bps") and ceiling is not None and have is not None and value > have:
                value = ceiling  # the host's own throttle stays what limits it: never faster than it was
            elif kind.endswith("bps") and have is not None and value > have:
                raise EmulationError(f"{host}: disk {direction} {show_disk_rate(value)} is faster than its brick "
                                     f"device {d.name} ({d.via}) measured just now ({show_disk_rate(have)}); "
                                     "emulation only makes hardware slower")
            resolved[kind] = value if ceiling is None else min(int(value), ceiling)
        out[majmin] = resolved
        kept = f" (its own {show_limits(d.existing)} kept as a ceiling)" if d.existing else ""
        words.append(f"disk {d.name} ({d.via}) {show_limits(resolved)}{kept}")
    return out, "; ".join(words)


def _host_plan(executor: Executor, address: str, rate: int | Share | None,
               limits: Mapping[str, int | Share], ram: int | Share | None,
               cpu: float | Share | None, stepped: Mapping[str, KnobValue] | None = None
               ) -> tuple[list[list[str]], list[list[str]], str]:
    """What one host needs for the setting: (undo, do, what is changed, in words)."""
    cluster = executor.cluster
    host = cluster.host(address)
    undo: list[list[str]] = []
    do: list[list[str]] = []
    words = []
    stepped = {k: v for k, v in (stepped or {}).items() if v is not None}
    nic = find_nic(executor, host) if rate is not None or stepped else None
    # what the NIC has already, in one round trip: its traffic control, and what every knob set by commands
    # on it has (each read's one line, prefixed with its knob)
    reads = ""
    for k in stepped:
        step = STEPPED[k].step
        if step is not None and nic is not None:
            reads += f'; echo "step {k}: $({step.read(nic.name)})"'
    seen = (executor.run(address, shell(f"{state_script(nic.name)}{reads}; true"), timeout=30).stdout
            if nic is not None else "")
    files = knob_files(cluster, address)
    for knob, value in stepped.items():  # knobs set by commands: what the host had is put back after
        step = STEPPED[knob].step
        assert step is not None and nic is not None
        was = next((ln.removeprefix(f"step {knob}: ") for ln in seen.splitlines() if ln.startswith(f"step {knob}: ")),
                   "")
        try:
            undo, do = undo + step.restore(was, nic.name, files), do + step.apply(value, nic.name, files)
        except ValueError as exc:
            raise EmulationError(f"{address}: {knob}: {exc}") from None
        show = STEPPED[knob].show
        words.append(step.say(value, nic.name) if step.say is not None else
                     f"{knob} {show(value) if show is not None else value} (was {was.strip()})")
    if rate is not None and nic is not None:
        label = host.hardware.network.gbps if host.hardware.network else None
        had = parse_state(seen)
        u, d, bits = link_plan(nic, rate, label, had)
        kept = f" (its own {show_rate(had[1])} kept as a ceiling)" if had[1] is not None else ""
        undo, do = undo + u, do + d
        words.append(f"NIC {nic.name} {show_rate(bits)}{kept}")  # beside a stepped knob's words, not over them
    bricks = list(host.brick_paths) if host.is_server else []
    io: dict[str, dict[str, int]] = {}
    if limits and bricks:
        out = executor.run(address, shell(devices_script(bricks)), timeout=60).stdout
        try:
            cgroup, devices = parse_devices(out)
        except ValueError as exc:
            raise EmulationError(f"{address}: {exc}") from None
        measured = {}
        if unthrottlable(devices) is None and any(k in limits for k in ("read_bps", "write_bps")):
            for majmin, dev in targets(devices).items():
                probe = executor.run(address, shell(probe_script(dev.dev, dev.brick)), timeout=300).stdout
                measured[majmin] = parse_probe(probe)
        if cgroup == "v2":  # the throttle is the group's (io.max), made with the RAM and CPU group below
            io, said = disk_limits(address, devices, limits, measured)
        else:
            u, d, said = disk_plan(address, cgroup, devices, limits, measured)
            undo, do = undo + u, do + d
        words.append(said)
    if ram is not None or cpu is not None or io:
        facts = executor.run(address, shell(facts_script()), timeout=30).stdout
        try:
            limits_had = parse_limits(facts)
        except ValueError as exc:
            raise EmulationError(f"{address}: {exc}") from None
        u, d, words_group = group_plan(cluster, address, parse_facts(facts), ram, cpu, limits_had, io)
        undo, do = undo + u, do + d
        words.append(words_group)
    return undo, do, "; ".join(words)


def group_plan(cluster: ClusterSpec, address: str, facts: tuple[str, int | None, int | None],
               ram: int | Share | None, cpu: float | Share | None, had: Limits | None = None,
               io: Mapping[str, Mapping[str, int]] | None = None) -> tuple[list[list[str]], list[list[str]], str]:
    """(undo, do, in words) that give the host a group with ``ram`` bytes and ``cpu`` cores, or those shares of
    what it has, and on cgroup v2 its brick devices' throttle (``io``: MAJ:MIN -> limits) (pure); more than
    the host has is refused naming the host and its figure. Limits its Gluster processes were under already
    (``had``) stay in force above the group and count as what the host has. Each controller is where the host
    has it (``had.where``: v1 or v2); without that, cgroup v1 (``facts``) as before."""
    cgroup, total, cpus_n = facts
    had = had or Limits()
    cpus: float | None = cpus_n
    if had.cpu is not None:
        cpus = min(cpus, had.cpu) if cpus is not None else had.cpu
    if had.memory is not None:
        total = min(total, had.memory) if total is not None else had.memory
    if isinstance(ram, Share) or isinstance(cpu, Share):
        if (isinstance(ram, Share) and total is None) or (isinstance(cpu, Share) and cpus is None):
            raise EmulationError(f"{address}: its RAM or CPU count could not be read to take a share of")
        if isinstance(ram, Share):
            ram = int((total or 0) * ram.fraction) // (1 << 20) << 20
        if isinstance(cpu, Share):
            cpu = round((cpus or 0) * cpu.fraction, 3)
    io = io or {}
    need = [c for c, wanted in (("memory", ram is not None), ("cpu", cpu is not None), ("io", bool(io))) if wanted]
    if had.where:
        missing = [c for c in need if c not in had.where]
        if missing:
            raise EmulationError(f"{address}: no `{missing[0]}` cgroup controller (neither a cgroup v1 hierarchy nor "
                                 "the v2 one offers it); remove the factors that need it for this cluster")
        v2 = [c for c in need if had.where[c][0] == 2]
    elif cgroup != "v1":
        raise EmulationError(f"{address}: cgroup {cgroup} host; glmodel limits RAM and CPU through cgroup v1's memory "
                             "and cpu hierarchies only; remove the ram and cpu factors for this cluster")
    else:
        v2 = []
    if v2 and had.v2_limits:
        raise EmulationError(f"{address}: its Gluster processes are in a cgroup v2 group with limits of its own "
                             f"({had.v2_limits[0]}); glmodel does not make a group beside them: remove the ram, "
                             "cpu and disk factors for this cluster, or lift those limits first")
    if ram is not None and total is not None and ram > total:
        raise EmulationError(f"{address}: RAM {gluster_size(ram)} is more than the host has "
                             f"({total / 2**30:.1f} GiB); emulation only makes hardware smaller")
    if cpu is not None and cpus is not None and cpu > cpus + 1e-9:
        raise EmulationError(f"{address}: CPU {cpu:g} core(s) is more than the host has ({cpus:g}); emulation only "
                             "makes hardware slower")
    origins, join = cluster.emulation_file(address, "origins"), cluster.emulation_file(address, "join")
    words = "; ".join(([f"RAM {gluster_size(ram)}"] if ram is not None else [])
                      + ([f"CPU {cpu:g} core(s)"] if cpu is not None else []))
    if had.cpu is not None or had.memory is not None:
        words += " (inside the limits its Gluster processes had: " + ", ".join(
            ([f"CPU {had.cpu:g} core(s)"] if had.cpu is not None else [])
            + ([f"RAM {gluster_size(had.memory)}"] if had.memory is not None else [])) + ")"
    if not v2:
        return (undo_argv(address, origins, join, had.parents),
                apply_argv(address, ram, cpu, origins, join, had.parents), words)
    root = had.where[v2[0]][1]
    files: dict[str, list[str]] = {}
    if "memory" in v2:
        name, text = memory_file(2, int(ram or 0))
        files[name] = [text]
    if "cpu" in v2:
        files.update((name, [text]) for name, text in cpu_files(2, cpu or 0))
    if "io" in v2:
        files["io.max"] = [v2_line(majmin, limits) for majmin, limits in io.items()]
    enabled = cluster.emulation_file(address, "enabled")
    v1_ram, v1_cpu = (ram if "memory" not in v2 else None), (cpu if "cpu" not in v2 else None)
    undo = v2_undo_argv(address, root, origins, enabled) + undo_argv(address, origins, join, had.parents)
    do = (apply_argv(address, v1_ram, v1_cpu, origins, join, had.parents)
          + v2_apply_argv(address, root, files, origins, join, enabled))
    return undo, do, words + f" (cgroup v2: {', '.join(v2)})"


def _whole(knobs: Mapping[str, KnobValue | Share], knob: str) -> int | Share | None:
    """A knob's parsed value that is whole (bit/s, bytes, µs) or a share of the host's."""
    value = knobs.get(knob)
    if isinstance(value, Share):
        return value
    try:
        return whole(knob, value)
    except ValueError as exc:
        raise EmulationError(str(exc)) from None


def apply_hardware(executor: Executor, knobs: Mapping[str, KnobValue | Share]) -> dict[str, str]:
    """Give every host the setting (``knobs``: link in bit/s, disk_* limits, ram in bytes, cpu in cores, each
    or a ``Share`` of what the host has; latency in µs; None for unlimited or none); returns host -> what was
    changed there.

    Whatever was recorded on a host is undone first, so a setting replaces the one before it. Every host is
    looked at and every value checked before any host is changed.
    """
    cluster = executor.cluster
    unknown = set(knobs) - {"link", "ram", "cpu", *DISK_KNOBS, *STEPPED}
    if unknown:
        raise EmulationError(f"{cluster.name}: {', '.join(sorted(unknown))} cannot be emulated on a cluster "
                             f"(glmodel emulates {', '.join(EMULATED)})")
    restore(executor, strict=True)
    rate, ram = (_whole(knobs, k) for k in ("link", "ram"))
    cpu = knobs.get("cpu")
    if not (cpu is None or isinstance(cpu, Share | int | float)):
        raise EmulationError(f"{cluster.name}: cpu {cpu!r} is not a parsed number of cores")
    limits = {DISK_KNOBS[k]: v if isinstance(v, Share) else int(v) for k, v in knobs.items()
              if k in DISK_KNOBS and v is not None}
    stepped: dict[str, KnobValue] = {}
    for k in STEPPED:
        v = knobs.get(k)
        if isinstance(v, Share):
            raise EmulationError(f"{cluster.name}: {k} is a value of its own, not a share of a host's hardware")
        if v is not None:
            stepped[k] = v
    if rate is None and not limits and ram is None and cpu is None and not stepped:
        return {}
    plans, errors = executor.map([h.address for h in cluster.hosts],
                                 lambda a: _host_plan(executor, a, rate, limits, ram, cpu, stepped))
    if errors:
        host, exc = next(iter(errors.items()))
        raise exc if isinstance(exc, GlmodelError) else EmulationError(f"{host}: {exc}")
    plans = {a: p for a, p in plans.items() if p[1]}

    def apply(address: str) -> str:
        undo, do, words = plans[address]
        executor.run(address, shell(apply_script(record_path(cluster, cluster.host(address)), undo, do)),
                     timeout=60)
        return words

    done, errors = executor.map(list(plans), apply)
    if errors:
        restore(executor)  # what did get changed goes back at once
        host, exc = next(iter(errors.items()))
        raise EmulationError(f"{host}: could not emulate its hardware: {exc}")
    return done


def restore(executor: Executor, *, strict: bool = False) -> dict[str, str]:
    """Undo whatever each host recorded; host -> "restored N change(s)", "nothing to restore" or why not.

    With ``strict`` a host that cannot be reached is an error (a campaign must not start on a host it cannot
    put back); otherwise it is reported, and its record stays for the next ``restore``.
    """
    cluster = executor.cluster
    def one(address: str) -> str:
        out = executor.run(address, shell(restore_script(record_path(cluster, cluster.host(address)))),
                           timeout=60).stdout.strip()
        n = out.removeprefix("restored ").strip()
        return f"restored {n} change(s)" if out.startswith("restored") else "nothing to restore"

    done, errors = executor.map([h.address for h in cluster.hosts], one)
    if errors and strict:
        host, exc = next(iter(errors.items()))
        raise EmulationError(f"{host}: cannot undo its emulated hardware ({exc}); nothing was changed")
    for host, exc in errors.items():
        reason = str(exc).removeprefix(f"{host}: ") if isinstance(exc, RemoteError) else str(exc)
        done[host] = f"not reached ({reason}); its changes stay recorded on it: run `glmodel restore` again"
    return {h.address: done[h.address] for h in cluster.hosts}

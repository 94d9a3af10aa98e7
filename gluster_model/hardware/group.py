"""RAM and CPU of any host as a control group: one group per host holding its Gluster processes and whatever
glmodel starts there (pure: shell text built here, run by ``emulation``).

On cgroup v1 a host gets ``glmodel-emu-<address>`` in the memory and in the cpu hierarchy (named by address:
a lab's nodes share one kernel). Its limits are the setting's RAM (``memory.limit_in_bytes``; page cache is
charged to the group that reads a page first, so the caches are dropped before a limit is set) and CPU (a CFS
quota in cores). Into it go:

- the host's running glusterd and glusterfsd processes — those in the caller's network namespace, which on a
  real host is all of them and on a lab node its own (a brick started later is glusterd's child and inherits
  the group); FUSE clients of mounts glmodel did not make are left alone;
- every command glmodel runs on the host afterwards, the FUSE mounts, iozone's children, dd and the CPU score
  included: the host's *join file* moves the shell that runs a command into the group, and the SSH executor
  and iozone's RSH wrapper source it first while emulation is allowed (``remote.executor.join_prefix``). A
  device's measurement (fio's disk baseline, iperf3's) joins it for RAM only: the CPU quota is the model's CPU
  stage, and a capacity measured inside it would fall with it (on v2, where one group holds every controller,
  it joins ``device_group``, beside the host's, with the same RAM and disk limits and no CPU quota).

Undone by one line of the host's record: every task still in the group goes back to the group it came from
(recorded in an *origins* file before it was moved) or to the hierarchy's root, and the group is removed.

Composed with what the host has: where its glusterd already sits in a group of its own (a service's slice, a
lab node's group) the group is made inside that one, so the limits it had stay in force above the setting's
(cgroup v1's cpu and memory controllers are hierarchical), and a share is of the lesser of the host and those
limits (``parse_limits``); undoing removes only the group glmodel made.

On cgroup v2 (a controller no v1 hierarchy holds, offered by the unified hierarchy wherever it is mounted) the
group is ``glmodel-emu-<address>`` at the unified root, its limits ``cpu.max``, ``memory.max`` and ``io.max``
(the brick devices' throttle: on v2 a throttle holds the processes of its group, so the brick processes go in),
each controller handed down from the root where it was not (and taken back on undo). v2 forbids processes in a
group whose children get controllers, so a group cannot be made inside a service's group: where the daemons
sit in a v2 group with limits of its own, that is refused in one line. A host may mix both (a hybrid host).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from ..errors import ParseError
from ..remote.executor import DEVICE_VAR
from .limits import limits_script, parse_limits as parse_cgroup_limits

V1_ROOTS = {"memory": "/sys/fs/cgroup/memory", "cpu": "/sys/fs/cgroup/cpu"}
PERIOD_US = 100_000
# The server's processes. Not glusterfs: FUSE clients of volumes glmodel did not mount (a host's own mounts)
# are left alone; the ones glmodel mounts start from a command that joined the group already.
DAEMONS = "glusterd|glusterfsd"


def quota_us(cores: float) -> int:
    """The CFS quota per ``PERIOD_US`` that gives ``cores`` cores (at least 1 ms: the kernel's least)."""
    return max(1000, round(float(cores) * PERIOD_US))


def cpu_files(version: int, cores: float | None) -> list[tuple[str, str]]:
    """(file, text) writes that give a group ``cores`` of CPU time on cgroup ``version`` 1 or 2 (None: no quota):
    the same for an emulated host's group and a lab node's."""
    quota = -1 if cores is None else quota_us(cores)
    if version == 1:
        return [("cpu.cfs_period_us", str(PERIOD_US)), ("cpu.cfs_quota_us", str(quota))]
    return [("cpu.max", f"{'max' if quota < 0 else quota} {PERIOD_US}")]


def memory_file(version: int, n: int | None) -> tuple[str, str]:
    """(file, text) that sets a group's memory limit to ``n`` bytes on cgroup ``version`` 1 or 2 (None: no
    limit): the same for an emulated host's group and a lab node's."""
    if version == 1:
        return "memory.limit_in_bytes", "-1" if n is None else str(n)
    return "memory.max", "max" if n is None else str(n)


def group_name(address: str) -> str:
    """``glmodel-emu-10-0-0-2``: one group per host address (a name only, nothing a shell would read)."""
    return "glmodel-emu-" + re.sub(r"[^A-Za-z0-9]+", "-", address).strip("-")


def device_group(address: str) -> str:
    """The v2 group beside the host's that a device's measurement joins where the host's group has a CPU limit:
    its RAM and disk limits without the CPU quota (``remote.executor.join_prefix``)."""
    return group_name(address) + "-dev"


# Shell test, in a join file, true while the sourcing shell measures a device.
OUTSIDE_CPU = f'[ "${{{DEVICE_VAR}:-}}" = 1 ]'


def facts_script() -> str:
    """Shell text printing the cgroup hierarchy in use, the host's RAM (kB) and its CPUs; where each controller
    is (``hier_<controller>=v1:<mount>`` or ``v2:<mount>``); and for its glusterd (the one in the caller's network
    namespace) the v1 group it is in per controller (``parent_<controller>=``) and every memory and CPU limit on
    the way up from its groups (``limits.limits_script``: v1 and v2 lines, told apart by their file names)."""
    parents = "; ".join(f"echo \"parent_{ctl}=$(awk -F: '$2 ~ /(^|,){ctl}(,|$)/ {{print $3}}' /proc/$gp/cgroup)\""
                        for ctl in V1_ROOTS)
    where = ("u=$(awk '$3==\"cgroup2\" {print $2; exit}' /proc/self/mounts); "
             "for pair in cpu:cpu memory:memory io:blkio; do c=${pair%%:*}; v=${pair#*:}; "
             "m=$(awk -v v=\"$v\" '$3==\"cgroup\" && (\",\" $4 \",\") ~ (\",\" v \",\") {print $2; exit}' /proc/self/mounts); "
             'if [ -n "$m" ]; then echo "hier_$c=v1:$m"; '
             'elif [ -n "$u" ] && grep -qw "$c" "$u/cgroup.controllers" 2>/dev/null; then echo "hier_$c=v2:$u"; fi; done')
    return ('if [ -d /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then echo cgroup=v1; '
            'elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo cgroup=v2; else echo cgroup=none; fi; '
            "echo \"memtotal=$(awk '/^MemTotal:/{print $2}' /proc/meminfo)\"; echo \"nproc=$(nproc)\"; "
            'me=$(readlink /proc/self/ns/net); gp=""; for p in $(pgrep -x glusterd); do '
            '[ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$me" ] && { gp=$p; break; }; done; '
            + where + '\nif [ -n "$gp" ]; then\n' + parents + "\n" + limits_script("$gp") + "\nfi\n")


_PARENT = re.compile(r"^/[A-Za-z0-9_.@:/-]*$")


@dataclass(frozen=True)
class Limits:
    """What a host's Gluster processes are held to already: the groups glusterd is in (per controller) and
    the least CPU quota (cores) and memory limit (bytes) on the way up from them."""

    parents: Mapping[str, str] = field(default_factory=dict)
    cpu: float | None = None
    memory: int | None = None
    where: Mapping[str, tuple[int, str]] = field(default_factory=dict)  # controller -> (1 or 2, its mount point)
    v2_limits: tuple[str, ...] = ()  # limit files (not "max") on the way up from glusterd's v2 group


def parse_limits(text: str) -> Limits:
    """``Limits`` from ``facts_script``'s output (pure); a group path that is not a plain path is refused. The
    CPU and memory ceilings are ``limits.parse_limits``'s (the tightest on any level, none where it is the
    host's whole); a v2 limit (cpu.max, memory.max other than "max") is named in ``v2_limits``."""
    parents: dict[str, str] = {}
    where: dict[str, tuple[int, str]] = {}
    v2_limits: list[str] = []
    facts: dict[str, str] = {}
    for line in text.splitlines():
        key, _, value = line.partition("=")
        value = value.strip()
        facts.setdefault(key, value)
        if key.startswith("hier_") and key[5:] in ("cpu", "memory", "io") and value[:3] in ("v1:", "v2:"):
            mount = value[3:]
            if not _PARENT.match(mount):
                raise ValueError(f"the {key[5:]} hierarchy's mount point {mount[:80]!r} is not a plain path")
            where[key[5:]] = (int(value[1]), mount.rstrip("/") or "/")
        elif key.startswith("parent_") and key[7:] in V1_ROOTS and value:
            if not _PARENT.match(value) or ".." in value.split("/"):
                raise ValueError(f"glusterd's {key[7:]} group {value[:80]!r} is not a plain path")
            parents[key[7:]] = value.rstrip("/") or "/"
        elif key in ("cpu.max", "memory.max") and value and not value.startswith("max"):
            v2_limits.append(f"{key} {value}")
    mem, cpus = facts.get("memtotal", ""), facts.get("nproc", "")
    try:
        had = parse_cgroup_limits(text, int(mem) * 1024 if mem.isdecimal() else None,
                                  int(cpus) if cpus.isdecimal() else None)
    except ParseError as exc:
        raise ValueError(str(exc)) from None
    cpu, memory = had["cpu_quota_cores"], had["ram_limit_bytes"]
    return Limits(parents, float(cpu) if cpu is not None else None, int(memory) if memory is not None else None,
                  where, tuple(v2_limits))


def group_dir(ctl: str, address: str, parents: Mapping[str, str] | None = None) -> str:
    """The host's group in hierarchy ``ctl``: inside the group its glusterd was in (the root where none)."""
    parent = (parents or {}).get(ctl, "/").rstrip("/")
    return f"{V1_ROOTS[ctl]}{parent}/{group_name(address)}"


def parse_facts(text: str) -> tuple[str, int | None, int | None]:
    """(cgroup "v1"/"v2"/"none", RAM in bytes, CPUs) from ``facts_script``'s output (unknown: None)."""
    kv = dict(ln.split("=", 1) for ln in text.splitlines() if "=" in ln)
    mem, cpus = kv.get("memtotal", "").strip(), kv.get("nproc", "").strip()
    return (kv.get("cgroup", "none").strip(), int(mem) * 1024 if mem.isdecimal() else None,
            int(cpus) if cpus.isdecimal() else None)


def _controllers(ram: int | None, cpu: float | None) -> list[str]:
    return [c for c, v in (("memory", ram), ("cpu", cpu)) if v is not None]


def undo_argv(address: str, origins: str, join_file: str, parents: Mapping[str, str] | None = None
              ) -> list[list[str]]:
    """The record's lines that put a host's processes back and remove its group (each safe to run twice)."""
    o = shlex.quote(origins)
    lines = [["rm", "-f", join_file]]
    for ctl, root in V1_ROOTS.items():
        grp = shlex.quote(group_dir(ctl, address, parents))
        # Each task back where it was (its origin for this hierarchy), else to the root; then the empty group.
        lines.append(["sh", "-c", f"if [ -d {grp} ]; then for p in $(cat {grp}/cgroup.procs); do "
                      f"o=$(awk -v p=\"$p\" -v c={ctl} '$1==p && $2==c {{print $3}}' {o} 2>/dev/null | head -n 1); "
                      f"echo \"$p\" > {shlex.quote(root)}\"$o\"/cgroup.procs 2>/dev/null || "
                      f"echo \"$p\" > {shlex.quote(root)}/cgroup.procs 2>/dev/null; done; rmdir {grp}; fi"])
    lines.append(["rm", "-f", origins])
    return lines


def apply_argv(address: str, ram: int | None, cpu: float | None, origins: str, join_file: str,
               parents: Mapping[str, str] | None = None) -> list[list[str]]:
    """Commands that make the host's group with the limits (inside ``parents``, the groups its glusterd was
    in), move its Gluster processes in (each one's origin written down first) and write the join file; v1."""
    out: list[list[str]] = []
    if ram is not None:
        out.append(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"])  # so no page stays charged elsewhere
    joins = []
    for ctl in _controllers(ram, cpu):
        grp = group_dir(ctl, address, parents)
        out.append(["mkdir", "-p", grp])
        writes = [memory_file(1, int(ram or 0))] if ctl == "memory" else cpu_files(1, cpu or 0)
        out.append(["sh", "-c", " && ".join(f"echo {shlex.quote(text)} > {shlex.quote(grp + '/' + name)}"
                                            for name, text in writes)])
        q = shlex.quote(grp)
        out.append(["sh", "-c", "me=$(readlink /proc/self/ns/net); "
                    f"for p in $(pgrep -x {shlex.quote(DAEMONS)}); do "
                    '[ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$me" ] || continue; '
                    f"o=$(awk -F: '$2 ~ /(^|,){ctl}(,|$)/ {{print $3}}' /proc/$p/cgroup); "
                    f"echo \"$p {ctl} $o\" >> {shlex.quote(origins)} && echo \"$p\" > {q}/cgroup.procs; done"])
        join = f"echo $$ > {shlex.quote(grp + '/cgroup.procs')} 2>/dev/null"
        # A device's measurement stays where the session was for CPU (``executor.join_prefix``).
        joins.append(f"{OUTSIDE_CPU} || {join}" if ctl == "cpu" else join)
    if joins:
        text = "; ".join(joins)
        out.append(["sh", "-c", f"umask 077; printf '%s\\n' {shlex.quote(text)} > {shlex.quote(join_file)}"])
    return out


def v2_apply_argv(address: str, root: str, limits: Mapping[str, list[str]], origins: str, join_file: str,
                  enabled: str) -> list[list[str]]:
    """Commands that give the host a cgroup v2 group at the unified ``root`` with ``limits`` (interface file ->
    the lines written to it: ``cpu.max``, ``memory.max``, one ``io.max`` line per device), hand each controller
    down from the root where it was not (writing it in ``enabled`` to take back), move its Gluster daemons in
    (each one's origin written down first) and add the group to the join file."""
    grp = f"{root}/{group_name(address)}"
    q, r, e = shlex.quote(grp), shlex.quote(root), shlex.quote(enabled)
    out: list[list[str]] = []
    if "memory.max" in limits:
        out.append(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"])  # so no page stays charged elsewhere
    for ctl in dict.fromkeys(f.split(".", 1)[0] for f in limits):
        out.append(["sh", "-c", f"umask 077; grep -qw {ctl} {r}/cgroup.subtree_control || "
                                f"{{ echo +{ctl} > {r}/cgroup.subtree_control && echo {ctl} >> {e}; }}"])
    # A device's measurement joins a group beside it with every limit but the CPU's (none without them).
    dev = {n: lines for n, lines in limits.items() if not n.startswith("cpu.")} if "cpu.max" in limits else None
    groups = [(grp, limits), *([(f"{root}/{device_group(address)}", dev)] if dev else [])]
    for path, files in groups:
        out.append(["mkdir", "-p", path])
        for name, lines in files.items():
            for line in lines:
                out.append(["sh", "-c", f"echo {shlex.quote(line)} > {shlex.quote(path + '/' + name)}"])
    out.append(["sh", "-c", "me=$(readlink /proc/self/ns/net); "
                f"for p in $(pgrep -x {shlex.quote(DAEMONS)}); do "
                '[ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$me" ] || continue; '
                "o=$(awk -F: '$1==\"0\" {print $3}' /proc/$p/cgroup); "
                f"echo \"$p v2 $o\" >> {shlex.quote(origins)} && echo \"$p\" > {q}/cgroup.procs; done"])
    text = f"echo $$ > {shlex.quote(grp + '/cgroup.procs')} 2>/dev/null"
    if dev is not None:
        text = (f"if {OUTSIDE_CPU}; then "
                + (f"echo $$ > {shlex.quote(groups[1][0] + '/cgroup.procs')} 2>/dev/null; " if dev else ":; ")
                + f"else {text}; fi")
    out.append(["sh", "-c", f"umask 077; printf '%s\\n' {shlex.quote(text)} >> {shlex.quote(join_file)}"])
    return out


def v2_undo_argv(address: str, root: str, origins: str, enabled: str) -> list[list[str]]:
    """The record's lines that put the daemons back where they were, remove the v2 group and take back the
    controllers glmodel handed down (each safe to run twice)."""
    r, o, e = shlex.quote(root), shlex.quote(origins), shlex.quote(enabled)
    return [*(["sh", "-c", f"if [ -d {grp} ]; then for p in $(cat {grp}/cgroup.procs); do "
                           f"o=$(awk -v p=\"$p\" '$1==p && $2==\"v2\" {{print $3}}' {o} 2>/dev/null | head -n 1); "
                           f"echo \"$p\" > {r}\"$o\"/cgroup.procs 2>/dev/null || echo \"$p\" > {r}/cgroup.procs; "
                           f"done; rmdir {grp}; fi"]
              for grp in (shlex.quote(f"{root}/{name}") for name in (group_name(address), device_group(address)))),
            ["sh", "-c", f"if [ -f {e} ]; then for c in $(cat {e}); do echo -$c > {r}/cgroup.subtree_control; "
                         f"done; rm -f {e}; fi"]]

"""RAM and CPU of any host as a control group: one group per host holding its Gluster processes and whatever
glmodel starts there (pure: shell text built here, run by ``emulation``).

On cgroup v1 a host gets ``glmodel-emu-<address>`` in the memory and in the cpu hierarchy (named by address:
a lab's nodes share one kernel). Its limits are the setting's RAM (``memory.limit_in_bytes``; page cache is
charged to the group that reads a page first, so the caches are dropped before a limit is set) and CPU (a CFS
quota in cores). Into it go:

- the host's running glusterd and glusterfsd processes — those in the caller's network namespace, which on a
  real host is all of them and on a lab node its own (a brick started later is glusterd's child and inherits
  the group); FUSE clients of mounts glmodel did not make are left alone;
- every command glmodel runs on the host afterwards, the FUSE mounts, iozone's children, dd, fio and the CPU
  score included: the host's *join file* moves the shell that runs a command into the group, and the SSH
  executor and iozone's RSH wrapper source it first while emulation is allowed
  (``remote.executor.join_prefix``).

Undone by one line of the host's record: every task still in the group goes back to the group it came from
(recorded in an *origins* file before it was moved) or to the hierarchy's root, and the group is removed.
"""

from __future__ import annotations

import re
import shlex

V1_ROOTS = {"memory": "/sys/fs/cgroup/memory", "cpu": "/sys/fs/cgroup/cpu"}
PERIOD_US = 100_000
# The server's processes. Not glusterfs: FUSE clients of volumes glmodel did not mount (a host's own mounts)
# are left alone; the ones glmodel mounts start from a command that joined the group already.
DAEMONS = "glusterd|glusterfsd"


def group_name(address: str) -> str:
    """``glmodel-emu-10-0-0-2``: one group per host address (a name only, nothing a shell would read)."""
    return "glmodel-emu-" + re.sub(r"[^A-Za-z0-9]+", "-", address).strip("-")


def facts_script() -> str:
    """Shell text printing the cgroup hierarchy in use, the host's RAM (kB) and its CPUs."""
    return ('if [ -d /sys/fs/cgroup/memory ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then echo cgroup=v1; '
            'elif [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo cgroup=v2; else echo cgroup=none; fi; '
            "echo \"memtotal=$(awk '/^MemTotal:/{print $2}' /proc/meminfo)\"; echo \"nproc=$(nproc)\"")


def parse_facts(text: str) -> tuple[str, int | None, int | None]:
    """(cgroup "v1"/"v2"/"none", RAM in bytes, CPUs) from ``facts_script``'s output (unknown: None)."""
    kv = dict(ln.split("=", 1) for ln in text.splitlines() if "=" in ln)
    mem, cpus = kv.get("memtotal", "").strip(), kv.get("nproc", "").strip()
    return (kv.get("cgroup", "none").strip(), int(mem) * 1024 if mem.isdigit() else None,
            int(cpus) if cpus.isdigit() else None)


def _controllers(ram: int | None, cpu: float | None) -> list[str]:
    return [c for c, v in (("memory", ram), ("cpu", cpu)) if v is not None]


def undo_argv(address: str, origins: str, join_file: str) -> list[list[str]]:
    """The record's lines that put a host's processes back and remove its group (each safe to run twice)."""
    g = group_name(address)
    o = shlex.quote(origins)
    lines = [["rm", "-f", join_file]]
    for ctl, root in V1_ROOTS.items():
        grp = shlex.quote(f"{root}/{g}")
        # Each task back where it was (its origin for this hierarchy), else to the root; then the empty group.
        lines.append(["sh", "-c", f"if [ -d {grp} ]; then for p in $(cat {grp}/cgroup.procs); do "
                      f"o=$(awk -v p=\"$p\" -v c={ctl} '$1==p && $2==c {{print $3}}' {o} 2>/dev/null | head -n 1); "
                      f"echo \"$p\" > {shlex.quote(root)}\"$o\"/cgroup.procs 2>/dev/null || "
                      f"echo \"$p\" > {shlex.quote(root)}/cgroup.procs 2>/dev/null; done; rmdir {grp}; fi"])
    lines.append(["rm", "-f", origins])
    return lines


def apply_argv(address: str, ram: int | None, cpu: float | None, origins: str, join_file: str) -> list[list[str]]:
    """Commands that make the host's group with the limits, move its Gluster processes in (each one's origin
    written down first) and write the join file; cgroup v1."""
    g = group_name(address)
    out: list[list[str]] = []
    if ram is not None:
        out.append(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"])  # so no page stays charged elsewhere
    joins = []
    for ctl in _controllers(ram, cpu):
        root = V1_ROOTS[ctl]
        grp = f"{root}/{g}"
        out.append(["mkdir", "-p", grp])
        if ctl == "memory":
            out.append(["sh", "-c", f"echo {int(ram or 0)} > {shlex.quote(grp + '/memory.limit_in_bytes')}"])
        else:
            quota = max(1000, round(float(cpu or 0) * PERIOD_US))
            out.append(["sh", "-c", f"echo {PERIOD_US} > {shlex.quote(grp + '/cpu.cfs_period_us')} && "
                                    f"echo {quota} > {shlex.quote(grp + '/cpu.cfs_quota_us')}"])
        q = shlex.quote(grp)
        out.append(["sh", "-c", "me=$(readlink /proc/self/ns/net); "
                    f"for p in $(pgrep -x {shlex.quote(DAEMONS)}); do "
                    '[ "$(readlink /proc/$p/ns/net 2>/dev/null)" = "$me" ] || continue; '
                    f"o=$(awk -F: '$2 ~ /(^|,){ctl}(,|$)/ {{print $3}}' /proc/$p/cgroup); "
                    f"echo \"$p {ctl} $o\" >> {shlex.quote(origins)} && echo \"$p\" > {q}/cgroup.procs; done"])
        joins.append(f"echo $$ > {shlex.quote(grp + '/cgroup.procs')} 2>/dev/null")
    if joins:
        text = "; ".join(joins)
        out.append(["sh", "-c", f"umask 077; printf '%s\\n' {shlex.quote(text)} > {shlex.quote(join_file)}"])
    return out

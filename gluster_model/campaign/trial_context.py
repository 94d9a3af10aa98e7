"""What could have disturbed a trial, read on every host just before and just after it.

Per host: the processes' CPU time (from /proc/PID/stat), the 1-minute load, total and available memory. The
difference between the two snapshots names the processes outside the system under test that used half a CPU
or more in all during the trial (with what their children used: a process that starts and ends between the
snapshots is in neither, but its parent collects its CPU time when it reaps it), and how far available memory
fell; a replicated or dispersed volume's pending heal entries are counted before the trial (self-heal traffic
shares the disks and links with it). A trial with any
such disturbance is flagged, and replaced where the protocol allows re-runs. Parsing and judging are pure;
``snapshot`` is the side effect (the heal count is ``gluster.apply.heal_pending``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..remote.executor import Executor, shell

HEAVY_CPU = 0.5        # processes outside the test that used this share of one CPU in all disturbed the trial
NOTICED_CPU = 0.05     # a process below this share is not named (a shell, a cron job starting)
LOW_MEMORY = 0.05      # available memory below this share of the total after the trial
# The system under test and the driver's own tools: their CPU is part of what a trial measures (glmodel-delay:
# the emulated network's latency, hardware.delayer).
OWN = re.compile(r"^(glusterfs|glusterfsd|glusterd|glustershd|iozone|dd|fio|iperf3|ssh|sshd|sshd-session|sh|bash|"
                 r"glmodel-delay)$")
PF_KTHREAD = 0x00200000  # kernel threads (flushers, kworkers) do the trial's own I/O work: never counted
# "; true": a process that ends between the glob and its read makes cat exit 1, and the snapshot must stand.
SNAPSHOT = ("cat /proc/loadavg; getconf CLK_TCK; getconf _NPROCESSORS_ONLN; "
            "grep -E '^(MemTotal|MemAvailable):' /proc/meminfo; echo ---; cat /proc/[0-9]*/stat 2>/dev/null; true")


Proc = tuple[int, str]  # (pid, command)


@dataclass(frozen=True)
class HostSnapshot:
    load1: float
    cpus: int
    mem_total_kb: int
    mem_available_kb: int
    ticks_per_s: int
    cpu_ticks: dict[Proc, int] = field(default_factory=dict)  # utime + stime, user processes only
    child_ticks: dict[Proc, int] = field(default_factory=dict)  # cutime + cstime: children it has reaped
    parent: dict[Proc, int] = field(default_factory=dict)  # ppid

    def total(self, proc: Proc) -> int:
        """A process's CPU time with its reaped children's."""
        return self.cpu_ticks.get(proc, 0) + self.child_ticks.get(proc, 0)


def parse_snapshot(text: str) -> HostSnapshot:
    """Parse the output of ``SNAPSHOT``; a process's command may hold spaces and parentheses, so its fields
    are read after the last ')'."""
    head, _, procs = text.partition("\n---\n")
    lines = head.splitlines()
    if len(lines) < 5:
        raise ValueError("snapshot output is cut short")
    mem = {k: int(v.split()[0]) for k, v in (ln.split(":", 1) for ln in lines[3:5])}
    ticks: dict[Proc, int] = {}
    children: dict[Proc, int] = {}
    parent: dict[Proc, int] = {}
    for line in procs.splitlines():
        lp, rp = line.find("("), line.rfind(")")
        if lp < 0 or rp < lp:
            continue
        rest = line[rp + 2:].split()
        if len(rest) < 15 or not line[:lp].strip().isdecimal() or int(rest[6]) & PF_KTHREAD:
            continue
        proc = (int(line[:lp]), line[lp + 1:rp])
        ticks[proc] = int(rest[11]) + int(rest[12])  # utime, stime (fields 14, 15)
        children[proc] = int(rest[13]) + int(rest[14])  # cutime, cstime (16, 17)
        parent[proc] = int(rest[1])  # ppid (4)
    return HostSnapshot(float(lines[0].split()[0]), int(lines[2]), mem["MemTotal"], mem["MemAvailable"],
                        int(lines[1]) or 100, ticks, children, parent)


def heavy_processes(before: HostSnapshot, after: HostSnapshot, seconds: float) -> list[tuple[str, int, float]]:
    """(command, pid, share of one CPU) of each process outside the system under test that used at least
    ``NOTICED_CPU`` of a CPU between the snapshots, busiest first; one that started during the trial counts all
    its time.

    A process's share includes the children it reaped between the snapshots (a build's compilers, a test
    runner's commands: each may live less than a trial), less what those of them alive at the first snapshot
    had used by then: a long-lived child that ends during the trial brings its whole life's time to its
    parent's count, and only its last part was beside the trial. Init's reaped children are not counted (it
    reaps every orphan, the system under test's daemons among them), nor are a shell's (the trial's own
    commands run under shells): a short-lived process under either stays unseen."""
    if seconds <= 0:
        return []
    gone: dict[int, int] = {}  # ppid -> what its children that ended by the second snapshot had used at the first
    for proc in before.cpu_ticks:
        if proc not in after.cpu_ticks and proc in before.parent:
            gone[before.parent[proc]] = gone.get(before.parent[proc], 0) + before.total(proc)
    out = []
    for proc, ticks in after.cpu_ticks.items():
        pid, command = proc
        if OWN.match(command) or pid == os.getpid():  # glmodel itself, when a host is this machine (a lab)
            continue
        used_ticks = ticks - before.cpu_ticks.get(proc, 0)
        if pid != 1:
            reaped = after.child_ticks.get(proc, 0) - before.child_ticks.get(proc, 0)
            used_ticks += max(0, reaped - (gone.get(pid, 0) if proc in before.cpu_ticks else 0))
        used = used_ticks / after.ticks_per_s / seconds
        if used >= NOTICED_CPU:
            out.append((command, pid, used))
    return sorted(out, key=lambda x: -x[2])


def disturbances(before: dict[str, HostSnapshot], after: dict[str, HostSnapshot], seconds: float,
                 heal: int | None) -> list[str]:
    """One sentence per thing that disturbed the trial (empty: nothing seen). Processes count together: ten
    using a tenth of a CPU each take as much from the trial as one using a whole one."""
    out = []
    if heal:
        out.append(f"{heal} heal entr{'y' if heal == 1 else 'ies'} pending when it started")
    seen: set[tuple[int, str]] = set()
    for host in sorted(after):
        if host not in before:
            continue
        # Hosts that share a machine (a local lab) list the same processes: each is counted once.
        procs = [p for p in heavy_processes(before[host], after[host], seconds) if (p[1], p[0]) not in seen]
        seen.update((pid, command) for command, pid, _ in procs)
        total = sum(share for _, _, share in procs)
        if total >= HEAVY_CPU:
            named = ", ".join(f"{command} (pid {pid}) {share:.0%}" for command, pid, share in procs[:3])
            more = f" and {len(procs) - 3} more" if len(procs) > 3 else ""
            out.append(f"{host}: other processes used {total:.0%} of a CPU beside it: {named}{more}")
        a = after[host]
        if a.mem_total_kb and a.mem_available_kb / a.mem_total_kb < LOW_MEMORY:
            out.append(f"{host}: {a.mem_available_kb // 1024} MB of {a.mem_total_kb // 1024} MB available after it")
    return out


def summary(before: dict[str, HostSnapshot], after: dict[str, HostSnapshot], heal: int | None,
            found: list[str]) -> dict[str, object]:
    """The trial's context as stored (JSON): per host load and memory before and after, heals, findings."""
    hosts = {h: {"load1_before": before[h].load1, "load1_after": after[h].load1, "cpus": after[h].cpus,
                 "mem_available_mb_before": before[h].mem_available_kb // 1024,
                 "mem_available_mb_after": after[h].mem_available_kb // 1024,
                 "mem_total_mb": after[h].mem_total_kb // 1024}
             for h in sorted(after) if h in before}
    return {"hosts": hosts, "heal_pending": heal, "disturbed": found}


def snapshot(executor: Executor, hosts: list[str]) -> dict[str, HostSnapshot]:
    """One snapshot per host that answered (a host that did not is left out: the trial will say why)."""
    results, _ = executor.map(hosts, lambda a: parse_snapshot(executor.run(a, shell(SNAPSHOT), timeout=30).stdout),
                              timeout=30)
    return results

"""Disk baseline: fio with O_DIRECT on the filesystem under each brick path (the study's disk read/write speed).

One fio invocation per brick runs the tests one after the other (``stonewall``) on one shared file, so the
sequential write lays the file out for the reads. The bricks of one host are measured one after another (they
may share a disk). Hosts are measured at once where that cannot lower a figure (``measuring_order``): hosts on
machines of their own (by the kernel's boot id) have disks of their own; hosts that share a machine (the lab's
nodes, containers) share its disk and cores, so they are measured at once only where every brick's device has a
limit of its own, and a figure that then falls short of its device's limit (``slowed``) is measured again with
the host alone. A figure at its limit cannot have been lowered by its neighbours. On an 8-node lab at 100 MB/s
a brick, sequential figures at once and alone agree within 0.1% (``benchmarks/setting_cost.py``), while 4 KB
random ones at once fell by up to half: they are measured again alone.

Measured alone, hosts of one machine whose bricks sit on the same physical device (the same ``MAJ:MIN``, or loop
devices backed by files on it) under the same device limits and the same CPU and memory limits of their group
can only give one figure: one of them is measured and the others carry its figures (``BrickBaseline.
measured_on``; ``parallel: false`` measures every host). On the lab, whose nodes' loop devices share one disk,
that is one fio run instead of one per node for a setting without disk limits.
"""

from __future__ import annotations

import shlex
import uuid
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from pydantic import Field, field_validator

from ..config.cluster import Frozen
from ..errors import GlmodelError, ParseError
from ..hardware.limits import LIMITS_SCRIPT, parse_limits, parse_throttles, parse_under, throttle_script
from ..remote.executor import Executor, shell
from ..units import parse_size
from .engine import Measured
from .jsonout import figure, find_json_object

DiskTest = Literal["seq_write", "seq_read", "rand_read", "rand_write"]
_ORDER: tuple[DiskTest, ...] = ("seq_write", "seq_read", "rand_read", "rand_write")
_RW = {"seq_write": "write", "seq_read": "read", "rand_read": "randread", "rand_write": "randwrite"}
_EINVAL = 22
AT_LIMIT = 0.97  # a figure this close to its device's limit was not held back by neighbours
# A figure this far above its device's limit was not held to it (a limit set or changed while fio ran): on the lab
# a 16 MB/s disk once read at 22.6 MB/s in bursts of up to 53 MB/s, the only baseline above its setting by more than
# 3% in the 303 campaigns of the upgrade proofs, and it moved one answer's prediction by 41%. A throttle's own
# bursts stay within a few %.
OVER_LIMIT = 1.05
# Before fio, a brick's device is given up to ``quiet_wait`` seconds to complete no I/O for QUIET seconds: under a
# device throttle every writer shares one budget (a volume built beside the baseline, a service's own writes).
QUIET = 2.0
# A figure under a device limit short of AT_LIMIT of it is measured again, up to this many more times, and each test
# keeps its highest figure (what lowers one never raises another). Besides another writer, the throttle itself does
# it: in the lab's campaigns the first baseline after a 400-IOPS limit was set let 1 MiB sequential writes through at
# 387/s, twice what they got when measured again (192/s: the loop device splits each in two), and the random writes
# after them got 284 of 400, as if charged for what the sequential ones overdrew; measured again, 395. The read
# tests, on a budget of their own, held their limit both times.
SHORT_AGAIN = 2
_DEVICE_MARK = "glmodel-device"


class DiskSpec(Frozen):
    size: str = Field(default="256MB", description="file size per brick")
    seq_block: str = "1MB"
    rand_block: str = "4KB"
    runtime: int = Field(default=10, ge=1, le=3600, description="upper bound in seconds for each test")
    tests: list[DiskTest] = Field(default=list(_ORDER), min_length=1)
    direct: bool = Field(default=True, description="O_DIRECT; falls back to buffered I/O where refused")
    parallel: bool | Literal["auto"] = Field(
        default="auto", description="auto: hosts at once where that cannot lower a figure (machines of their own; "
        "on a shared machine, bricks whose device has a limit, re-measured alone when short of it); true: every "
        "host at once, checked the same way (both: hosts of one machine on one device under the same limits "
        "measured once); false: every host, one after another")
    quiet_wait: float = Field(default=10.0, ge=0, le=600, description="seconds to wait, before fio, for each brick's "
                              "device to complete no I/O for 2 s (another writer shares a device's limit)")
    steady: bool = Field(default=False, description="run each test for the whole runtime, looping over the file, "
                         "so a disk's (or a throttle's) initial burst does not count; set it where the file "
                         "takes under a second to move")

    @field_validator("size", "seq_block", "rand_block")
    @classmethod
    def _size(cls, v: str) -> str:
        n = parse_size(v)
        if n < 512 or n % 512:
            raise ValueError("fio sizes are multiples of 512 bytes")
        return f"{n // 1024}k" if n % 1024 == 0 else str(n)

    @field_validator("tests")
    @classmethod
    def _tests(cls, v: list[DiskTest]) -> list[DiskTest]:
        return [t for t in _ORDER if t in v]


@dataclass(frozen=True)
class DiskJob:
    test: str
    read_bps: float
    write_bps: float
    read_iops: float
    write_iops: float
    mean_latency_us: float | None  # completion latency over the job's reads and writes
    processes: int = 1  # entries fio printed under this name (numjobs without group_reporting)
    ios: int = 0  # reads and writes fio completed in this job

    @property
    def bytes_per_s(self) -> float:
        return self.read_bps + self.write_bps

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops


@dataclass
class BrickBaseline:
    host: str
    path: str
    direct: bool
    jobs: dict[str, DiskJob] = field(default_factory=dict)
    raw: str = ""
    seconds: float = 0.0
    error: str | None = None
    measured_on: str | None = None  # "host:path" whose figures these are: same device and limits, one machine
    device: DeviceIO | None = None  # the brick's device around fio (``disk_script``); None: not a block device
    runs: int = 1  # fio runs whose highest figure per test these are (``SHORT_AGAIN``)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "raw"}

    @property
    def others_ios(self) -> int | None:
        """I/Os the brick's device completed while fio ran beyond fio's own (None: not known). fio's layout and a
        device's splitting of large requests count too, so only a count far above fio's says another writer."""
        if self.device is None or not self.jobs:
            return None
        return max(0, self.device.ios - sum(j.ios for j in self.jobs.values()))

    def best_with(self, other: BrickBaseline) -> BrickBaseline:
        """Each test's highest figure of this run and ``other`` (a re-measurement of the same brick), with both
        raw outputs; an errored run gives way to the other."""
        if self.error or not self.jobs:
            return replace(other, runs=self.runs + other.runs, raw=self.raw + _AGAIN + other.raw)
        if other.error:
            return replace(self, runs=self.runs + other.runs, raw=self.raw + _AGAIN + other.raw)
        jobs = {t: max(j, other.jobs.get(t, j), key=lambda x: x.iops if t.startswith("rand") else x.bytes_per_s)
                for t, j in self.jobs.items()}
        return replace(other, jobs=jobs, raw=self.raw + _AGAIN + other.raw, seconds=self.seconds + other.seconds,
                       runs=self.runs + other.runs)

    def carried_to(self, host: str, path: str) -> BrickBaseline:
        """These figures for another brick on the same device under the same limits (``same_device``)."""
        return BrickBaseline(host, path, self.direct, dict(self.jobs),
                             f"not measured: {host}:{path} is on the device of {self.host}:{self.path}, on one "
                             "machine under the same limits; its figures are that brick's", 0.0, None,
                             f"{self.host}:{self.path}")

    def measured(self) -> list[Measured]:
        """Bytes/s and IO/s per test (the raw output once, with the first), or the brick's error."""
        out = [Measured("disk", self.host, self.path, "all", None, "B/s", self.error, self.raw)] if self.error else []
        for i, (test, job) in enumerate(self.jobs.items()):
            out += [Measured("disk", self.host, self.path, test, job.bytes_per_s, "B/s", raw=None if i else self.raw),
                    Measured("disk", self.host, self.path, f"{test}_iops", job.iops, "IO/s")]
        return out


_AGAIN = "\n--- measured again: short of its device's limit ---\n"


@dataclass(frozen=True)
class DeviceIO:
    """A brick's block device around one fio run: seconds waited for it to be quiet, whether it was, and the reads
    and writes it completed while fio ran (``/proc/diskstats``)."""

    waited_s: float
    quiet: bool
    ios: int


def device_script(path: str, wait: float) -> str:
    """Shell text defining ``io`` (the completed reads and writes of the block device under ``path``, empty where
    it has none in /proc/diskstats) and waiting up to ``wait`` s for ``QUIET`` s without any; prints
    ``glmodel-device quiet <half-seconds waited> <1|0> <ios>`` to stderr."""
    need, most = int(QUIET * 2), int(wait * 2)
    return (f"dev=$(stat -c '%Hd:%Ld' {shlex.quote(path)} 2>/dev/null); "
            "io() { awk -v d=\"$dev\" '$1\":\"$2 == d { print $4 + $8 }' /proc/diskstats 2>/dev/null; }; "
            f"w=0; q=0; p=$(io); if [ -n \"$p\" ]; then while [ $q -lt {need} ] && [ $w -lt {most} ]; do "
            "sleep 0.5; c=$(io); if [ \"$c\" = \"$p\" ]; then q=$((q+1)); else q=0; fi; p=$c; w=$((w+1)); done; "
            f"echo \"{_DEVICE_MARK} quiet $w $([ $q -ge {need} ] && echo 1 || echo 0) $p\" >&2; fi")


def parse_device_io(text: str) -> DeviceIO | None:
    """The device's figures from ``disk_script``'s stderr lines (None where the brick has no block device or a
    line is garbled: the figure is then kept without them)."""
    quiet = after = None
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 3 and words[0] == _DEVICE_MARK:
            if words[1] == "quiet" and len(words) == 5 and all(w.isdecimal() for w in words[2:]):
                quiet = (int(words[2]) / 2, words[3] == "1", int(words[4]))
            elif words[1] == "after" and words[2].isdecimal():
                after = int(words[2])
    if quiet is None or after is None:
        return None
    return DeviceIO(quiet[0], quiet[1], max(0, after - quiet[2]))


def fio_argv(directory: str, spec: DiskSpec, direct: bool, fio: str = "fio") -> list[str]:
    """One fio run of the chosen tests, in order, on one file in ``directory``; JSON on stdout."""
    argv = [fio, "--output-format=json", f"--directory={directory}", "--filename=glmodel-fio.dat",
            f"--size={spec.size}", f"--direct={int(direct)}", "--ioengine=psync", f"--runtime={spec.runtime}",
            "--invalidate=1", *(["--time_based"] if spec.steady else [])]
    for i, test in enumerate(spec.tests):
        argv += [f"--name={test}", f"--rw={_RW[test]}",
                 f"--bs={spec.seq_block if test.startswith('seq') else spec.rand_block}"]
        if i:
            argv.append("--stonewall")
        if test.endswith("write"):
            argv.append("--end_fsync=1")  # buffered writes count only once they reach the disk
    return argv


def disk_script(brick_path: str, spec: DiskSpec, direct: bool, run_id: str) -> str:
    """Run fio in a fresh directory under the brick path, once its device is quiet (``device_script``), and remove
    the directory whatever happens; the device's I/Os while fio ran go to stderr (``parse_device_io``)."""
    d = f"{brick_path.rstrip('/')}/.glmodel-fio-{run_id}"
    return (f"mkdir -p {shlex.quote(d)} || exit 1; {device_script(d, spec.quiet_wait)}; "
            f"{shlex.join(fio_argv(d, spec, direct))}; "
            f"rc=$?; [ -n \"$p\" ] && echo \"{_DEVICE_MARK} after $(io)\" >&2; rm -rf -- {shlex.quote(d)}; exit $rc")


def parse_fio_json(text: str, host: str | None = None) -> dict[str, DiskJob]:
    """Per-job bandwidth, IOPS and mean completion latency from ``fio --output-format=json``.

    fio may print warnings before the JSON; they are skipped. Truncated or garbled JSON, a missing job
    section, or a job fio marks as failed raise ParseError naming it.
    """
    data = find_json_object(text, "fio JSON output", host)
    jobs = data.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise ParseError("fio JSON output", "no 'jobs' list", host)
    out: dict[str, DiskJob] = {}
    entries: dict[str, list[list[tuple[float, float, float, int]]]] = {}
    for job in jobs:
        if not isinstance(job, dict) or "jobname" not in job:
            raise ParseError("fio JSON output", f"job entry without a name: {str(job)[:60]!r}", host)
        name = str(job["jobname"])
        if job.get("error"):
            raise ParseError("fio JSON output", f"job {name} failed with error {job['error']}"
                             f" ({errno_name(job['error'])})", host)
        try:
            sides = [_side(job["read"]), _side(job["write"])]
        except (KeyError, TypeError, ValueError):
            raise ParseError("fio JSON output", f"job {name} lacks read/write bw or iops", host) from None
        entries.setdefault(name, []).append(sides)
    # numjobs=N without group_reporting gives N entries of one name: the job's figure is their sum, as
    # group_reporting would report it, and its latency the mean over all their I/Os.
    for name, parts in entries.items():
        rbps = sum(r[0] for r, _ in parts)
        wbps = sum(w[0] for _, w in parts)
        riops = sum(r[1] for r, _ in parts)
        wiops = sum(w[1] for _, w in parts)
        ios = sum(r[3] + w[3] for r, w in parts)
        lat = sum(r[2] * r[3] + w[2] * w[3] for r, w in parts) / ios if ios else None
        out[name] = DiskJob(name, rbps, wbps, riops, wiops, lat, processes=len(parts), ios=ios)
    return out


def side_bytes_per_s(side: Mapping[str, Any]) -> float:
    """A job's read or write section's bandwidth in bytes/s: ``bw_bytes`` (fio 3), else ``bw`` in KiB/s (fio 2.x).
    KeyError, TypeError or ValueError where it has neither as a number."""
    bw = side.get("bw_bytes")
    return figure(bw) if isinstance(bw, (int, float)) else figure(side["bw"]) * 1024


def side_completion_us(side: Mapping[str, Any]) -> tuple[float, dict[str, float]]:
    """A job's read or write section's completion latency in microseconds: its mean (0 where absent) and its
    percentiles by fio's key ("99.000000"), from ``clat_ns`` (fio 3) or ``clat`` in microseconds (fio 2.x).
    TypeError or ValueError for a figure that is not one (``jsonout.figure``)."""
    ns = side.get("clat_ns")
    clat, scale = (ns, 1000.0) if isinstance(ns, dict) else (side.get("clat"), 1.0)
    if not isinstance(clat, dict):
        return 0.0, {}
    pct = clat.get("percentile") or {}
    return (figure(clat["mean"]) / scale if "mean" in clat else 0.0,
            {str(k): figure(v) / scale for k, v in pct.items()} if isinstance(pct, dict) else {})


def _side(side: dict[str, Any]) -> tuple[float, float, float, int]:
    """(bytes/s, iops, mean completion latency in us, number of I/Os) of a job's read or write section."""
    ios = int(figure(side.get("total_ios", 0) or 0))
    return side_bytes_per_s(side), figure(side["iops"]), side_completion_us(side)[0], ios


def errno_name(code: object) -> str:
    """``EINVAL: Invalid argument`` for fio's error field (garbled output: what it is not)."""
    import errno
    import os

    try:
        n = int(str(code))
        return f"{errno.errorcode.get(n, '?')}: {os.strerror(n)}"
    except (ValueError, OverflowError):
        return "not an errno"


def run_disk(executor: Executor, spec: DiskSpec, progress: Callable[[str], None] | None = None, *,
             where: dict[str, HostDisks] | None = None, beside: Callable[[], None] | None = None
             ) -> list[BrickBaseline]:
    """Measure every brick path of every server; failures are kept per brick (with raw output), not raised.

    ``where``: ``host_disks`` already read; ``beside``: another measurement runs on the hosts at once (the
    network baseline; only where every brick's device has a limit, ``limited_everywhere``): every host is then
    checked against its limits as a shared machine's are, and ``beside`` is called (it waits for that
    measurement to end) before any host is measured again alone.
    """
    by_host = brick_hosts(executor)
    if not by_host:
        raise GlmodelError(f"{executor.cluster.source}: no server has brick paths to measure")
    run_id = uuid.uuid4().hex[:10]
    # neither laying out the file nor waiting for the device to be quiet is bounded by --runtime
    limit = spec.runtime * len(spec.tests) + 300 + int(spec.quiet_wait)

    def one(address: str, path: str) -> BrickBaseline:
        if progress:
            progress(f"fio on {address}:{path}")
        direct = spec.direct
        while True:
            try:
                res = executor.run(address, shell(disk_script(path, spec, direct, run_id)), timeout=limit,
                                   check=False, device=True)
            except GlmodelError as exc:
                return BrickBaseline(address, path, direct, error=str(exc))
            base = BrickBaseline(address, path, direct, raw=res.stdout + res.stderr, seconds=res.seconds,
                                 device=parse_device_io(res.stderr))
            try:
                base.jobs = parse_fio_json(res.stdout, address)
            except ParseError as exc:
                # Some filesystems refuse O_DIRECT (EINVAL); buffered I/O with fsync is then the best measure.
                if direct and (f"error {_EINVAL} " in str(exc) or "direct" in res.stderr.lower()):
                    direct = False
                    continue
                base.error = str(exc) if res.exit_code == 0 or res.stdout.strip() else \
                    f"{address}: fio exited {res.exit_code}: {(res.stderr or res.stdout).strip()[-200:]}"
            return base

    def host(address: str) -> list[BrickBaseline]:
        return [one(address, p) for p in by_host[address]]

    where = where or host_disks(executor, by_host)
    together, alone = ([], list(by_host)) if spec.parallel is False or len(by_host) == 1 else \
        measuring_order(where, spec.tests, every_host=spec.parallel is True)
    if beside is not None:  # hosts measured together beside it, to be checked; the others after it has ended
        together, alone = [a for a in by_host if limited(where[a], spec.tests)], \
            [a for a in by_host if not limited(where[a], spec.tests)]
    out: dict[tuple[str, str], BrickBaseline] = {}

    def at_once(hosts: list[str]) -> None:
        results, errors = executor.map(hosts, host, timeout=limit * max(len(v) for v in by_host.values()) + 60)
        for a in hosts:
            for b in results.get(a) or [BrickBaseline(a, p, spec.direct, error=str(errors[a])) for p in by_host[a]]:
                out[(a, b.path)] = b

    def short(hosts: list[str], checked: bool) -> list[str]:
        return [a for a in hosts if (where[a].shared or checked) and any(
            slowed(out[(a, p)], where[a].limits.get(p), spec.tests) for p in by_host[a])]

    if together:
        at_once(together)
    again = short(together, beside is not None)
    if beside is not None:
        beside()
        if len(again) > 1:  # first at once again, as without the other measurement; then alone where still short
            if progress:
                progress(f"fio: {len(again)} host(s) short of their disk limit beside the network baseline, "
                         "measured again")
            at_once(again)
            again = short(again, False)
    if again and progress:
        progress(f"fio: {len(again)} host(s) short of their disk limit beside the others, measured again alone")
    first: dict[tuple[Any, ...], str] = {}  # the host measured for each device and its limits
    carried = 0
    for a in [*alone, *again]:
        key = same_device(where[a], by_host[a]) if spec.parallel is not False else None
        rep = first.get(key) if key is not None else None
        if rep is None:
            for b in host(a):
                out[(a, b.path)] = b
            if key is not None and not any(out[(a, p)].error for p in by_host[a]):
                first[key] = a
        else:
            for p, q in zip(by_host[rep], by_host[a]):
                out[(a, q)] = out[(rep, p)].carried_to(a, q)
            carried += 1
    if carried and progress:
        progress(f"fio: {carried} host(s) share a measured host's device and limits")
    # Where a test's figure still falls short of its device's limit, something shared the device's budget
    # (another writer, or the throttle charging for an earlier test's overdraw: ``SHORT_AGAIN``).

    def below() -> list[str]:
        return [a for a in by_host if any(short_of_limit(out[(a, p)], where[a].limits.get(p), spec.tests)
                                          for p in by_host[a])]

    for _ in range(SHORT_AGAIN):
        again = below()
        if not again:
            break
        if progress:
            progress(f"fio: {len(again)} host(s) short of their disk limit ({short_words(out, again, by_host)}), "
                     "measured again once their devices are quiet")
        for a in again:
            for b in host(a):
                out[(a, b.path)] = out[(a, b.path)].best_with(b)
    still = below() if progress else []
    if still and progress is not None:
        progress(f"fio: {len(still)} host(s) still short of their disk limit after {1 + SHORT_AGAIN} runs "
                 f"({short_words(out, still, by_host)}); each test keeps its highest figure")
    # Once more, alone, where a figure is above what its device's limit lets through: that limit did not hold.
    over = [a for a in by_host if any(over_limit(out[(a, p)], where[a].limits.get(p), spec.tests)
                                      for p in by_host[a])]
    if over and progress:
        progress(f"fio: {len(over)} host(s) measured above their disk limit, measured again")
    for a in over:
        for b in host(a):
            out[(a, b.path)] = b
    return [out[(a, p)] for a, paths in by_host.items() for p in paths]


@dataclass(frozen=True)
class HostDisks:
    """Where a host's bricks are: its machine (kernel boot id), whether another host of the cluster runs on that
    machine, each brick's device limits (``hardware.limits.parse_throttles``), the physical device under each
    brick (``hardware.limits.parse_under``) and the CPU and memory limits of the host's group (None: unknown)."""

    machine: str
    shared: bool = False
    limits: dict[str, dict[str, int]] = field(default_factory=dict)
    under: dict[str, str] = field(default_factory=dict)
    group: tuple[tuple[str, float | int | None], ...] | None = None


def host_disks(executor: Executor, by_host: dict[str, list[str]]) -> dict[str, HostDisks]:
    """Each host's machine, brick devices and limits, one command per host; a host that cannot say counts as
    sharing a machine without limits (measured alone)."""
    script = {a: f"cat /proc/sys/kernel/random/boot_id; {throttle_script(paths)}\n{LIMITS_SCRIPT}"
              for a, paths in by_host.items()}
    results, _ = executor.map(list(by_host), lambda a: executor.run(a, shell(script[a]), timeout=30, check=False))
    found: dict[str, HostDisks] = {}
    for a in by_host:
        lines = results[a].stdout.splitlines() if a in results and results[a].exit_code == 0 else []
        boot = lines[0].strip() if lines else ""
        rest = "\n".join(lines[1:])
        try:
            group: tuple[tuple[str, float | int | None], ...] | None = tuple(sorted(parse_limits(rest).items()))
        except ParseError:
            group = None  # limits it cannot say: never taken for another host's
        found[a] = HostDisks(boot or f"unknown {a}", not boot, parse_throttles(rest), parse_under(rest), group)
    machines = Counter(d.machine for d in found.values())
    return {a: replace(d, shared=d.shared or machines[d.machine] > 1) for a, d in found.items()}


def same_device(disks: HostDisks, paths: list[str]) -> tuple[Any, ...] | None:
    """What a host's figures measured alone depend on where it shares a machine: the machine, the physical device
    under each brick, each brick's device limits and the group's CPU and memory limits. Hosts with equal keys give
    one figure; None: not known well enough to take another host's (or on a machine of its own)."""
    if not disks.shared or disks.group is None or not paths or any(p not in disks.under for p in paths):
        return None
    return (disks.machine, tuple(disks.under[p] for p in paths),
            tuple(tuple(sorted((disks.limits.get(p) or {}).items())) for p in paths), disks.group)


def measuring_order(where: dict[str, HostDisks], tests: list[DiskTest], every_host: bool = False
                    ) -> tuple[list[str], list[str]]:
    """(hosts measured at once, hosts measured one after another after them). At once: hosts on machines of
    their own, and hosts sharing a machine whose every brick's device limits what each test moves (or all
    of them, ``every_host``); the latter are checked afterwards (``slowed``)."""
    together: list[str] = []
    alone: list[str] = []
    for a, d in where.items():
        (together if every_host or not d.shared or limited(d, tests) else alone).append(a)
    if len(together) == 1:
        return [], [*together, *alone]
    return together, alone


def limited(disks: HostDisks, tests: list[DiskTest]) -> bool:
    """Whether every brick device of a host has a limit on what each of ``tests`` moves."""
    return bool(disks.limits) and all(_limit(lim, t) for lim in disks.limits.values() for t in tests)


def limited_everywhere(where: dict[str, HostDisks], tests: list[DiskTest]) -> bool:
    """Whether every host's bricks are limited for ``tests`` (then a figure short of its limit is seen)."""
    return bool(where) and all(limited(d, tests) for d in where.values())


def brick_hosts(executor: Executor) -> dict[str, list[str]]:
    """Each server's brick paths, by address."""
    return {h.address: list(h.brick_paths) for h in executor.cluster.servers if h.brick_paths}


def _limit(limits: dict[str, int] | None, test: str) -> float | None:
    """What a device limit lets one test move: bytes/s for sequential tests, operations/s for random ones."""
    if not limits:
        return None
    key = ("read" if test.endswith("read") else "write") + ("_bps" if test.startswith("seq") else "_iops")
    value = limits.get(key)
    return float(value) if value else None


def held_ratios(brick: BrickBaseline, limits: dict[str, int] | None, tests: list[DiskTest]) -> list[float]:
    """Each measured test's figure over what its device's limit lets it move, for the tests that have one."""
    out = []
    for t in tests:
        cap = _limit(limits, t)
        if t in brick.jobs and cap is not None:
            job = brick.jobs[t]
            out.append((job.bytes_per_s if t.startswith("seq") else job.iops) / cap)
    return out


def over_limit(brick: BrickBaseline, limits: dict[str, int] | None, tests: list[DiskTest]) -> bool:
    """Whether a test of a brick moved more than ``OVER_LIMIT`` times what its device's limit lets through (a limit
    that did not hold while fio ran: the figure is not the device's)."""
    return any(r > OVER_LIMIT for r in held_ratios(brick, limits, tests))


def short_of_limit(brick: BrickBaseline, limits: dict[str, int] | None, tests: list[DiskTest]) -> bool:
    """Whether a test with a device limit moved less than ``AT_LIMIT`` of it (an errored brick is not: it has no
    figure to be short)."""
    return any(r < AT_LIMIT for r in held_ratios(brick, limits, tests))


def short_words(out: Mapping[tuple[str, str], BrickBaseline], hosts: list[str], by_host: dict[str, list[str]]
                ) -> str:
    """What the device of each short brick did beside fio, for the progress line."""
    words = []
    for a in hosts:
        for p in by_host[a]:
            b = out[(a, p)]
            d, others = b.device, b.others_ios
            words.append(f"{a}:{p} " + ("device not read" if d is None or others is None else
                                        f"{others} I/O beside fio's" + ("" if d.quiet else
                                                                         f", not quiet after {d.waited_s:.0f} s")))
    return "; ".join(words)


def slowed(brick: BrickBaseline, limits: dict[str, int] | None, tests: list[DiskTest]) -> bool:
    """Whether a brick measured beside other hosts of its machine may have been slowed by them: an error, or a
    test short of ``AT_LIMIT`` of its device's limit (or without one)."""
    if brick.error or not all(t in brick.jobs for t in tests) or any(_limit(limits, t) is None for t in tests):
        return True
    return short_of_limit(brick, limits, tests)

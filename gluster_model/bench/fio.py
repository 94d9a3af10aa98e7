"""Disk baseline: fio with O_DIRECT on the filesystem under each brick path (the study's disk read/write speed).

One fio invocation per brick runs the tests one after the other (``stonewall``) on one shared file, so the
sequential write lays the file out for the reads. Bricks are measured one at a time by default: bricks that
share a disk (always so on the lab) would otherwise measure each other.
"""

from __future__ import annotations

import shlex
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import Field, field_validator

from ..config.cluster import Frozen
from ..errors import GlmodelError, ParseError
from ..remote.executor import Executor, shell
from ..units import parse_size
from .engine import Measured
from .jsonout import find_json_object

DiskTest = Literal["seq_write", "seq_read", "rand_read", "rand_write"]
_ORDER: tuple[DiskTest, ...] = ("seq_write", "seq_read", "rand_read", "rand_write")
_RW = {"seq_write": "write", "seq_read": "read", "rand_read": "randread", "rand_write": "randwrite"}
_EINVAL = 22


class DiskSpec(Frozen):
    size: str = Field(default="256MB", description="file size per brick")
    seq_block: str = "1MB"
    rand_block: str = "4KB"
    runtime: int = Field(default=10, ge=1, le=3600, description="upper bound in seconds for each test")
    tests: list[DiskTest] = Field(default=list(_ORDER), min_length=1)
    direct: bool = Field(default=True, description="O_DIRECT; falls back to buffered I/O where refused")
    parallel: bool = Field(default=False, description="measure all hosts at once (bricks on separate disks)")
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

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "raw"}

    def measured(self) -> list[Measured]:
        """Bytes/s and IO/s per test (the raw output once, with the first), or the brick's error."""
        out = [Measured("disk", self.host, self.path, "all", None, "B/s", self.error, self.raw)] if self.error else []
        for i, (test, job) in enumerate(self.jobs.items()):
            out += [Measured("disk", self.host, self.path, test, job.bytes_per_s, "B/s", raw=None if i else self.raw),
                    Measured("disk", self.host, self.path, f"{test}_iops", job.iops, "IO/s")]
        return out


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
    """Run fio in a fresh directory under the brick path and remove it whatever happens."""
    d = f"{brick_path.rstrip('/')}/.glmodel-fio-{run_id}"
    return (f"mkdir -p {shlex.quote(d)} || exit 1; {shlex.join(fio_argv(d, spec, direct))}; "
            f"rc=$?; rm -rf -- {shlex.quote(d)}; exit $rc")


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
                             f" ({_errno_name(int(job['error']))})", host)
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
        out[name] = DiskJob(name, rbps, wbps, riops, wiops, lat, processes=len(parts))
    return out


def _side(side: dict[str, object]) -> tuple[float, float, float, int]:
    """(bytes/s, iops, mean completion latency in us, number of I/Os) of a job's read or write section."""
    bw = side.get("bw_bytes")
    bps = float(bw) if isinstance(bw, (int, float)) else float(side["bw"]) * 1024  # type: ignore[arg-type]
    iops = float(side["iops"])  # type: ignore[arg-type]
    ios = int(side.get("total_ios", 0) or 0)  # type: ignore[call-overload]
    clat_ns, clat_us = side.get("clat_ns"), side.get("clat")
    lat_us = 0.0
    if isinstance(clat_ns, dict) and "mean" in clat_ns:
        lat_us = float(clat_ns["mean"]) / 1000
    elif isinstance(clat_us, dict) and "mean" in clat_us:  # fio 2.x: microseconds under "clat"
        lat_us = float(clat_us["mean"])
    return bps, iops, lat_us, ios


def _errno_name(code: int) -> str:
    import errno
    import os

    return f"{errno.errorcode.get(code, '?')}: {os.strerror(code)}"


def run_disk(executor: Executor, spec: DiskSpec,
             progress: Callable[[str], None] | None = None) -> list[BrickBaseline]:
    """Measure every brick path of every server; failures are kept per brick (with raw output), not raised."""
    cluster = executor.cluster
    targets = [(h.address, p) for h in cluster.servers for p in h.brick_paths]
    if not targets:
        raise GlmodelError(f"{cluster.source}: no server has brick paths to measure")
    run_id = uuid.uuid4().hex[:10]
    limit = spec.runtime * len(spec.tests) + 300  # laying out the file is not bounded by --runtime

    def one(address: str, path: str) -> BrickBaseline:
        if progress:
            progress(f"fio on {address}:{path}")
        direct = spec.direct
        while True:
            try:
                res = executor.run(address, shell(disk_script(path, spec, direct, run_id)), timeout=limit,
                                   check=False)
            except GlmodelError as exc:
                return BrickBaseline(address, path, direct, error=str(exc))
            base = BrickBaseline(address, path, direct, raw=res.stdout + res.stderr, seconds=res.seconds)
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

    if spec.parallel:
        by_host: dict[str, list[str]] = {}
        for a, p in targets:
            by_host.setdefault(a, []).append(p)
        results, errors = executor.map(list(by_host), lambda a: [one(a, p) for p in by_host[a]], timeout=limit * 4)
        out: list[BrickBaseline] = []
        for a, paths in by_host.items():
            out += results[a] if a in results else [BrickBaseline(a, p, spec.direct, error=str(errors[a]))
                                                    for p in paths]
        return out
    return [one(a, p) for a, p in targets]

"""One trial with the dd engine: write and/or read passes over every client used, caches dropped before each
pass, one replica's brick stopped around the read pass of a degraded run. The side effects live here; the
scripts and the parser are in ``bench.dd``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..config.cluster import ClusterSpec, Host
from ..errors import GlmodelError
from ..gluster.apply import drop_caches, start_bricks, stop_one_brick
from ..remote.executor import Executor
from ..units import parse_size
from .dd import (DdPass, count_for, local_roots, make_workdirs, reap, remove_dirs, run_dd_pass, run_prepare,
                       workdirs)
from .engine import EngineResult, TrialRequest, spread, used_clients
from .workload import Workload

RUN_DIR = "glmodel-dd"
DD_STARTUP_S = 0.5


@dataclass
class DdTrial:
    passes: list[DdPass] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def argv(self) -> list[str]:
        """What ran, for the record: one line per pass and client."""
        return [f"{p.op}@{a}: {s}" for p in self.passes for a, s in p.scripts.items()]

    @property
    def raw(self) -> str:
        return "\n".join([*self.notes, *(f"# {p.op}\n{p.raw}" for p in self.passes)])

    @property
    def values(self) -> dict[str, float]:
        """Aggregate kB/s per test (sum over readers), only when every reader succeeded."""
        return {} if self.error else {p.op: p.kbps for p in self.passes}

    def measurements(self) -> list[tuple[str, float, str, float | None, float | None]]:
        """Per test the aggregate with the slowest and fastest reader's rate; per reader its time in seconds
        (``read_time.0``, ``read_time.1``, ...: numbered over the clients in cluster-file order)."""
        if self.error:
            return []
        out: list[tuple[str, float, str, float | None, float | None]] = []
        for p in self.passes:
            rates = [r.kbps for r in p.readers]
            out.append((p.op, p.kbps, "kB/s", min(rates), max(rates)))
            out += [(f"{p.op}_time.{k}", r.seconds, "s", None, None) for k, r in enumerate(p.readers)]
        return out


def _roots(cluster: ClusterSpec, clients: list[Host], points: dict[str, str], workload: Workload) -> dict[str, str]:
    return local_roots(cluster, clients) if workload.target == "local" else {h.address: points[h.address]
                                                                               for h in clients}


def run_dd_trial(ex: Executor, volume: str, workload: Workload, points: dict[str, str],
                 *, drop: bool, timeout: float) -> DdTrial:
    """Run the workload's tests (write before read) as dd passes. A read without a write in the same trial reads
    files prepared (once, kept between trials) before the caches are dropped."""
    cluster = ex.cluster
    clients = used_clients(cluster, points, workload)
    roots = _roots(cluster, clients, points, workload)
    dirs = workdirs(clients, roots, RUN_DIR)
    per_client = spread(workload.threads, clients)
    size, block = parse_size(workload.file_size), parse_size(workload.record_size)
    count = count_for(size, block)
    trial = DdTrial()
    t0 = time.monotonic()
    reap(ex, dirs)  # a dd a killed earlier glmodel left behind would share the disk with this trial
    try:
        make_workdirs(ex, clients, roots, RUN_DIR, shared=workload.target != "local")
        for op in ("write", "read"):
            if op not in workload.tests:
                continue
            if op == "read" and "write" not in workload.tests:
                run_prepare(ex, dirs, per_client, count * block, timeout)
            if drop:
                drop_caches(ex)
            if op == "read" and workload.degraded:
                brick = stop_one_brick(ex, volume)
                trial.notes.append(f"# degraded: stopped brick {brick.host}:{brick.path} (pid {brick.pid})")
                try:
                    trial.passes.append(run_dd_pass(ex, op, dirs, per_client, block, count, workload.sync, timeout))
                finally:
                    start_bricks(ex, volume)
            else:
                trial.passes.append(run_dd_pass(ex, op, dirs, per_client, block, count, workload.sync, timeout))
            errors = trial.passes[-1].errors
            if errors:
                trial.error = "; ".join(errors[:3]) + (f" (+{len(errors) - 3} more)" if len(errors) > 3 else "")
                break
    except GlmodelError as exc:
        trial.error = str(exc)
        reap(ex, dirs)
    except BaseException:  # Ctrl-C, SIGTERM: the remote dd processes would run on without us
        reap(ex, dirs)
        raise
    trial.seconds = time.monotonic() - t0
    return trial


def remove_dd_files(ex: Executor, workload: Workload, points: dict[str, str]) -> None:
    """Remove a run's dd files (from the local directories too, which no volume teardown would clear)."""
    cluster = ex.cluster
    clients = used_clients(cluster, points, workload)
    remove_dirs(ex, clients, _roots(cluster, clients, points, workload), RUN_DIR)



class DdEngine:
    """dd as a trial engine: one process per thread, each one's time kept (the study's read-cost experiments)."""

    name = "dd"

    def run(self, request: TrialRequest) -> EngineResult:
        r = request
        dd = run_dd_trial(r.executor, r.volume, r.workload, dict(r.points), drop=r.drop_caches,
                          timeout=r.timeout)
        return EngineResult(metrics=dd.values, measurements=dd.measurements(), raw={"dd": dd.raw}, argv=dd.argv,
                            seconds=dd.seconds, error=dd.error)

    def after_run(self, request: TrialRequest) -> None:
        # dd's files outlive trials (reads reuse them); local ones would outlive the volume too
        remove_dd_files(request.executor, request.workload, dict(request.points))

    def overhead_seconds(self, workload: Workload, first_test_s: float) -> float:
        return DD_STARTUP_S * len(workload.tests)  # one SSH round trip per pass

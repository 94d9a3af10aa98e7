"""fio as a trial engine, the side effects: a ``fio --server`` on each client used, one local ``fio --client``
run per trial (one more after each test glmodel times itself: the listing, the stats, the reads; two around
the end of every client's write for a shared read: ``fio_jobs.fio_runs``; a layout run before them when the first
metric reads or overwrites files: ``fio_jobs.layout_metrics``), and the cleanup.

Each server is bound to its client's own cluster address and lives for one trial only: a fio server takes jobs
from anyone who reaches its port, so none is left listening after a trial, whatever ended it (its end, a failure,
a timeout, Ctrl-C or SIGTERM of glmodel). The first client makes every client's directory through its own mount
(one shared volume: clients making their own raced on the shared run directory) and removes them at the end.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from ..config.cluster import Host
from ..errors import GlmodelError, ParseError
from ..gluster.apply import drop_caches
from ..remote.executor import Executor, shell
from ..units import parse_size
from .engine import EngineResult, TrialRequest, spread, used_clients
from .fio_jobs import (COLD_WAIT_S, PORT, TIMED, FioFigures, check_layout, client_argv, cold_script, fio_runs,
                       job_file, layout_metrics, listing_script, parse_client_json, parse_timed, server_address,
                       timed_before)
from .metrics import UNITS
from .workload import Workload

LISTEN_WAIT_S = 5.0
FIO_STARTUP_S = 1.0  # servers started, one client run, servers ended (benchmarks/fio_overhead.py measures it)
FILE_OP_S = 0.001  # one small-file operation through FUSE and the network (lab: about a millisecond)


def _pattern(address: str, port: int) -> str:
    # a server of this address and port, and the job processes it forks (they keep its command line)
    return f"^fio --server={re.escape(server_address(address, port))}( |$)"


def _pidfile(address: str, port: int) -> str:
    # one per address: hosts may share /tmp (containers, the lab's nodes)
    return shlex.quote(f"/tmp/glmodel-fio-{address}-{port}.pid")


def start_script(address: str, port: int, dirs: list[str]) -> str:
    """End a server a killed glmodel left on this address and port, make ``dirs``, start a server bound to the
    address and wait until it listens (fio's daemon returns before its socket is open). A port another program
    holds is an error naming it: fio's client would otherwise talk to that program."""
    pid = _pidfile(address, port)
    mk = f"mkdir -p -- {' '.join(shlex.quote(d) for d in dirs)} && " if dirs else ""
    listening = (f"grep -qiE {shlex.quote(f':{port:04X} [0-9A-F:]+ 0A')} /proc/net/tcp /proc/net/tcp6 "
                 "2>/dev/null")
    tries = int(LISTEN_WAIT_S / 0.02)
    return (f"pkill -KILL -f {shlex.quote(_pattern(address, port))}; rm -f {pid}; "
            f"for i in $(seq 50); do {listening} || break; sleep 0.02; done; "
            f"if {listening}; then echo 'port {port} is held by another program (fio --server needs it)' >&2; "
            f"exit 1; fi; {mk}"
            f"fio --server={shlex.quote(server_address(address, port))} --daemonize={pid} || exit 1; "
            f"for i in $(seq {tries}); do {listening} && exit 0; sleep 0.02; done; "
            f"echo 'fio --server did not listen within {LISTEN_WAIT_S:g} s' >&2; exit 1")


def stop_script(address: str, port: int, remove: str | None) -> str:
    """End this client's server (and its jobs); the first client also removes the run directory."""
    rm = f"; rm -rf -- {shlex.quote(remove)}" if remove else ""
    return f"pkill -KILL -f {shlex.quote(_pattern(address, port))}; rm -f {_pidfile(address, port)}{rm}; true"


def _run_client(argv: list[str], timeout: float) -> tuple[str, str, int]:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise GlmodelError("fio is not installed on this machine (its client runs here); run scripts/setup.sh") \
            from None
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        raise _Failed(f"fio did not finish within {timeout:.0f} s", out) from None
    return done.stdout, done.stderr, done.returncode


class _Failed(Exception):
    def __init__(self, message: str, raw: str = "", host: str | None = None) -> None:
        super().__init__(message)
        self.raw, self.host = raw, host


class FioEngine:
    """fio as a distributed trial engine: the throughput metrics with IOPS and latency percentiles, and the
    small-file rates (files/s) of the ``file_*`` tests; each metric is the sum over clients."""

    name = "fio"

    def __init__(self, port: int = PORT) -> None:
        self.port = port

    def run(self, request: TrialRequest) -> EngineResult:
        r, w, ex = request, request.workload, request.executor
        clients = used_clients(ex.cluster, dict(r.points), w)
        per_client = spread(w.threads, clients)
        clients = [h for h in clients if h.address in per_client]
        run_dir = f"glmodel-fio-{uuid.uuid4().hex[:8]}"
        first = clients[0]
        dirs = {h.address: f"{r.points[h.address]}/{run_dir}/{h.name}" for h in clients}
        # the first client's directory through each client's own mount (another host's mount path is not this
        # host's: on the lab's nodes, which share one filesystem, it would read through that node's mount)
        shared = {h.address: f"{r.points[h.address]}/{run_dir}/{first.name}" for h in clients}
        # made through the first client's mount, for every client: one shared volume
        made = [f"{r.points[first.address]}/{run_dir}/{h.name}" for h in clients]
        raw: dict[str, str] = {}
        argvs: list[list[str]] = []
        metrics: dict[str, float] = {}
        measurements: list[tuple[str, float, str, float | None, float | None]] = []
        error: str | None = None
        host: str | None = None
        if r.drop_caches:
            drop_caches(ex)
        try:
            t0 = time.monotonic()
            ex.run_many([h.address for h in clients], lambda a: shell(start_script(
                a, self.port, made if a == first.address else [])), timeout=60)
            with tempfile.TemporaryDirectory(prefix="glmodel-fio-") as tmp:
                first_read = layout_metrics(w)
                if first_read:  # every client's files laid out before any client times a job
                    self._fio(Path(tmp), "fio_layout", w, clients, dirs, shared, per_client, first_read,
                              r.timeout, raw, argvs, layout=True)
                for part, metric_list in fio_runs(w):
                    timed = timed_before(part)
                    if timed is not None:
                        figure = self._timed(ex, timed, clients, dirs, per_client, w.files,
                                             parse_size(w.file_size))
                        raw[TIMED[timed][0]] = "\n".join(f"{a}: {v:.1f} files/s" for a, v in figure.items())
                        rates = list(figure.values())
                        metrics[timed] = sum(rates)
                        measurements.append((timed, sum(rates), UNITS[timed], min(rates), max(rates)))
                    if not metric_list:
                        continue
                    figures = self._fio(Path(tmp), part, w, clients, dirs, shared, per_client, metric_list,
                                        r.timeout, raw, argvs)
                    metrics.update(figures.totals())
                    measurements += figures.measurements()
        except _Failed as exc:
            error, host = str(exc), exc.host
            if exc.raw:
                raw.setdefault("fio", exc.raw)
        except GlmodelError as exc:
            error, host = str(exc), getattr(exc, "host", None)
        finally:
            ex.map([h.address for h in clients], lambda a: ex.run(a, shell(stop_script(
                a, self.port, f"{r.points[a]}/{run_dir}" if a == first.address else None)),
                timeout=600 if a == first.address else 30, check=False), timeout=610)
        seconds = time.monotonic() - t0
        order = [m for m in w.expected_metrics() if m in metrics]
        return EngineResult(metrics={} if error else {m: metrics[m] for m in order},
                            measurements=[] if error else measurements, raw=raw,
                            argv=[" ".join(shlex.quote(a) for a in argv) for argv in argvs], seconds=seconds,
                            error=error, host=host)

    def _fio(self, tmp: Path, part: str, w: Workload, clients: list[Host], dirs: dict[str, str],
             shared: dict[str, str], per_client: dict[str, int], metrics: list[str], timeout: float,
             raw: dict[str, str], argvs: list[list[str]], layout: bool = False) -> FioFigures:
        files: dict[str, str] = {}
        for h in clients:
            path = tmp / f"{part}-{h.name}.fio"
            path.write_text(job_file(w, dirs[h.address], per_client[h.address], metrics, shared[h.address],
                                     layout=layout))
            files[h.address] = str(path)
        argv = client_argv(files, self.port)
        argvs.append(argv)
        raw[f"{part}_jobs"] = "\n".join(f"# {a}\n{Path(p).read_text()}" for a, p in files.items())
        out, err, rc = _run_client(argv, timeout)
        raw[part] = out + (("\n[stderr]\n" + err) if err.strip() else "")
        try:
            if layout:
                check_layout(out, metrics, [h.address for h in clients])
                return FioFigures({})
            return parse_client_json(out, metrics, [h.address for h in clients], parse_size(w.file_size))
        except ParseError as exc:
            refused = next((h.address for h in clients if h.address in err), None)
            why = f"; fio said: {' '.join(err.split())[:300]}" if err.strip() else f" (fio exit {rc})"
            raise _Failed(f"{exc}{why}", raw[part], exc.host or refused) from None

    def _timed(self, ex: Executor, test: str, clients: list[Host], dirs: dict[str, str],
               per_client: dict[str, int], files: int, file_size: int) -> dict[str, float]:
        """A test glmodel times itself (the listing, the stats or the reads): each client over its own small-file
        directories, all clients at once; files/s per client."""
        scripts = {h.address: (listing_script(dirs[h.address], per_client[h.address]) if test == "file_list" else
                               cold_script(dirs[h.address], per_client[h.address], files, file_size, test))
                   for h in clients}
        results = ex.run_many(list(scripts), lambda a: shell(scripts[a]), timeout=600)
        return {a: parse_timed(res.stdout, a, files * per_client[a], test.replace("_", " "))
                for a, res in results.items()}

    def after_run(self, request: TrialRequest) -> None:
        pass  # each trial removes its own directory and ends its servers

    def overhead_seconds(self, workload: Workload, first_test_s: float) -> float:
        # servers up and down, and a file operation's round trips per small file (the data is counted apart)
        files = workload.files * workload.threads * len(workload.file_tests)
        cold = COLD_WAIT_S * len({"file_stat", "file_read"} & set(workload.tests))
        runs = len(fio_runs(workload)) + (1 if layout_metrics(workload) else 0)
        return FIO_STARTUP_S * runs + files * FILE_OP_S + cold

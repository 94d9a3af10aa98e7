"""Bootstrap refits of boosting models spread over this machine's spare cores.

Hundreds of fits of tens of rows are Python-bound in scikit-learn (about 10 ms each), so threads do not help
and worker processes do. The workers are fresh interpreters (spawned), never forked from this process, which
has fitted trees by then (every load of a model file does) and whose OpenMP runtime a forked child can hang
in; a fork server would be clean too, but its first task waits for it to import scikit-learn. The fits are
deterministic (no subsampling, a fixed seed, one thread each), so where they run changes no figure: the
workers only save wall time, and any failure of theirs falls back to fitting here.

Workers exist inside a :func:`workers` block (a command that refits hundreds of times opens one); outside one,
every fit runs in this process.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

MAX_WORKERS = 3
PIECE = 12  # fits handed over at a time: about 0.15 s of work, small enough to balance, large enough to hand over
_pool: ProcessPoolExecutor | None = None


@dataclass(frozen=True)
class RefitJob:
    """``template`` (an unfitted estimator) to be fitted on each of ``resamples`` (row indices into ``x`` and
    ``target``), each fit then predicting ``rows`` (a model matrix)."""

    template: Any
    x: Any
    target: Any
    resamples: Sequence[Any]
    rows: Any


Fits = tuple[list[Any], Any]  # the fitted estimators, and their predictions of the job's rows (fits x rows)


def spare_cores() -> int:
    """Cores this process may run on beyond its own (the workers a block gets, at most ``MAX_WORKERS``): run
    under ``taskset -c 0`` to keep every fit in one process."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(0, min(MAX_WORKERS, cores - 1))


@contextmanager
def workers() -> Iterator[None]:
    """Worker processes on the spare cores for the refits asked inside the block: started now, so that their
    import of scikit-learn overlaps the caller's loading of a model file, and ended with it. Nested blocks
    share the outer one's workers."""
    global _pool
    if _pool is not None or spare_cores() == 0:
        yield
        return
    import multiprocessing

    pool = ProcessPoolExecutor(max_workers=spare_cores(), mp_context=multiprocessing.get_context("spawn"))
    try:
        for _ in range(spare_cores()):  # a pool starts its processes at its first tasks
            pool.submit(_warm)
        _pool = pool
    except (OSError, RuntimeError):  # no process could be started: every fit runs here
        _stop(pool)
    try:
        yield
    finally:
        ended, _pool = _pool, None
        if ended is not None:
            _stop(ended)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Let the workers go without waiting: every task was answered or cancelled, so they are ended rather than
    left to unload scikit-learn (a third of a second this process would wait for at its exit)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if callable(terminate):
        terminate()
        return
    processes = list((getattr(pool, "_processes", None) or {}).values())  # a shut-down pool forgets them
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
    # The pool's manager thread closes its wake-up pipe once it sees the workers gone; waiting for it (a few ms)
    # keeps the interpreter's exit hook from writing to that pipe as it closes, which printed a traceback after
    # a one-line error (a bad --metric) on a busy machine.
    if manager is not None:
        manager.join(timeout=5)


def _warm() -> None:
    """A worker's first task: the estimator's module imported before any work arrives."""
    import sklearn.ensemble  # noqa: F401


def _fit_piece(template: Any, x: Any, target: Any, resamples: Sequence[Any], rows: Any) -> Fits:
    """``template`` fitted on each resample's rows and each fit's prediction of ``rows``, one thread each:
    hundreds of fits of tens of rows, where an unbounded OpenMP pool spent 32 s of CPU for one call and fought
    every other process for the cores."""
    import numpy as np
    from sklearn.base import clone
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        fitted = [clone(template).fit(x[r], target[r]) for r in resamples]
        if len(rows) == 0:
            return fitted, np.empty((len(fitted), 0))
        return fitted, np.array([e.predict(rows) for e in fitted])


def fit_all(jobs: Sequence[RefitJob]) -> list[Fits]:
    """Every job's fits, in its resamples' order, and their predictions.

    The jobs' resamples are cut into pieces; the workers are handed pieces from the front, two each at a time,
    while this process fits from the back, so a worker still starting (or a core another program holds)
    delays the answer by no more than its two pieces."""
    import numpy as np

    pieces = [(j, list(job.resamples[i:i + PIECE])) for j, job in enumerate(jobs)
              for i in range(0, len(job.resamples), PIECE)]

    def fit(k: int) -> Fits:
        job = jobs[pieces[k][0]]
        return _fit_piece(job.template, job.x, job.target, pieces[k][1], job.rows)

    pool = _pool
    ends = _Ends(len(pieces))
    futures: dict[int, Future[Fits] | None] = {}

    def feed(_: object = None) -> None:  # a worker's piece done (or none yet): hand it the next from the front
        k = ends.front()
        if k is None:
            return
        future = None
        try:
            future = _submit(pool, jobs[pieces[k][0]], pieces[k][1])
        finally:  # recorded whatever happened, so the wait below ends (a piece without a future is fitted here)
            futures[k] = future
            ends.handed()
        if future is not None:
            future.add_done_callback(feed)

    if pool is not None:
        for _ in range(2 * spare_cores()):
            feed()
    done: dict[int, Fits] = {}
    while (k := ends.back()) is not None:
        done[k] = fit(k)
    ends.wait_handed()  # a piece taken from the front has its future before it is read
    for k in range(len(pieces)):
        done[k] = done[k] if k in done else _result(futures[k]) or fit(k)
    out: list[Fits] = []
    for j in range(len(jobs)):
        parts = [done[k] for k in range(len(pieces)) if pieces[k][0] == j]
        out.append(([e for fitted, _ in parts for e in fitted],
                    np.concatenate([p for _, p in parts]) if parts else np.empty((0, len(jobs[j].rows)))))
    return out


class _Ends:
    """Indices 0..n-1 taken from either end, each once, by threads (this one and the pool's); one taken from the
    front is pending until ``handed`` says the taker has recorded it."""

    def __init__(self, n: int) -> None:
        self._cond, self._low, self._high, self._pending = threading.Condition(), 0, n - 1, 0

    def front(self) -> int | None:
        with self._cond:
            if self._low > self._high:
                return None
            self._low += 1
            self._pending += 1
            return self._low - 1

    def back(self) -> int | None:
        with self._cond:
            if self._low > self._high:
                return None
            self._high -= 1
            return self._high + 1

    def handed(self) -> None:
        with self._cond:
            self._pending -= 1
            self._cond.notify_all()

    def wait_handed(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: self._pending == 0)


def _submit(pool: ProcessPoolExecutor | None, job: RefitJob, resamples: Sequence[Any]) -> Future[Fits] | None:
    if pool is None:
        return None
    try:
        return pool.submit(_fit_piece, job.template, job.x, job.target, resamples, job.rows)
    except RuntimeError:  # the block ended, or an earlier worker's death broke the pool
        return None


def _result(future: Future[Fits] | None) -> Fits | None:
    """A worker's fits, or None when it failed (the piece is then fitted here: the same trees)."""
    if future is None:
        return None
    try:
        return future.result()
    except Exception:  # noqa: BLE001 - a dead worker, a pickling failure: never worse than fitting here
        return None

"""Bootstrap refits spread over worker processes: the same trees and predictions as in one process, in order,
whatever the workers do (start late, die), and no worker left behind when the block ends."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from gluster_model.model import refit_pool
from gluster_model.model.refit_pool import RefitJob, fit_all


def _jobs() -> list[RefitJob]:
    """Two models' refits (different targets, resample counts not a multiple of a piece), a categorical input."""
    rng = np.random.default_rng(3)
    x = np.column_stack([rng.integers(0, 3, 60).astype(float), rng.normal(size=60), rng.normal(size=60)])
    rows = np.array([[0.0, 0.0, 0.0], [1.0, 0.5, -0.5], [2.0, -1.0, 1.0]])
    jobs = []
    for k, n in ((0, 41), (1, 53)):
        target = x[:, 1] * (k + 1) + (x[:, 0] == 2) + rng.normal(scale=0.1, size=60)
        template = HistGradientBoostingRegressor(max_iter=10, max_leaf_nodes=4, min_samples_leaf=3,
                                                 categorical_features=[True, False, False], random_state=k)
        resamples = [rng.integers(0, 60, 60) for _ in range(n)]
        jobs.append(RefitJob(template, x, target, resamples, rows))
    return jobs


def _serial(jobs: list[RefitJob]) -> list[np.ndarray]:
    """Each job fitted here by hand, one resample after another: what the pool must reproduce."""
    out = []
    for job in jobs:
        preds = []
        for r in job.resamples:
            est = HistGradientBoostingRegressor(**job.template.get_params()).fit(job.x[r], job.target[r])
            preds.append(est.predict(job.rows))
        out.append(np.array(preds))
    return out


@pytest.fixture
def one_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refit_pool, "spare_cores", lambda: 1)


def test_workers_give_the_same_fits_in_the_same_order_as_one_process(one_worker: None) -> None:
    jobs = _jobs()
    expected = _serial(jobs)
    with refit_pool.workers():
        pool = refit_pool._pool
        assert pool is not None
        got = fit_all(jobs)
        # the workers did part of it: a piece fitted in another process reports that process's pid
        pids = {f.result() for f in [pool.submit(_pid) for _ in range(2)]}
    assert pids and _pid() not in pids
    for (fitted, predicted), want, job in zip(got, expected, jobs):
        assert len(fitted) == len(job.resamples)
        np.testing.assert_array_equal(predicted, want)
        np.testing.assert_array_equal(np.array([e.predict(job.rows) for e in fitted]), want)


def test_a_dead_worker_costs_nothing_but_time(one_worker: None) -> None:
    jobs = _jobs()
    expected = _serial(jobs)
    with refit_pool.workers():
        pool = refit_pool._pool
        assert pool is not None
        pool.submit(_pid).result()  # started
        for process in list(pool._processes.values()):  # type: ignore[attr-defined]
            process.kill()
            process.join()
        got = fit_all(jobs)
    for (_, predicted), want in zip(got, expected):
        np.testing.assert_array_equal(predicted, want)


def test_the_block_ends_its_workers_and_outside_one_every_fit_is_here(one_worker: None) -> None:
    with refit_pool.workers():
        pool = refit_pool._pool
        assert pool is not None
        pool.submit(_pid).result()
        processes = list(pool._processes.values())  # type: ignore[attr-defined]
        with refit_pool.workers():  # nested: the outer block's workers
            assert refit_pool._pool is pool
    assert refit_pool._pool is None
    # by pid: the pool's own thread may reap a worker first, and then its Process object cannot tell
    assert all(_gone(p.pid) for p in processes)
    jobs = _jobs()[:1]
    np.testing.assert_array_equal(fit_all(jobs)[0][1], _serial(jobs)[0])


def test_no_spare_core_no_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refit_pool, "spare_cores", lambda: 0)
    with refit_pool.workers():
        assert refit_pool._pool is None


def _pid() -> int:
    return os.getpid()


def _gone(pid: int, wait: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (exited or a zombie) within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False

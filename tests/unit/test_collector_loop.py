"""The collector's loop without a lab: resume after an interrupt, retry of a failed run, outlier and disturbed
re-runs, a host that fails. The executor records commands and replays outputs (a small stateful Gluster
answers volume commands), the engine returns scripted trials, and the store is a real SQLite file. The lab's
integration tests run the same loop on real parts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gluster_model.campaign.collector import Collector
from gluster_model.campaign.progress import CampaignSummary
from gluster_model.config.cluster import ClusterSpec, cluster_from_data
from gluster_model.errors import GlmodelError
from gluster_model.plan.file import PlanFile, expand
from gluster_model.hardware.facts import HostFacts
from gluster_model.store.identity import StoredRun
from gluster_model.store.store import Store, open_store
from gluster_model.units import parse_size

from ..fakes import FakeEngine, FakeExecutor, FakeGluster, FakeProcs

HOSTS = [f"10.9.0.{i}" for i in (1, 2, 3)]
OK = {"write": 1000.0}


def _cluster() -> ClusterSpec:
    return cluster_from_data({"name": "fake", "servers": [{"host": h, "brick_paths": ["/b"]} for h in HOSTS],
                              "clients": HOSTS}, "fake.yaml", Path("."))


def _plan(**protocol: Any) -> PlanFile:
    return PlanFile.model_validate({
        "name": "loop",
        "factors": {"layout": "distribute", "record_size": ["16KB", "64KB"], "file_size": "1MB", "threads": 3},
        "workload": {"tests": ["write"]},
        "protocol": {"warmups": 0, "repetitions": 2, "outlier_rule": "none", **protocol},
        "baselines": {"network": False, "disk": False},
    })


def _facts() -> dict[str, HostFacts]:
    return {h: HostFacts(ram_bytes=8 << 30, cpus=2) for h in HOSTS}


def _lab(busy: dict[str, set[int]] | None = None) -> tuple[FakeExecutor, FakeGluster]:
    ex = FakeExecutor()
    gluster = FakeGluster(ex)
    FakeProcs(ex, busy)
    return ex, gluster


def collect(store: Store, ex: FakeExecutor, engine: FakeEngine, plan: PlanFile | None = None,
            **kw: Any) -> CampaignSummary:
    plan = plan or _plan()
    cluster = _cluster()
    ex.cluster = cluster
    return Collector(ex, plan, expand(plan, cluster), store, facts_fn=_facts,
                     engines={"iozone": engine}, **kw).run()


def _runs(store: Store) -> list[StoredRun]:
    campaign = store.campaign("loop@fake")
    assert campaign is not None
    return sorted(store.runs(int(campaign.id)), key=lambda r: r.id)


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return open_store(tmp_path / "s.db")


def test_every_run_is_measured_stored_and_its_volume_removed(store: Store) -> None:
    (ex, gluster), engine = _lab(), FakeEngine([OK])
    summary = collect(store, ex, engine)
    assert (summary.done, summary.failed, summary.trials) == (2, 0, 4)
    runs = _runs(store)
    assert [(r.status, r.attempts) for r in runs] == [("done", 1), ("done", 1)]
    assert [len(store.trials(r.id)) for r in runs] == [2, 2]
    # One volume for both runs (they differ only in the workload), created once and removed at the end.
    assert len(gluster.created) == 1 and gluster.volumes == {}
    assert engine.after_runs == 2 and all(r.drop_caches and r.startup_timeout == 60 + 1.5 for r in engine.requests)
    assert sorted({parse_size(r.workload.record_size) for r in engine.requests}) == [16 << 10, 64 << 10]


def test_an_interrupted_campaign_resumes_with_the_interrupted_run_only(store: Store) -> None:
    ex, gluster = _lab()
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C during the second run's first trial
        collect(store, ex, FakeEngine([OK, OK, KeyboardInterrupt()]))
    first = _runs(store)
    assert [(r.status, r.error) for r in first] == [("done", None), ("failed", "interrupted")]
    assert gluster.volumes == {}  # the volume is torn down on the way out, too

    engine = FakeEngine([OK])
    summary = collect(store, ex, engine)
    assert (summary.already_done, summary.done, summary.trials) == (1, 1, 2)
    assert [parse_size(r.workload.record_size) for r in engine.requests] == [first[1].features["record_size"]] * 2
    assert [(r.status, r.attempts) for r in _runs(store)] == [("done", 1), ("done", 2)]

    again = FakeEngine([OK])
    calls = len(ex.calls)
    summary = collect(store, ex, again)
    assert (summary.already_done, summary.done) == (2, 0) and again.requests == []
    assert ex.calls[calls:] == []  # nothing done: not even a volume looked at


def test_a_failed_trial_fails_its_run_with_the_host_and_the_campaign_goes_on_then_retries_it(store: Store) -> None:
    ex, _ = _lab()
    summary = collect(store, ex, FakeEngine(["iozone's child on 10.9.0.2 ended early (ssh exit 255)", OK]))
    assert (summary.done, summary.failed) == (1, 1)
    failed, done = _runs(store)
    assert failed.status == "failed" and done.status == "done"
    assert failed.error_host == "10.9.0.2" and "ended early" in failed.error

    engine = FakeEngine([OK])
    summary = collect(store, ex, engine)
    assert (summary.already_done, summary.done, len(engine.requests)) == (1, 1, 2)
    assert [(r.status, r.attempts) for r in _runs(store)] == [("done", 2), ("done", 1)]


def test_fail_fast_stops_at_the_first_failed_run(store: Store) -> None:
    ex, gluster = _lab()
    with pytest.raises(GlmodelError, match="disk full"):
        collect(store, ex, FakeEngine(["disk full"]), fail_fast=True)
    assert [r.status for r in _runs(store)] == ["failed", "pending"] and gluster.volumes == {}


def test_an_outlier_is_flagged_and_measured_again(store: Store) -> None:
    ex, _ = _lab()
    plan = _plan(repetitions=3, outlier_rule="rsd", rsd_max=0.1, max_reruns=2)
    engine = FakeEngine([OK, OK, {"write": 100.0}, OK, OK, OK, OK])
    summary = collect(store, ex, engine, plan)
    assert summary.done == 2 and len(engine.requests) == 7  # 3 + 1 replacement, then 3
    trials = store.trials(_runs(store)[0].id)
    assert [t.outlier for t in trials] == [False, False, True, False]
    assert "RSD" in trials[2].flagged_because


def test_a_disturbed_trial_is_flagged_and_measured_again(store: Store) -> None:
    ex, _ = _lab(busy={"10.9.0.3": {0}})  # something used a CPU on node 3 during the first trial
    summary = collect(store, ex, FakeEngine([OK]))
    assert summary.done == 2 and summary.trials == 5
    trials = store.trials(_runs(store)[0].id)
    assert [t.outlier for t in trials] == [True, False, False]
    assert trials[0].flagged_because.startswith("disturbed: 10.9.0.3: other processes used")
    assert "stress (pid 4242)" in trials[0].flagged_because


def test_a_host_that_cannot_create_the_volume_fails_each_run_of_it_by_name(store: Store) -> None:
    ex, _ = _lab()
    ex.fail(r"rm -rf -- /b/\S+ && mkdir", host="10.9.0.2", message="connection lost")
    engine = FakeEngine([OK])
    summary = collect(store, ex, engine)
    assert (summary.done, summary.failed) == (0, 2) and engine.requests == []
    assert [r.error_host for r in _runs(store)] == ["10.9.0.2", "10.9.0.2"]
    assert all("connection lost" in r.error for r in _runs(store))

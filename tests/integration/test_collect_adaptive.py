"""An adaptive plan on the real lab: rounds chosen by the committee, every decision in the store, stopped by its
rule before the budget, and resumed after a kill -9 without running any configuration twice."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gluster_model.lab import LabState

from .conftest import glmodel

PLAN = {
    "name": "adaptci",
    # dd runs take a second or two, so a whole adaptive campaign stays short; record size dominates throughput.
    "factors": {"engine": "dd", "record_size": ["4KB", "64KB", "1MB"], "file_size": ["1MB", "8MB"],
                "threads": [1, 2, 3]},
    "design": {"type": "adaptive", "initial": 5, "budget": 16, "batch": 2, "seed": 1, "tolerance": 0.3,
               "patience": 1},
    "workload": {"tests": ["write", "read"]},
    "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none"},
    "baselines": {"network": False, "disk": False},
}
CAMPAIGN = "adaptci@lab"


def _log(store: str) -> list[tuple[int, str | None, str]]:
    with sqlite3.connect(store) as db:
        try:
            return list(db.execute("select round, config_hash, reason from design_log order by id"))
        except sqlite3.OperationalError:  # not created yet
            return []


def test_adaptive_plan_stops_by_its_rule_and_resumes_after_a_kill(lab: LabState, tmp_path: Path) -> None:
    plan = tmp_path / "adaptive.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    store = str(tmp_path / "a.db")
    cf = str(lab.cluster_file)
    dry = glmodel("collect", "--cluster", cf, "--plan", str(plan), "--dry-run", check=True)
    assert "adaptive: chooses at most 16 of these 18 candidate run(s)" in " ".join(dry.stdout.split())

    proc = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", "collect", "--cluster", cf, "--plan",
                             str(plan), "--store", store], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:  # kill -9 once round 1 has chosen its batch
            if any(r == 1 and h is not None for r, h, _ in _log(store)):
                break
            if proc.poll() is not None:  # it finished before the kill: the resume below would test nothing
                pytest.fail(f"the campaign ended (exit {proc.returncode}) before round 1 chose its batch")
            time.sleep(0.2)
        else:
            pytest.fail("round 1 chose no batch within 600 s")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    before = _log(store)
    assert any(r == 1 for r, _, _ in before), before
    with sqlite3.connect(store) as db:  # each round's figures say whether it stopped the campaign
        stopped = [json.loads(f).get("stopped") for f, in db.execute("select figures from design_log "
                                                                      "where config_hash is null")]
    assert stopped and not any(stopped), "the kill landed after the campaign had stopped: the resume tests nothing"

    out = glmodel("collect", "--cluster", cf, "--plan", str(plan), "--store", store, timeout=900, check=True)
    assert "stopped:" in out.stdout
    log = _log(store)
    assert log[: len(before)] == before  # the sequence went on from where it was, nothing rewritten
    chosen = [h for _, h, _ in log if h is not None]
    assert len(chosen) == len(set(chosen)), "a configuration was chosen twice"
    rounds = [r for r, h, _ in log if h is None]
    assert rounds == list(range(1, len(rounds) + 1))
    last = [reason for _, h, reason in log if h is None][-1]
    assert "no longer change" in last and len(chosen) < 16, (last, len(chosen))
    with sqlite3.connect(store) as db:
        runs = list(db.execute("select config_hash, status from runs"))
    assert sorted(h for h, _ in runs) == sorted(chosen)  # every chosen run, once, and no other
    assert all(status == "done" for _, status in runs)

    shown = glmodel("runs", "design", "--store", store, "--campaign", CAMPAIGN, check=True)
    assert "round 0 runs" in shown.stdout and "committee disagreement" in shown.stdout
    assert "no longer change" in shown.stdout

"""A trial something else disturbed is flagged with the reason and measured again: a real CPU hog runs beside
the first trial of a run on the lab, and is ended once that trial is flagged; so do processes that each live
less than a trial (seen through the parent that reaps them). A baseline measured beside a hog is kept as an
error naming it, which no model reads, and measured again."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from collections.abc import Callable

import yaml

from gluster_model.errors import StoreError
from gluster_model.lab import LabState
from gluster_model.store import open_store
from gluster_model.store.identity import StoredBaseline, StoredTrial

from .conftest import glmodel, node_ip

PLAN = {"name": "disturbed", "factors": {"layout": "replicate", "replica": 3, "file_size": "96MB",
                                         "record_size": "1MB", "threads": 3, "sync": "none"},
        "workload": {"tests": ["write"]},
        "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none", "max_reruns": 1, "remount": "never"},
        "baselines": {"network": False, "disk": False}}


def _trials(store: str, starting: bool = False) -> list[StoredTrial]:
    """The run's trials; with ``starting``, none while collect is still creating the store (the file exists
    before its tables do)."""
    if starting:
        try:
            return _trials(store)
        except StoreError:
            return []
    with open_store(store, create=False) as st:
        camp = st.campaign("disturbed@lab")
        if camp is None:
            return []
        runs = st.runs(int(camp.id))
        return st.trials(runs[0].id) if runs else []


def _first_flagged(store: str) -> bool:
    return any(t.outlier for t in _trials(store, starting=True))


def _collect_beside(lab: LabState, tmp_path: Path, hogs: list[subprocess.Popen[bytes]],
                    plan_doc: dict[str, object] = PLAN, until: Callable[[str], bool] = _first_flagged
                    ) -> tuple[str, str]:
    """Run a one-trial campaign while ``hogs`` run; end them (and their process groups) once ``until`` says so
    (by default once the first trial is flagged, so the replacement runs undisturbed). (store, collect's output)."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(plan_doc))
    store = str(tmp_path / "s.db")
    collect = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", "collect", "--cluster",
                                str(lab.cluster_file), "--plan", str(plan), "--store", store],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def end_hogs() -> None:
        for h in hogs:
            try:
                os.killpg(h.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            h.wait()

    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and collect.poll() is None:
            if Path(store).exists() and until(store):
                break
            time.sleep(0.1)
        end_hogs()
        out, _ = collect.communicate(timeout=300)
    finally:
        end_hogs()
        if collect.poll() is None:
            collect.kill()
    assert collect.returncode == 0, out
    return store, out


def test_a_trial_with_a_cpu_hog_beside_it_is_flagged_and_measured_again(lab: LabState, tmp_path: Path) -> None:
    # One busy process per CPU of this 2-core lab machine: together well past half a CPU, however the
    # scheduler shares the CPUs with the trial's own processes.
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(2)]
    store, out = _collect_beside(lab, tmp_path, hogs)
    # What the store kept and why. On a busy machine other processes may be named too (the runner's own
    # neighbours): the test asks that its own hog is, and that the hog is not behind the kept trial.
    trials = _trials(store)
    first, kept = trials[0], [t for t in trials if not t.outlier]
    assert first.outlier and len(kept) == 1, trials
    because = str(first.flagged_because)
    assert because.startswith("disturbed: ") and "other processes used" in because, because
    assert any(f"(pid {h.pid})" in because for h in hogs), because
    assert "disturbed trial(s) flagged and measured again" in " ".join(out.split()), out
    ctx = kept[0].context
    assert isinstance(ctx, dict) and ctx["heal_pending"] == 0
    assert not any(f"pid {h.pid}" in str(ctx["disturbed"]) for h in hogs), ctx["disturbed"]
    assert set(ctx["hosts"]) == {node_ip(1), node_ip(2), node_ip(3)}
    shown = glmodel("runs", "show", "--store", store, str(_run_id(store)), check=True).stdout
    assert "flagged: disturbed: " in shown and any(f"pid {h.pid}" in shown for h in hogs)
    table = tmp_path / "t.csv"
    glmodel("export", "--store", store, "--out", str(table), "--all-trials", check=True)
    rows = list(csv.DictReader(table.open()))
    assert rows[0]["flagged_because"].startswith("disturbed") and sum(not r["flagged_because"] for r in rows) <= 1
    assert len(rows) == len(trials)


# A parent that runs one short busy process after another: each child burns 50 ms of CPU and ends, so a snapshot
# before or after a trial sees at most one child with at most that much time; what the children used together
# shows only in the parent's count of reaped children's time.
SPAWNER = ("import subprocess, sys\n"
           "child = 'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.05: pass'\n"
           "while True: subprocess.run([sys.executable, '-c', child])")


def test_processes_shorter_than_a_trial_are_seen_through_the_parent_that_reaps_them(lab: LabState,
                                                                                     tmp_path: Path) -> None:
    # Files large enough that a trial lasts over a second with the spawners beside it: the one child alive at
    # each snapshot (50 ms) and the spawners' own time (a few %) stay well under half a CPU; their children's
    # time is a CPU or more.
    plan = {**PLAN, "factors": {**PLAN["factors"], "file_size": "192MB"}}  # type: ignore[dict-item]
    spawners = [subprocess.Popen([sys.executable, "-c", SPAWNER], start_new_session=True) for _ in range(2)]
    store, _ = _collect_beside(lab, tmp_path, spawners, plan)
    trials = _trials(store)
    first, kept = trials[0], [t for t in trials if not t.outlier]
    assert first.outlier and len(kept) == 1, trials
    because = str(first.flagged_because)
    assert because.startswith("disturbed: ") and any(f"(pid {s.pid})" in because for s in spawners), because
    assert not any(f"pid {s.pid}" in str(kept[0].context) for s in spawners)


def _run_id(store: str) -> int:
    with open_store(store, create=False) as st:
        camp = st.campaign("disturbed@lab")
        assert camp is not None
        return st.runs(int(camp.id))[0].id


def _network_rows(store: str) -> list[StoredBaseline]:
    try:
        with open_store(store, create=False) as st:
            camp = st.campaign("disturbed@lab")
            return [] if camp is None else [b for b in st.baselines(str(camp.hardware_key))
                                            if b.kind == "network"]
    except StoreError:  # collect is still creating the store
        return []


def test_a_baseline_measured_beside_a_cpu_hog_is_kept_as_an_error_and_measured_again(lab: LabState,
                                                                                     tmp_path: Path) -> None:
    # The hogs run from before collect until the network baseline is stored: its first measurement and the one
    # re-measurement the protocol allows both see them, so the first is kept as an error naming them and the
    # second is kept for the models, with a line that says so. The disk baseline comes after, without them.
    plan = {**PLAN, "protocol": {**PLAN["protocol"], "max_reruns": 1},  # type: ignore[dict-item]
            "baselines": {"network": True, "disk": True, "iperf": {"seconds": 2, "omit": 0},
                          "fio": {"size": "16MB", "runtime": 2}}}
    # Four: beside two other labs' tests (the test command runs three), two hogs were once too small a share of
    # the machine for the re-measurement to see them.
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True) for _ in range(4)]
    store, out = _collect_beside(lab, tmp_path, hogs, plan, until=lambda s: bool(_network_rows(s)))
    rows = _network_rows(store)
    disturbed = [b for b in rows if str(b.error or "").startswith("disturbed: ")]
    kept = [b for b in rows if b.error is None]
    # Both measurements whole (every pair, both directions, and the round trips), the first marked disturbed
    # by the hogs (on a busy machine others may be named beside them).
    assert disturbed and len(disturbed) == len(kept), rows
    assert all(any(f"(pid {h.pid})" in str(b.error) for h in hogs) for b in disturbed), disturbed
    assert {(b.host, b.target, b.test) for b in disturbed} == {(b.host, b.target, b.test)
                                                                        for b in kept}
    assert all(b.value for b in disturbed + kept)
    assert "network baseline disturbed" in " ".join(out.split()) and "after 1 re-measurement(s); kept" in \
        " ".join(out.split()), out
    # Only the kept measurement reaches the table the models read.
    with open_store(store, create=False) as st:
        table = st.baseline_table()
    assert sorted(b["value"] for b in table if b["kind"] == "network") == sorted(b.value for b in kept)
    assert any(b["kind"] == "disk" for b in table), table

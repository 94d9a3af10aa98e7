"""glmodel collect on the real lab: exact store contents, resume, kill -9 (and a second collect on the same store
meanwhile), a dropped node, PostgreSQL (and its server going away mid-campaign)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from gluster_model.lab import LabState, find_node, start_sshd, stop_sshd
from gluster_model.store import open_store
from gluster_model.store.identity import StoredTrial
from gluster_model.campaign.sizing import sizing_step

from .conftest import glmodel, kept_trials, lab_processes, node_ip, ssh_client_connections
from .postgres import PORT, postgres_control, postgres_server

# 2 layouts x 2 record sizes, 2 repetitions, write test only (each distributed iozone trial costs ~1.5 s of
# iozone's own start-up and barriers on the lab, whatever the file size).
PLAN = {
    "name": "ci",
    "factors": {"layout": ["distribute", "replicate"], "replica": 3, "record_size": ["16KB", "64KB"],
                "file_size": "1MB", "threads": 3},
    "workload": {"tests": ["write"]},
    "protocol": {"warmups": 0, "repetitions": 2, "outlier_rule": "none"},
    "baselines": {"iperf": {"seconds": 1, "omit": 0}, "fio": {"size": "4MB", "runtime": 2}},
}
EXPECTED = {"runs_done": 4, "trials": 8, "measurements": 8, "raw_outputs": 16}
# One volume of the two (replica 3 over every node): where a test needs a campaign but not the layouts' variety
# (a dropped node, PostgreSQL), half the runs and half the suite's time.
SMALL = {**PLAN, "name": "cismall", "factors": {**PLAN["factors"], "layout": "replicate"}}
SMALL_EXPECTED = {"runs_done": 2, "trials": 4, "measurements": 4, "raw_outputs": 8}


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "ci.yaml"
    path.write_text(yaml.safe_dump(PLAN))
    return path


@pytest.fixture(scope="module")
def small_plan(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "cismall.yaml"
    path.write_text(yaml.safe_dump(SMALL))
    return path


def _counts(store: str, campaign: str) -> dict[str, int]:
    """Rows of the trials kept. A trial another process disturbed (a busy CI machine) is flagged and measured
    again by design: its extra rows are not a trial stored twice."""
    with open_store(store, create=False) as st:
        c = st.campaign(campaign)
        assert c is not None
        out = st.counts(int(c.id), flagged=False)
        out.pop("trials_flagged")
        return out


def _no_volumes_left(lab: LabState) -> None:
    out = subprocess.run(["gluster", "--mode=script", f"--glusterd-sock={lab.nodes[0].socket}", "volume", "list"],
                         capture_output=True, text=True).stdout
    assert "gm" not in out, out


def test_collect_exact_store_then_resume_does_nothing(lab: LabState, plan_file: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    dry = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan_file), "--dry-run", check=True)
    assert "2 volume(s), 4 run(s), 8 trial(s)" in dry.stdout and not Path(store).exists()
    first = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan_file), "--store", store,
                    timeout=900, check=True)
    # what the store kept, not the printed trial count (a disturbed trial measured again adds to that)
    assert first.stdout.count("✓") == 4 and "4 run(s) done now, 0 before, 0 failed" in first.stdout
    assert _counts(store, "ci@lab") == EXPECTED
    # iozone's children rode on one shared ssh connection per client, closed when collect exited
    deadline = time.monotonic() + 10
    while (left := ssh_client_connections(lab)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == []
    with open_store(store, create=False) as st:
        c = st.campaign("ci@lab")
        assert c is not None and "ssh" not in str(c.cluster)  # no SSH settings in the store
        runs = st.runs(int(c.id))
        assert {(r.features["layout"], r.features["record_size"]) for r in runs} == {
            (lay, rs) for lay in ("distribute", "replicate") for rs in (16 << 10, 64 << 10)}
        assert all(r.attempts == 1 and r.regime == "cached" for r in runs)
        for r in runs:
            trials = kept_trials(st.trials(r.id))
            assert len(trials) == 2 and len({t.idx for t in trials}) == 2
            assert all(m.metric == "write" and m.value > 0 and m.unit == "kB/s"
                       for t in trials for m in t.measurements)
        kinds = {b["kind"] for b in st.baseline_table()}
        assert kinds == {"network", "disk"}
    _no_volumes_left(lab)
    again = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan_file), "--store", store,
                    check=True)
    assert "all 4 run(s) already done" in again.stdout and _counts(store, "ci@lab") == EXPECTED
    listed = glmodel("runs", "list", "--store", store, "--json", check=True)
    assert listed.stdout.count('"status": "done"') == 4
    out = tmp_path / "t.parquet"
    glmodel("export", "--store", store, "--format", "parquet", "--out", str(out), check=True)
    import pandas as pd

    frame = pd.read_parquet(out)
    assert len(frame) == 8 and (frame["write"] > 0).all() and frame["network_gbps"].gt(0).all()
    _fit_end_to_end(store, tmp_path)


def _fit_end_to_end(store: str, tmp_path: Path) -> None:
    """glmodel fit on the lab campaign: every table, and a model file that reloads to identical predictions."""
    import json

    import numpy as np

    from gluster_model.dataset import trial_frame
    from gluster_model.model import artifact
    from gluster_model.model.fit import fit_frame

    model_path = tmp_path / "model.json"
    shown = glmodel("fit", "--store", store, "--out", str(model_path), "--bootstrap", "3", "--samples", "128",
                    timeout=300, check=True)
    for heading in ("write: models on the same data (8 trials, 4 configurations)", "write: the study's MLR (OLS)",
                    "write: predictor importance, mlr model", "model file:"):
        assert heading in shown.stdout, shown.stdout
    assert "layout left out: varied together with replica in these data" in shown.stdout
    report = json.loads(glmodel("fit", "--store", store, "--out", str(model_path), "--json", "--bootstrap", "0",
                                "--samples", "128", check=True).stdout)["metrics"]["write"]
    assert [c["model"] for c in report["comparison"]] == ["mlr", "loglinear", "physical", "bottleneck", "gbm"]
    assert {r["term"] for r in report["coefficients"]} == {"const", "replica", "record_size"}
    assert report["comparison"][0]["cv"]["folds"] == 4 and report["n_rows"] == 8
    vi = {i["feature"]: i["vi"] for i in report["importance"]["mlr"]}
    assert set(vi) == {"replica", "record_size"} and sum(vi.values()) == pytest.approx(1.0)
    # Library round trip on the same data: save, load, identical predictions for every model.
    with open_store(store, create=False) as st:
        frame = trial_frame(st)
    fits, _ = fit_frame(frame, "unified", ["write"], bootstrap=0, importance_n=128, cv_repeats=1)
    artifact.save(artifact.build(fits, {"store": store}), tmp_path / "again.json")
    loaded = artifact.load(tmp_path / "again.json")
    for name, model in fits[0].models.items():
        np.testing.assert_array_equal(loaded.model("write", name).predict(frame), model.predict(frame))
    _predict_end_to_end(frame, model_path, tmp_path)


def _predict_end_to_end(frame: Any, model_path: Path, tmp_path: Path) -> None:
    """glmodel predict on the lab-fitted model: a measured configuration shows the store's own mean and the
    model's own prediction; a change the lab never measured (the network) is marked as a guess."""
    import json

    from gluster_model.model import artifact
    from gluster_model.model.features import with_derived

    scen = tmp_path / "lab.yaml"
    scen.write_text("baseline: {name: dist 16KB, set: {layout: distribute, replica: 1, record_size: 16KB}, "
                    "server_tb: 1}\ncandidates:\n  - {name: rep3 64KB, set: {layout: replicate, replica: 3, "
                    "record_size: 64KB}}\n  - {name: 10x network, set: {network_gbps: 1000}, price: 10}\n")
    answer = json.loads(glmodel("predict", "--model", str(model_path), "--scenarios", str(scen), "--json",
                                check=True).stdout)
    (m,) = answer["metrics"]
    base, rep3, net = m["predictions"]
    rows = frame[(frame["layout"] == "distribute") & (frame["record_size"] == 16 << 10)]
    assert base["basis"] == "measured" and base["measured_mean"] == pytest.approx(rows["write"].mean())
    assert base["measured_trials"] == len(rows) == 2
    model = artifact.load(model_path).model("write")
    row = with_derived(rows.iloc[[0]].reset_index(drop=True), "write")
    assert base["value"] == pytest.approx(float(model.predict(row)[0]), rel=1e-12)
    assert rep3["basis"] == "measured" and rep3["delta"] == pytest.approx(rep3["value"] - base["value"])
    assert net["basis"] == "extrapolated" and "its effect was never measured" in " ".join(net["flags"])
    # A guess is never ranked, whatever its price: it says why instead.
    assert net["rank"] is None and net["not_ranked"] == "extrapolated: outside the measured data"
    assert m["best_upgrade"] is None
    assert {c["scenario"]: c["usable_tb"] for c in answer["capacity"]} == {
        "dist 16KB": pytest.approx(3.0), "rep3 64KB": pytest.approx(1.0), "10x network": pytest.approx(3.0)}
    shown = glmodel("predict", "--model", str(model_path), "--scenarios", str(scen), check=True).stdout
    assert "Extrapolated (guesses, never ranked): 10x network" in shown


def test_sigkill_mid_campaign_then_resume(lab: LabState, plan_file: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    proc = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", "collect", "--cluster", str(lab.cluster_file),
                             "--plan", str(plan_file), "--store", store], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:  # the first run is done
            if Path(store).exists():
                c = _counts(store, "ci@lab") if _has_campaign(store) else {}
                if c.get("runs_done", 0) >= 1:
                    break
            time.sleep(0.2)
        else:
            pytest.fail("collect made no progress")
        # A second collect on the same store while the first runs: refused in one line naming the first,
        # before it writes anything (it would measure the same runs twice on the same cluster).
        second = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan_file), "--store", store,
                         timeout=120)
        lines = second.stderr.strip().splitlines()
        assert second.returncode == 1 and len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
        assert "another glmodel is writing to this store" in lines[0] and f"pid {proc.pid} on" in lines[0]
        # Killed mid-run: a run has kept its first trial and measures its second (over a second of iozone
        # start-up alone), so the kill lands inside that run whatever the machine's load.
        _wait_mid_run(proc, store)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    before = _counts(store, "ci@lab")
    assert before["runs_done"] >= 1 and before.get("runs_running", 0) == 1  # the killed run never finished
    with open_store(store) as st:
        done_before = {r.config_hash for r in st.runs() if r.status == "done"}
        killed = {r.config_hash for r in st.runs() if r.status == "running"}
    glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan_file), "--store", store, timeout=900,
            check=True)
    assert _counts(store, "ci@lab") == EXPECTED  # nothing lost, nothing twice
    with open_store(store) as st:
        for r in st.runs():
            # Runs finished before the kill were not run again; the killed one was (a second attempt, from
            # trial 0); the ones never started ran once.
            assert r.attempts == (2 if r.config_hash in killed else 1), (r.config_hash, done_before)
            kept = kept_trials(st.trials(r.id))
            assert len(kept) == 2 and len({t.idx for t in kept}) == 2
    _no_volumes_left(lab)
    _no_iozone_children_left(lab)


def _no_iozone_children_left(lab: LabState) -> None:
    """iozone children (started over RSH) of an interrupted or killed master are reaped, not left spinning (in
    this lab's nodes: an iozone elsewhere on the machine is not this test's)."""
    left = lab_processes(lab, r"iozone -[+]s")
    assert not left, left


def _mid_run(store: str, done_before: int = 0) -> bool:
    """Whether a run is running with one trial kept (its second one under way: over a second of iozone start-up
    alone) after ``done_before`` runs were done: an event sent now lands inside that run on any machine. A
    count of trials, polled, does not: a trial of these plans takes under two seconds."""
    try:
        with open_store(store, create=False) as st:
            runs = st.runs()
            running = [r for r in runs if r.status == "running"]
            done = sum(r.status == "done" for r in runs)
            return (done >= done_before and len(running) == 1
                    and len(kept_trials(st.trials(running[0].id))) == 1)
    except Exception:  # no store or campaign yet
        return False


def _wait_mid_run(proc: subprocess.Popen[str] | subprocess.Popen[bytes], store: str, done_before: int = 0) -> None:
    """Return as soon as one look finds a run mid-way (``_mid_run``). One look, not a second to confirm it: a
    second could find the trial ended, or the store held by the collector's write (seen once on a loaded
    machine: the wait ended on a true look and the assertion's own look was false)."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        assert proc.poll() is None, "collect ended before a run's second trial"
        if _mid_run(store, done_before):
            return
        time.sleep(0.05)
    pytest.fail("collect never ran a run's second trial")


def _has_campaign(store: str, campaign: str = "ci@lab") -> bool:
    try:
        with open_store(store, create=False) as st:
            return st.campaign(campaign) is not None
    except Exception:
        return False


def test_dropped_node_recorded_then_completed(lab: LabState, small_plan: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    _, n2 = find_node(lab.path, node_ip(2))
    proc = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", "collect", "--cluster", str(lab.cluster_file),
                             "--plan", str(small_plan), "--store", store], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_mid_run(proc, store, done_before=1)
        stop_sshd(n2, lab.path, sessions=True)  # node 2 drops off the network mid-campaign
        out, err = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
        start_sshd(n2, lab)
    assert proc.returncode == 1 and "run(s) failed" in err
    with open_store(store) as st:
        failed = [r for r in st.runs() if r.status == "failed"]
    assert failed and all(r.error_host == node_ip(2) for r in failed), [(r.error_host, r.error) for r in failed]
    again = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(small_plan), "--store", store,
                    timeout=900, check=True)
    assert f"{len(failed)} run(s) done now" in again.stdout
    assert _counts(store, "cismall@lab") == SMALL_EXPECTED
    _no_volumes_left(lab)


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


def test_same_campaign_on_postgresql(lab: LabState, small_plan: Path, postgres_url: str) -> None:
    glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(small_plan), "--store", postgres_url,
            timeout=900, check=True)
    assert _counts(postgres_url, "cismall@lab") == SMALL_EXPECTED
    again = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(small_plan), "--store", postgres_url,
                    check=True)
    assert "all 2 run(s) already done" in again.stdout
    shown = glmodel("runs", "show", "1", "--store", postgres_url, "--raw", "0", check=True)
    assert "Children see throughput for" in shown.stdout


def test_postgresql_going_away_mid_campaign_loses_nothing(lab: LabState, small_plan: Path) -> None:
    """A second collect on the same PostgreSQL store while the first runs is refused in one line naming it; then
    the store's server stops while a trial runs (a crash, a restart): collect ends in one line naming the store,
    with no volume or iozone left behind; once the server is back, the same command completes the campaign from
    what was committed: every trial kept once, none lost."""
    with postgres_control(PORT + 1) as server:
        proc = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", "collect", "--cluster",
                                 str(lab.cluster_file), "--plan", str(small_plan), "--store", server.url],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 300
            while not _has_campaign(server.url, "cismall@lab") and proc.poll() is None:
                assert time.monotonic() < deadline, "collect never wrote its campaign"
                time.sleep(0.2)
            # two collects on one PostgreSQL store: the second is refused in one line naming the first, before
            # it writes anything (the writer slot is a row of the store, whatever the database)
            second = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(small_plan), "--store",
                             server.url, timeout=120)
            lines = second.stderr.strip().splitlines()
            assert second.returncode == 1 and len(lines) == 1 and "Traceback" not in second.stderr, second.stderr
            assert "another glmodel is writing to this store" in lines[0] and f"pid {proc.pid} on" in lines[0]
            with open_store(server.url, create=False) as st:
                assert [c.name for c in st.campaigns()] == ["cismall@lab"]
            _wait_mid_run(proc, server.url, done_before=1)  # the first run is done and the second runs
            with open_store(server.url, create=False) as st:
                committed = {(t.run_id, t.idx) for r in st.runs() for t in st.trials(r.id)
                             if r.status == "done"}
            assert committed
            server.stop()
            _, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
        lines = [ln for ln in err.strip().splitlines() if ln.strip()]
        assert proc.returncode == 1 and "Traceback" not in err, err
        assert f"127.0.0.1:{PORT + 1}/glmodel" in lines[-1], lines[-1]
        _no_volumes_left(lab)
        _no_iozone_children_left(lab)
        server.start()
        glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(small_plan), "--store", server.url,
                timeout=900, check=True)
        assert _counts(server.url, "cismall@lab") == SMALL_EXPECTED
        with open_store(server.url, create=False) as st:
            kept = {(t.run_id, t.idx) for r in st.runs() for t in st.trials(r.id)}
        assert committed <= kept  # what a finished run had committed before the server went is still there


def _as_in_a_terminal() -> None:
    # A suite started as a background job (`cmd &` without job control) inherits SIGINT ignored, and Python
    # then never raises KeyboardInterrupt; a user's Ctrl-C reaches a foreground collect with SIGINT live.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_records_the_interrupted_run_and_exits_130(lab: LabState, plan_file: Path, tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    proc = subprocess.Popen([sys.executable, "-m", "gluster_model.cli", "collect", "--cluster", str(lab.cluster_file),
                             "--plan", str(plan_file), "--store", store], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_as_in_a_terminal)
    try:
        _wait_mid_run(proc, store)  # interrupt during the first run's second trial
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "interrupted" in err
    _no_iozone_children_left(lab)
    with open_store(store) as st:
        runs = st.runs()
        interrupted = [r for r in runs if r.error == "interrupted"]
        assert len(interrupted) == 1 and interrupted[0].status == "failed"
        assert len(st.trials(interrupted[0].id)) >= 1  # the committed trial is kept
        assert all(r.status in ("pending", "done") for r in runs if r is not interrupted[0])
    _no_volumes_left(lab)


def test_auto_sizing_grows_by_the_rate_until_the_data_phase_lasts_the_target(lab: LabState, tmp_path: Path) -> None:
    target = 0.25
    plan = {"name": "auto",
            "factors": {"layout": "distribute", "file_size": "4MB", "record_size": "64KB", "threads": 3},
            "workload": {"tests": ["write"]},
            "protocol": {"warmups": 0, "repetitions": 1, "outlier_rule": "none", "target_seconds": target,
                         "max_file_size": "256MB"},
            "baselines": {"network": False, "disk": False}}
    plan_path = tmp_path / "auto.yaml"
    plan_path.write_text(yaml.safe_dump(plan))
    store = str(tmp_path / "auto.db")
    glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan_path), "--store", store,
            timeout=900, check=True)
    with open_store(store, create=False) as st:
        (run,) = st.runs()
        trials = st.trials(run.id)
    sizing = [t for t in kept_trials(trials) if t.warmup]
    measured = [t for t in kept_trials(trials) if not t.warmup]
    assert len(sizing) >= 2 and len(measured) == 1  # 3 x 4 MiB cannot take 0.25 s at lab speeds

    def data_phase(t: StoredTrial) -> float:  # seconds the write moved data: 3 threads' bytes over the aggregate rate
        (m,) = t.measurements
        return 3 * t.file_size / 1024 / m.value

    sizes = [t.file_size for t in sizing]
    assert sizes[0] == 4 << 20 and all(b % a == 0 and (b // a) & (b // a - 1) == 0 and 2 <= b // a <= 16
                                       for a, b in zip(sizes, sizes[1:]))  # powers of two, at most 16x a step
    assert all(data_phase(t) < target for t in sizing[:-1])
    # each step the one the last trial's rate asked for (the largest power of two short of 16x otherwise)
    assert [b // a for a, b in zip(sizes, sizes[1:])] == [
        sizing_step(t.file_size, data_phase(t), target, 256 << 20) for t in sizing[:-1]]
    assert data_phase(sizing[-1]) >= target or sizing[-1].file_size * 2 > 256 << 20
    assert measured[0].file_size == sizing[-1].file_size
    # The dry-run estimate now learns from these trials (two or more sizes).
    dry = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan_path), "--store", store,
                  "--dry-run", check=True)
    import re

    fitted_on = re.search(r"fitted on (\d+) stored trial\(s\)", dry.stdout)
    assert fitted_on is not None and len(kept_trials(trials)) <= int(fitted_on.group(1)) <= len(trials), dry.stdout
    # and the run itself, measured now, is estimated at what its kept trial took (not its sizing steps)
    assert "1 of 1 run(s) as their trials took in the store; a new one fitted on" in " ".join(dry.stdout.split())

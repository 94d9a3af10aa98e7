"""fio as a trial engine on the real lab: a campaign of small-file and large-file tests through `glmodel collect`,
every metric in the store with its IOPS and latency, no fio server left listening, and a fio that cannot start
on one client named in one line."""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from gluster_model.dataset import trial_frame
from gluster_model.lab import LabState, find_node
from gluster_model.store import open_store
from gluster_model.store.identity import StoredRun, StoredTrial

from .conftest import glmodel, kept_trials, lab_processes, node_ip

FILES = 150
PLAN: dict[str, Any] = {"name": "fioci", "factors": {"layout": "replicate", "replica": 3, "engine": "fio", "file_size": "16KB",
                                     "record_size": "16KB", "threads": 3, "files": FILES, "sync": "none"},
        "workload": {"tests": ["write", "read", "file_create", "file_stat", "file_list", "file_read", "file_delete"]},
        "protocol": {"warmups": 0, "repetitions": 2, "outlier_rule": "none", "remount": "never"},
        "baselines": {"network": False, "disk": False}}
SMALL = ("file_create", "file_stat", "file_list", "file_read", "file_delete")


def _collect(lab: LabState, tmp_path: Path, plan: Mapping[str, Any]) -> tuple[subprocess.CompletedProcess[str], str]:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(plan))
    store = str(tmp_path / "s.db")
    done = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(path), "--store", store,
                   timeout=600)
    return done, store


def _done_run(lab: LabState, tmp_path: Path, plan: Mapping[str, Any]) -> tuple[str, StoredRun, list[StoredTrial]]:
    """Collect a one-run plan that must succeed: its store, its run and the trials the run kept."""
    done, store = _collect(lab, tmp_path, plan)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    with open_store(store, create=False) as st:
        camp = st.campaign(f"{plan['name']}@lab")
        assert camp is not None
        (run,) = st.runs(int(camp.id))
        assert run.status == "done"
        return store, run, kept_trials(st.trials(run.id))


def test_fio_campaign_stores_every_metric_with_iops_and_latency(lab: LabState, tmp_path: Path) -> None:
    store, run, trials = _done_run(lab, tmp_path, PLAN)
    with open_store(store, create=False) as st:
        listings = [st.raw_output(t.id, "listing") or "" for t in trials]
        # the stats and the small reads are glmodel's own, each client's figure kept as it timed it
        cold = [(st.raw_output(t.id, "file_stats") or "") + (st.raw_output(t.id, "file_reads") or "")
                for t in trials]
        frame = trial_frame(st, "fioci@lab")
    assert len(trials) == 2
    clients = [node_ip(n) for n in (1, 2, 3)]
    for t, listing in zip(trials, listings):
        m = {x.metric: x for x in t.measurements}
        for metric in ("write", "read"):
            assert m[metric].unit == "kB/s" and m[metric].value > 0
            assert m[f"{metric}.iops"].unit == "op/s"
            # one 16 KB I/O per operation: IOPS and kB/s are the same figure, as fio counted it
            assert abs(m[f"{metric}.iops"].value * 16 - m[metric].value) <= 0.02 * m[metric].value
            assert m[f"{metric}.p99_us"].value >= m[f"{metric}.p50_us"].value > 0
        for metric in SMALL:
            assert m[metric].unit == "files/s" and m[metric].value > 0, metric
            # the sum over the three clients, with the slowest and fastest client's own rate
            assert m[metric].min_value <= m[metric].value / 3 <= m[metric].max_value, metric
        # a create on a replica-3 volume is several round trips to every brick; a stat (past the attribute
        # caches) one lookup, a listing served from readdirp: both are faster than creating
        assert m["file_stat"].value > m["file_create"].value
        assert m["file_list"].value > m["file_create"].value
        # every client ran its own server, reached at its own address; the listing named each client's count
        argv = " ".join(t.argv)
        assert all(f"--client=ip:{c},8765" in argv for c in clients), argv
        assert all(f"{c}: " in listing for c in clients), listing
    for timed in cold:
        assert all(timed.count(f"{c}: ") == 2 for c in clients), timed
    assert set(SMALL) <= set(frame.columns) and frame["file_create"].gt(0).all() and len(frame) == 2
    assert frame["files"].eq(FILES).all()
    assert lab_processes(lab, r"fio --server") == []  # none is left listening on any node


def test_a_shared_read_has_every_client_read_the_first_clients_file(lab: LabState, tmp_path: Path) -> None:
    """shared_read on the lab: each client writes its own file, then all three read the first client's through
    their own mounts; the store keeps it as its own workload (features, config) with each client's read."""
    plan = {**PLAN, "name": "fioshared", "factors": {**PLAN["factors"], "file_size": "8MB", "record_size": "1MB",
                                                     "shared_read": True},
            "workload": {"tests": ["write", "read"]}, "protocol": {**PLAN["protocol"], "repetitions": 1}}
    store, run, (trial,) = _done_run(lab, tmp_path, plan)
    with open_store(store, create=False) as st:
        writes = st.raw_output(trial.id, "fio_jobs") or ""
        jobs = st.raw_output(trial.id, "fio_shared_read_jobs") or ""
    assert run.features["shared_read"] is True
    m = {x.metric: x for x in trial.measurements}
    # the sum over three readers, each of which read (a reader of nothing would have no figure, or fail the run)
    assert m["read"].min_value > 0 and m["read"].value >= 3 * m["read"].min_value
    per_client = jobs.split("# ")[1:]
    assert len(per_client) == 3
    own = [re.search(r"^directory=(\S+)/(\S+)$", job, re.M) for job in per_client]
    assert all(own)
    first = own[0].group(2)  # type: ignore[union-attr]
    for job, mine in zip(per_client, own):
        # every client's read sections name the first client's directory through this client's own mount (the
        # lab's nodes share a filesystem: another node's mount path would read through that node's client)
        assert mine is not None and mine.group(1).startswith(str(lab.path)), job
        reads = re.findall(r"^\[read\.\d+\]\n(.*?)(?:\n\n|\Z)", job, re.M | re.S)
        assert reads and all(f"directory={mine.group(1)}/{first}\n" in r and "filename=big.0" in r
                             for r in reads), job
    assert len({m.group(1) for m in own if m}) == 3  # three mounts, one per client
    # the reads ran after every client's write had ended: the writes were a fio run of their own
    assert "[write.0]" in writes and "[read." not in writes and "[write." not in jobs
    assert lab_processes(lab, r"fio --server") == []


def test_large_files_spread_each_threads_random_records_over_its_files(lab: LabState, tmp_path: Path) -> None:
    """large_files on the lab: each thread's 1 MiB of 16 KiB random records over four files (as a host with
    several VM images), through `glmodel collect`; the store keeps the setting in the run's features, identity
    and trial table, and the jobs fio ran, with fio's own account of the files it used."""
    plan = {**PLAN, "name": "fiospread", "factors": {**PLAN["factors"], "file_size": "1MB", "large_files": 4},
            "workload": {"tests": ["random"]}, "protocol": {**PLAN["protocol"], "repetitions": 1}}
    store, run, (trial,) = _done_run(lab, tmp_path, plan)
    with open_store(store, create=False) as st:
        jobs = st.raw_output(trial.id, "fio_jobs") or ""
        layout = st.raw_output(trial.id, "fio_layout_jobs") or ""
        report = st.raw_output(trial.id, "fio") or ""
        frame = trial_frame(st, "fiospread@lab")
    assert run.features["large_files"] == 4 and frame["large_files"].eq(4).all()
    per_client = jobs.split("# ")[1:]
    assert len(per_client) == 3
    for job in per_client:
        sections = re.findall(r"^\[(random_\w+)\.(\d+)\]\n(.*?)(?:\n\n|\Z)", job, re.M | re.S)
        assert len(sections) == 2  # one thread a client, its write then its read
        for _, k, body in sections:
            assert f"filename_format=big.{k}.$filenum" in body and "nrfiles=4" in body
            assert "file_service_type=random" in body and f"size={1 << 20}" in body
    # the random read comes first and reads files: every client laid them out in a run of its own before any
    # client timed a job (otherwise a client done laying out first would run its jobs alone)
    assert len(trial.argv) == 2 and "fio_layout" in trial.argv[0] and "fio_layout" not in trial.argv[1]
    assert layout.count("create_only=1") == 3 and layout.count("[random_read.0]") == 3
    assert "[random_write." not in layout and "create_only" not in jobs
    # fio's report of what each job ran with: four files, a file drawn at random a record
    options = re.findall(r'"nrfiles"\s*:\s*"(\d+)"', report)
    assert options and set(options) == {"4"}, report[:2000]
    m = {x.metric: x for x in trial.measurements}
    for metric in ("random_write", "random_read"):
        # one 16 KiB record an operation, summed over the three clients, each of which ran
        assert m[metric].min_value > 0
        assert abs(m[f"{metric}.iops"].value * 16 - m[metric].value) <= 0.02 * m[metric].value
    assert lab_processes(lab, r"fio --server") == []


def test_a_fio_server_that_cannot_listen_is_named_in_one_line(lab: LabState, tmp_path: Path) -> None:
    _, node = find_node(lab.path, "2")
    # a foreign listener on fio's port at node 2's address: its server cannot bind
    holder = subprocess.Popen(["ip", "netns", "exec", node.netns, "python3", "-c",
                               "import socket,time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, "
                               "socket.SO_REUSEADDR, 1); s.bind(('%s', 8765)); s.listen(); print('up', flush=True); "
                               "time.sleep(600)" % node.address], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "up"
        plan = {**PLAN, "name": "fiobusy", "workload": {"tests": ["file_create"]},
                "protocol": {**PLAN["protocol"], "repetitions": 1}}
        done, store = _collect(lab, tmp_path, plan)
    finally:
        holder.kill()
        holder.wait()
    out = " ".join((done.stdout + done.stderr).split())
    assert done.returncode != 0 and "Traceback" not in out
    with open_store(store, create=False) as st:
        camp = st.campaign("fiobusy@lab")
        assert camp is not None
        (run,) = st.runs(int(camp.id))
        (trial,) = st.trials(run.id)
    assert run.status == "failed" and trial.status == "failed"
    error = run.error or ""
    assert "\n" not in error and node.address in error and "port 8765 is held by another program" in error, error
    assert lab_processes(lab, r"fio --server") == []
    with socket.socket() as s:  # and the port is free again once the holder is gone
        s.settimeout(1)
        assert s.connect_ex((node.address, 8765)) != 0

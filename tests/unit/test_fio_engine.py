"""fio as a trial engine, its pure half: what a workload allows, the job files, and the parser, checked against
real fio servers on this machine's loopback (the lab tests run it on Gluster)."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gluster_model.bench.fio_jobs import (check_layout, client_argv, cold_script, fio_metrics, fio_runs, job_file,
                                          layout_metrics, listing_script, parse_client_json, parse_timed,
                                          server_address, timed_before)
from gluster_model.bench.workload import Workload
from gluster_model.errors import ParseError

# Only the tests that start real fio servers need fio; the rest is pure and runs everywhere.
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is installed by scripts/setup.sh")


def test_small_file_tests_need_fio_and_start_with_create() -> None:
    with pytest.raises(ValueError, match="run with engine fio"):
        Workload(tests=["file_create"])
    with pytest.raises(ValueError, match="start with file_create"):
        Workload(engine="fio", tests=["file_stat", "file_read"])
    with pytest.raises(ValueError, match="engine fio measures the Gluster mount"):
        Workload(engine="fio", tests=["read"], target="local")
    w = Workload(engine="fio", tests=["file_delete", "file_list", "file_create", "write"], file_size="16KB")
    assert w.tests == ["write", "file_create", "file_list", "file_delete"]  # the order they run in
    assert w.expected_metrics() == ["write", "file_create", "file_list", "file_delete"]
    # fio lays out a file it reads itself: no write is added (iozone's always writes first)
    assert Workload(engine="fio", tests=["read"]).expected_metrics() == ["read"]
    assert Workload(tests=["read"]).expected_metrics() == ["write", "read"]
    assert fio_runs(Workload(engine="fio", tests=["random"])) == [("fio", ["random_read", "random_write"])]
    assert fio_runs(w) == [("fio", ["write", "file_create"]), ("fio_after_listing", ["file_delete"])]
    # the stats are glmodel's too, timed before the run after them, as the listing is
    every = Workload(engine="fio", tests=["file_create", "file_stat", "file_list", "file_read", "file_delete"])
    assert fio_metrics(every) == ["file_create", "file_delete"]
    assert fio_runs(every) == [("fio", ["file_create"]), ("fio_after_stat", []), ("fio_after_listing", []),
                               ("fio_after_read", ["file_delete"])]
    assert [timed_before(r) for r, _ in fio_runs(every)] == [None, "file_stat", "file_list", "file_read"]
    assert fio_runs(Workload(engine="fio", tests=["file_create", "file_list"])) == [
        ("fio", ["file_create"]), ("fio_after_listing", [])]  # the listing is timed after the first run
    # a shared read waits for every client's write: a run of its own from the first shared read on
    shared = Workload(engine="fio", tests=["write", "read", "random", "file_create", "file_list"], shared_read=True)
    assert fio_runs(shared) == [("fio", ["write"]), ("fio_shared_read", ["read", "random_read", "random_write",
                                                                         "file_create"]), ("fio_after_listing", [])]


def test_job_file_has_one_group_per_metric_and_a_section_per_thread() -> None:
    w = Workload(engine="fio", tests=["write", "read", "file_create", "file_stat"], file_size="32KB",
                 record_size="8KB", files=20, sync="osync")
    text = job_file(w, "/mnt/v/run/c1", 3, fio_metrics(w))
    sections = re.findall(r"^\[([a-z_]+)\.(\d+)\]$", text, re.M)
    assert sections == [(m, str(k)) for m in ("write", "read", "file_create") for k in range(3)]
    assert text.count("new_group") == 3 and text.count("stonewall") == 3
    assert "directory=/mnt/v/run/c1" in text and "sync=1" in text and "direct=1" not in text
    assert text.count("end_fsync=1") == 3  # the large write only, as iozone -e times its flush
    assert "filename_format=files.2/f.$filenum" in text and "nrfiles=20" in text and f"size={32 * 1024 * 20}" in text
    assert "ioengine=filestat" not in text and "create_on_open=1" in text
    assert "end_fsync" not in job_file(w.model_copy(update={"include_flush": False}), "/d", 1, ["write"])


def test_a_shared_read_reads_the_first_clients_file_and_writes_its_own() -> None:
    with pytest.raises(ValueError, match="shared_read needs engine fio"):
        Workload(tests=["write", "read"], shared_read=True)
    with pytest.raises(ValueError, match="shared_read needs engine fio"):
        Workload(engine="fio", tests=["read"], shared_read=True)  # nothing lays out the file every client reads
    w = Workload(engine="fio", tests=["write", "read", "random"], file_size="1MB", record_size="64KB",
                 shared_read=True)
    assert w.identity["shared_read"] is True and "shared_read" not in Workload(engine="fio").identity
    text = job_file(w, "/m/run/c2", 2, fio_metrics(w), "/m/run/c1")
    sections = dict(re.findall(r"^\[([a-z_]+\.\d)\]\n(.*?)(?=\n\n|\Z)", text, re.M | re.S))
    for k in (0, 1):
        for m in ("read", "random_read"):  # every reader, of every client, reads the first client's first file
            assert "directory=/m/run/c1" in sections[f"{m}.{k}"] and "filename=big.0" in sections[f"{m}.{k}"]
        for m in ("write", "random_write"):  # writes stay each thread's own, in its client's directory
            assert "directory=" not in sections[f"{m}.{k}"] and f"filename=big.{k}" in sections[f"{m}.{k}"]
    assert "directory=/m/run/c2" in text and "unique_filename=0" in text
    assert "unique_filename" not in job_file(Workload(engine="fio", tests=["write", "read"]), "/d", 1, ["write"])
    with pytest.raises(ValueError, match="needs the directory"):
        job_file(w, "/d", 1, ["read"])


def test_large_files_spread_a_threads_records_over_files_of_whole_records() -> None:
    w = Workload(engine="fio", tests=["write", "read", "random"], file_size="1MB", record_size="8KB",
                 large_files=4)
    assert w.identity["large_files"] == 4 and "large_files" not in Workload(engine="fio").identity
    text = job_file(w, "/m/run/c1", 2, fio_metrics(w))
    sections = dict(re.findall(r"^\[([a-z_]+\.\d)\]\n(.*?)(?=\n\n|\Z)", text, re.M | re.S))
    for k in (0, 1):
        for m in ("write", "read", "random_write", "random_read"):
            body = sections[f"{m}.{k}"]
            # the thread's file_size in all, split by fio over its files, the read's the write's names
            assert f"filename_format=big.{k}.$filenum" in body and "nrfiles=4" in body, body
            assert f"size={1 << 20}" in body and "filename=" not in body
            service = "random" if m.startswith("random") else "sequential"
            assert f"file_service_type={service}" in body
    assert text.count("end_fsync=1") == 2  # the sequential write's flush, as with one file
    with pytest.raises(ValueError, match="needs engine fio"):
        Workload(tests=["write", "read"], large_files=2)
    with pytest.raises(ValueError, match="needs engine fio"):
        Workload(engine="fio", tests=["write", "read"], shared_read=True, large_files=2)
    with pytest.raises(ValueError, match="not whole 8k records"):
        Workload(engine="fio", file_size="1MB", record_size="8KB", large_files=3)


def test_a_trial_that_starts_on_files_lays_them_out_in_a_run_of_its_own() -> None:
    random = Workload(engine="fio", tests=["random"], file_size="1MB", record_size="8KB")
    assert fio_metrics(random)[0] == "random_read" and layout_metrics(random) == ["random_read"]
    assert layout_metrics(Workload(engine="fio", tests=["read"])) == ["read"]
    # a write makes its files as it is timed, and every later metric finds them
    assert layout_metrics(Workload(engine="fio", tests=["write", "read", "random"])) == []
    assert layout_metrics(Workload(engine="fio", tests=["write", "read"], shared_read=True)) == []
    assert layout_metrics(Workload(engine="fio", tests=["file_create", "file_stat"], file_size="4KB",
                                   record_size="4KB")) == []
    text = job_file(random, "/m/run/c1", 2, ["random_read"], layout=True)
    assert "create_only=1" in text.split("\n\n")[0]  # in [global]: every job only lays out
    assert "create_only" not in job_file(random, "/m/run/c1", 2, ["random_read"])


def test_server_addresses_in_fios_forms() -> None:
    assert server_address("10.0.0.5", 9000) == "ip:10.0.0.5,9000"
    assert server_address("fd00::5") == "ip6:fd00::5,8765"
    assert server_address("node-1.example") == "node-1.example,8765"
    assert client_argv({"10.0.0.5": "/t/a.fio"}, 9000)[-2:] == ["--client=ip:10.0.0.5,9000", "/t/a.fio"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def servers(tmp_path: Path) -> Iterator[tuple[int, list[str]]]:
    port = _free_port()
    addresses = ["127.0.0.1", "127.0.0.2"]
    procs = [subprocess.Popen(["fio", f"--server={server_address(a, port)}"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for a in addresses]
    deadline = time.monotonic() + 10
    for a in addresses:
        while True:
            try:
                socket.create_connection((a, port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
    yield port, addresses
    for p in procs:
        p.kill()
        p.wait()


def _run(tmp_path: Path, port: int, addresses: list[str], w: Workload, metrics: list[str],
         threads: int = 2) -> tuple[str, dict[str, Path]]:
    dirs, files = {}, {}
    for i, a in enumerate(addresses):
        d = tmp_path / f"client{i}"
        d.mkdir()
        dirs[a] = d
        f = tmp_path / f"job{i}.fio"
        f.write_text(job_file(w, str(d), threads, metrics))
        files[a] = str(f)
    done = subprocess.run(client_argv(files, port), capture_output=True, text=True, timeout=120)
    return done.stdout, dirs


@needs_fio
def test_real_fio_figures_per_metric_and_client(tmp_path: Path, servers: tuple[int, list[str]]) -> None:
    port, addresses = servers
    w = Workload(engine="fio", tests=["write", "read", "file_create", "file_stat", "file_read", "file_delete"],
                 file_size="16KB", record_size="16KB", files=40)
    metrics = fio_metrics(w)
    out, dirs = _run(tmp_path, port, addresses, w, metrics)
    figures = parse_client_json(out, metrics, addresses, 16 * 1024)
    assert set(figures.by_metric) == set(metrics)
    for m in metrics:
        assert set(figures.by_metric[m]) == set(addresses) and all(c.rate > 0 for c in figures.by_metric[m].values())
    totals = figures.totals()
    assert totals["write"] == pytest.approx(sum(c.rate for c in figures.by_metric["write"].values()))
    for a, d in dirs.items():
        # fio's server names files after the address its client reached it by; the read read what was written
        assert (d / f"{a}.big.0").stat().st_size == 16 * 1024 and (d / f"{a}.big.1").exists()
        assert not list((d / f"{a}.files.0").iterdir())  # every small file was created, then deleted
    kept = {name: (value, unit, lo, hi) for name, value, unit, lo, hi in figures.measurements()}
    assert kept["file_create"][1] == "files/s" and kept["write"][1] == "kB/s"
    assert kept["file_create.iops"][1] == "op/s"
    assert kept["read.p99_us"][0] >= kept["read.p50_us"][0] > 0
    lo, hi = kept["file_delete"][2], kept["file_delete"][3]
    assert lo is not None and hi is not None and lo <= hi
    # a client that reported nothing is named
    with pytest.raises(ParseError, match="no write figure from 10.9.9.9"):
        parse_client_json(out, metrics, [*addresses, "10.9.9.9"], 16 * 1024)


@needs_fio
def test_real_fio_shared_read_reads_only_the_first_clients_file(tmp_path: Path,
                                                                  servers: tuple[int, list[str]]) -> None:
    port, addresses = servers
    w = Workload(engine="fio", tests=["write", "read"], file_size="64KB", record_size="16KB", shared_read=True)
    dirs = {a: tmp_path / f"client{i}" for i, a in enumerate(addresses)}
    for d in dirs.values():
        d.mkdir()

    def run(metrics: list[str]) -> str:
        files = {}
        for a, d in dirs.items():
            f = tmp_path / f"{metrics[0]}-{a}.fio"
            f.write_text(job_file(w, str(d), 2, metrics, str(dirs[addresses[0]])))
            files[a] = str(f)
        return subprocess.run(client_argv(files, port), capture_output=True, text=True, timeout=120).stdout

    run(["write"])
    assert all((d / "big.1").stat().st_size == 64 * 1024 for d in dirs.values())  # names as written, unprefixed
    second = dirs[addresses[1]]
    for f in second.iterdir():
        f.unlink()
    figures = parse_client_json(run(["read"]), ["read"], addresses, 64 * 1024)
    # both clients read 2 x 64 KB; the second read none of its own (a read of its own would have laid it out)
    assert all(c.rate > 0 for c in figures.by_metric["read"].values())
    assert not list(second.iterdir())


@needs_fio
def test_real_fio_spreads_each_threads_records_over_its_files(tmp_path: Path,
                                                              servers: tuple[int, list[str]]) -> None:
    port, addresses = servers
    w = Workload(engine="fio", tests=["random"], file_size="256KB", record_size="8KB", large_files=4)
    metrics = fio_metrics(w)
    out, dirs = _run(tmp_path, port, addresses, w, metrics)
    figures = parse_client_json(out, metrics, addresses, 256 << 10)
    assert all(c.iops > 0 for per in figures.by_metric.values() for c in per.values())
    for a, d in dirs.items():
        for k in (0, 1):  # each thread's 256 KiB as four files of 64 KiB, laid out, written and read
            files = sorted(d.glob(f"{a}.big.{k}.*"))
            assert [f.name for f in files] == [f"{a}.big.{k}.{n}" for n in range(4)]
            assert all(f.stat().st_size == 64 << 10 for f in files)


@needs_fio
def test_real_fio_layout_run_makes_the_files_and_times_nothing(tmp_path: Path,
                                                              servers: tuple[int, list[str]]) -> None:
    port, addresses = servers
    w = Workload(engine="fio", tests=["random"], file_size="256KB", record_size="8KB", large_files=4)
    files = {}
    for i, a in enumerate(addresses):
        (tmp_path / f"c{i}").mkdir()
        (tmp_path / f"j{i}.fio").write_text(job_file(w, str(tmp_path / f"c{i}"), 2, layout_metrics(w),
                                                     layout=True))
        files[a] = str(tmp_path / f"j{i}.fio")
    done = subprocess.run(client_argv(files, port), capture_output=True, text=True, timeout=120)
    check_layout(done.stdout, ["random_read"], addresses)
    for i, a in enumerate(addresses):  # every thread's files at their full size before anything is timed
        made = sorted((tmp_path / f"c{i}").glob(f"{a}.big.*"))
        assert len(made) == 8 and all(f.stat().st_size == 64 << 10 for f in made)
    # a job fio cannot set up is dropped, with a line on stderr only: the client that laid out nothing is named
    with pytest.raises(ParseError, match=f"{addresses[0]}: cannot parse fio layout output: no layout of random_read"):
        (tmp_path / "plain").write_text("a file where a directory should be")
        (tmp_path / "bad.fio").write_text(job_file(w, str(tmp_path / "plain"), 1, ["random_read"], layout=True))
        bad = subprocess.run(client_argv({addresses[0]: str(tmp_path / "bad.fio")}, port), capture_output=True,
                             text=True, timeout=120)
        check_layout(bad.stdout, ["random_read"], addresses[:1])


@needs_fio
def test_a_failed_fio_job_is_named_with_its_errno(tmp_path: Path, servers: tuple[int, list[str]]) -> None:
    port, addresses = servers
    w = Workload(engine="fio", tests=["file_create"], file_size="4KB", record_size="4KB", files=3)
    (tmp_path / "plain").write_text("a file where its directory should be")
    text = job_file(w, str(tmp_path / "plain"), 1, ["file_create"])
    (tmp_path / "j.fio").write_text(text)
    done = subprocess.run(client_argv({addresses[0]: str(tmp_path / "j.fio")}, port), capture_output=True,
                          text=True, timeout=60)
    with pytest.raises(ParseError) as err:
        parse_client_json(done.stdout, ["file_create"], [addresses[0]], 4096)
    assert err.value.host == addresses[0] or "127.0.0.1" in str(err.value)


def test_listing_counts_and_times_every_file(tmp_path: Path) -> None:
    for k in range(2):
        (tmp_path / f"10.0.0.5.files.{k}").mkdir()
        for i in range(25):
            (tmp_path / f"10.0.0.5.files.{k}" / f"f.{i}").write_text("x")
    out = subprocess.run(["sh", "-c", listing_script(str(tmp_path), 2)], capture_output=True, text=True,
                         check=True).stdout
    assert parse_timed(out, "c1", 50, "file listing") > 0
    with pytest.raises(ParseError, match="reached 50 of the 60 files"):
        parse_timed(out, "c1", 60, "file listing")
    with pytest.raises(ParseError, match="no GLMTIMED line"):
        parse_timed("ls: cannot access", "c1", 1, "file listing")


def test_stats_and_reads_wait_then_reach_every_file_by_name_without_listing(tmp_path: Path) -> None:
    """The cold stats and reads: each thread's files by name (a missing one is not counted, and the count names
    it), after the wait asked for; never a listing of the files' directories (its readdirp would fill md-cache).
    A read counts whole files by the bytes read."""
    for k in range(3):
        (tmp_path / f"10.0.0.5.files.{k}").mkdir()
        for i in range(12):
            (tmp_path / f"10.0.0.5.files.{k}" / f"f.{i}").write_text("x" * 100)
    for test in ("file_stat", "file_read"):
        script = cold_script(str(tmp_path), 3, 12, 100, test, wait_s=0.3)
        assert "ls " not in script and "find " not in script and "sleep 0.3;" in script
        start = time.monotonic()
        out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=True).stdout
        assert time.monotonic() - start >= 0.3
        assert parse_timed(out, "c1", 36, test) > 0, test
    (tmp_path / "10.0.0.5.files.1" / "f.7").unlink()
    for test in ("file_stat", "file_read"):
        out = subprocess.run(["sh", "-c", cold_script(str(tmp_path), 3, 12, 100, test, wait_s=0)],
                             capture_output=True, text=True, check=True).stdout
        with pytest.raises(ParseError, match="reached 35 of the 36 files") as err:
            parse_timed(out, "c1", 36, test)
        assert err.value.host == "c1"
    # file numbers past a million stay names fio gives (f.1000000, not f.1e+06)
    assert "seq -f 'f.%.0f' 0 1199999" in cold_script("/d", 1, 1_200_000, 4096)
    with pytest.raises(ValueError, match="a stat or a read"):
        cold_script("/d", 1, 1, 1, "file_delete")


def test_fio_2_json_without_bw_bytes_and_clat_ns_reads_the_same() -> None:
    """fio before 3.0 writes KiB/s under "bw" and microseconds under "clat"; fio 3 bytes/s and nanoseconds: one
    measurement, written both ways, gives the same figures."""
    import json

    def stats(side: dict[str, object]) -> str:
        return json.dumps({"client_stats": [{"jobname": "random_write.0", "hostname": "10.0.0.1", "error": 0,
                                             "write": side, "read": {}}]})

    old = stats({"bw": 2048, "iops": 512.0, "clat": {"percentile": {"50.000000": 900, "99.000000": 4100}}})
    new = stats({"bw_bytes": 2048 * 1024, "iops": 512.0,
                 "clat_ns": {"percentile": {"50.000000": 900_000, "99.000000": 4_100_000}}})
    for text in (old, new):
        figure = parse_client_json(text, ["random_write"], ["10.0.0.1"], 64 << 20).by_metric["random_write"]["10.0.0.1"]
        assert (figure.rate, figure.iops, figure.latency_us) == (2048.0, 512.0, {"p50": 900.0, "p99": 4100.0})

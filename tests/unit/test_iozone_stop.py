"""Stopping iozone: the watchdog's stall rule, a stop that reaches the whole process group, and the master's
port: a stale glmodel master is told apart from a process to name."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from gluster_model.bench import iozone
from gluster_model.bench.iozone_ports import MASTER_PORTS, Holder, free_master_port, holders
from gluster_model.errors import GlmodelError

C = iozone.ChildrenLook  # one look at a trial's children: their I/O, and the clients that did not answer


def _group(script: str) -> subprocess.Popen[str]:
    """A shell in its own session that forks a background child, as iozone's master forks its listener."""
    return subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _alive(pgid: int) -> list[int]:
    out = []
    for p in psutil.process_iter():
        try:
            if _pgid(p) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                out.append(p.pid)
        except psutil.Error:
            pass  # ended meanwhile
    return out


def _gone(pgid: int, limit: float = 3.0) -> bool:
    deadline = time.monotonic() + limit
    while _alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _pgid(p: psutil.Process) -> int | None:
    try:
        return os.getpgid(p.pid)
    except (ProcessLookupError, psutil.Error):
        return None


def test_a_start_that_does_no_io_is_stopped_and_its_whole_group_ends(tmp_path: Path) -> None:
    proc = _group("trap '' TERM; sleep 300 & echo 'Test running:'; wait")  # ignores SIGTERM, as a stuck child
    looks: list[float] = []
    started = time.monotonic()
    watch = iozone._watch_master(proc, started, 600, tmp_path / "ended", 1.0,
                                 lambda: looks.append(time.monotonic()) or C({}))
    assert watch.stalled and watch.failure is not None and watch.failure.startswith(
        "iozone's children did no I/O in 1s")
    assert time.monotonic() - started < 1.0 + iozone.STOP_GRACE_S + 3
    assert "Test running:" in watch.stdout and len(looks) == 2  # at half the timeout and at the timeout
    # The shell ignored SIGTERM; SIGKILL to the group ended it and its sleep (the kernel may take a moment).
    assert _gone(proc.pid)


def test_children_that_stop_doing_io_are_stopped_and_a_long_phase_that_does_io_is_not(tmp_path: Path) -> None:
    counts = iter([10, 20, 30, 40, 40, 40, 40])  # I/O grows for four looks, then stands still
    proc = _group("sleep 300")
    watch = iozone._watch_master(proc, time.monotonic(), 600, tmp_path / "ended", 0.4,
                                 lambda: C({"c1:100": next(counts)}))
    assert watch.stalled and watch.failure is not None and "did no more I/O in the last 0s" in watch.failure
    assert next(counts) == 40  # stopped at the sixth look: two looks without growth


def test_a_new_test_phase_is_progress_although_its_fresh_processes_have_counted_less(tmp_path: Path) -> None:
    # iozone starts a child process per test: the write phase's children had moved 700 MB when the read phase's
    # began from zero. A sum over the living processes falls; the trial is still moving (seen on the lab).
    looks = iter([{"c1:10": 500, "c2:11": 400}, {"c1:10": 700, "c2:11": 600}, {"c1:20": 5, "c2:21": 3},
                  {"c1:20": 90, "c2:21": 40}, {"c1:30": 1}, {"c1:30": 1}, {"c1:30": 1}, {"c1:30": 1}])
    proc = _group("sleep 300")
    watch = iozone._watch_master(proc, time.monotonic(), 600, tmp_path / "ended", 0.4, lambda: C(next(looks)))
    assert watch.stalled and watch.failure is not None
    assert next(looks) == {"c1:30": 1}  # stopped at the seventh look, only after the last phase stood still


def test_a_client_that_answers_neither_of_two_looks_stalls_the_trial_while_others_still_write(tmp_path: Path) -> None:
    """A host gone silent (its packets dropped) holds its child forever, while a replica's other copies go on for
    Gluster's ping timeout: the trial is stalled at the second look the host misses in a row, naming it, and a
    look it misses once (a slow answer) is not a stall."""
    looks = iter([C({"c1:10": 10, "c2:11": 10}), C({"c1:10": 20}, frozenset({"c2"})), C({"c1:10": 30, "c2:11": 30}),
                  C({"c1:10": 40}, frozenset({"c2"})), C({"c1:10": 50}, frozenset({"c2"})), C({"c1:10": 60})])
    proc = _group("sleep 300")
    watch = iozone._watch_master(proc, time.monotonic(), 600, tmp_path / "ended", 0.4, lambda: next(looks))
    assert watch.stalled and watch.failure is not None
    assert watch.failure.startswith("iozone's children on c2 answered neither of two looks"), watch.failure
    assert next(looks) == C({"c1:10": 60})  # stopped at the fifth look, the second that c2 missed in a row


def test_io_moved_counts_growth_and_new_processes_only() -> None:
    assert iozone.io_moved({"a:1": 5}, {"a:1": 6})
    assert iozone.io_moved({"a:1": 5}, {"a:2": 1})
    assert not iozone.io_moved({"a:1": 5, "a:2": 3}, {"a:1": 5})
    assert not iozone.io_moved({}, {})
    assert not iozone.io_moved({}, {"a:1": 0})  # started, did nothing: a stuck start is no progress


def test_the_watchdog_never_looks_at_a_trial_shorter_than_half_its_timeout(tmp_path: Path) -> None:
    proc = _group("sleep 1.5; echo done")
    looks: list[int] = []
    watch = iozone._watch_master(proc, time.monotonic(), 600, tmp_path / "ended", 4.0,
                                 lambda: looks.append(1) or C({}))
    assert watch.failure is None and watch.stdout.strip() == "done" and looks == []


def test_a_timeout_stops_the_group_with_sigterm_first(tmp_path: Path) -> None:
    marker = tmp_path / "term"
    proc = _group(f"trap 'echo term > {marker}; exit 0' TERM; while :; do sleep 0.1; done")
    watch = iozone._watch_master(proc, time.monotonic(), 1.0, tmp_path / "ended", 600, lambda: C({"c:1": 1}))
    assert watch.failure == "timed out after 1s" and not watch.stalled
    assert marker.read_text().strip() == "term"  # iozone's handler gets to clean up
    assert _gone(proc.pid)


@pytest.mark.parametrize("command, stale", [
    ("iozone -+m /tmp/glmodel-iozone-gone123/clients -+h 127.0.0.1 -t 3", True),
    ("/usr/bin/iozone -+m /tmp/glmodel-iozone-gone123/clients -t 1", True),
    ("iozone -+m /tmp/by-hand/clients -+h 127.0.0.1 -t 3", False),          # not glmodel's: named, not ended
    ("iozone -+s -t 1 -r 4 -s 4 -+c 127.0.0.1", False),                       # a child, reaped by the master's host
    ("python3 -m http.server 20000", False),
    ("iozone -+m", False),
])
def test_only_a_glmodel_master_whose_trial_is_over_counts_as_stale(command: str, stale: bool) -> None:
    assert Holder(20000, 1, command).stale_glmodel_master is stale


def test_a_live_master_directory_is_not_stale(tmp_path: Path) -> None:
    d = tmp_path / "glmodel-iozone-live"
    d.mkdir()
    (d / "clients").write_text("")
    assert not Holder(20000, 1, f"iozone -+m {d}/clients -t 1").stale_glmodel_master


def test_a_foreign_process_on_the_master_port_is_named_in_one_line() -> None:
    """Never skipped: a leaked glmodel master (the bug this guards against) fails the test, and the foreign
    holder is this test's own socket on a master port nothing else holds, named whatever else listens."""
    leaked = [h for h in holders() if h.stale_glmodel_master]
    assert not leaked, f"a glmodel iozone master outlived its trial: {leaked[0]}"
    taken = {h.port for h in holders()}
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        for port in range(MASTER_PORTS.stop - 1, MASTER_PORTS.start - 1, -1):  # from the top: iozone starts low
            if port in taken:
                continue
            try:
                s.bind(("127.0.0.1", port))
                break
            except OSError:
                continue
        else:
            raise AssertionError("every port of iozone's master range is taken on this machine")
        s.listen()
        with pytest.raises(GlmodelError) as err:
            free_master_port()
    msg = str(err.value)
    assert "\n" not in msg and "port 20000-21023" not in msg
    mine = f"pid {os.getpid()} ("
    others = [h for h in holders() if h.port in MASTER_PORTS]
    # ours is named unless three holders on lower ports come first, which the message then counts
    assert mine in msg or f"and {len(others) + 1 - 3} more" in msg, msg
    assert f"port {port}" in msg or "more)" in msg


def test_a_look_between_two_tests_that_finds_no_child_does_not_stop_the_trial(tmp_path: Path) -> None:
    # Seen on the lab: the look at 60 s fell between the write test's children and the next test's, found none,
    # and the trial (its write already done) was stopped as if it had never started.
    looks = iter([{"c1:10": 500}, {}, {"c1:20": 7}, {"c1:20": 7}, {"c1:20": 7}, {"c1:20": 7}])
    proc = _group("sleep 300")
    watch = iozone._watch_master(proc, time.monotonic(), 600, tmp_path / "ended", 0.4, lambda: C(next(looks)))
    assert watch.stalled and "did no more I/O" in (watch.failure or "")
    assert next(looks) == {"c1:20": 7}  # stopped at the fifth look: the two intervals before it idle


def test_a_master_is_ended_once_its_last_expected_result_is_printed(tmp_path: Path) -> None:
    """iozone sleeps 4 s after its last result before it says it is complete: the watch ends it instead, with
    SIGTERM to its group, and keeps everything it printed."""
    marker = tmp_path / "term"
    block = ("Children see throughput for 2 initial writers = 100.00 kB/sec\\nMin throughput per process = 50.00 "
             "kB/sec\\nMax throughput per process = 50.00 kB/sec\\nAvg throughput per process = 50.00 kB/sec\\n"
             "Min xfer = 1024.00 kB\\n")
    proc = _group(f"trap 'echo term > {marker}; exit 0' TERM; printf '{block}'; sleep 30 & wait; "
                  "echo 'iozone test complete.'")
    started = time.monotonic()
    watch = iozone._watch_master(proc, started, 600, tmp_path / "ended", 600, lambda: C({}), ["write"])
    assert watch.ended_after_results and watch.failure is None
    assert time.monotonic() - started < iozone.RESULTS_GRACE_S + 2
    assert "Min xfer" in watch.stdout and "complete" not in watch.stdout
    assert marker.read_text().strip() == "term" and _gone(proc.pid)
    # a master that has not printed every expected result is left to run
    proc = _group(f"printf '{block}'; sleep 0.8; echo 'iozone test complete.'")
    watch = iozone._watch_master(proc, time.monotonic(), 600, tmp_path / "ended", 600, lambda: C({}), ["write", "read"])
    assert not watch.ended_after_results and "iozone test complete." in watch.stdout


def test_the_run_directory_is_left_on_a_volume_with_a_silent_server(tmp_path: Path) -> None:
    """After a trial, the first client removes the run's directory; with a server found silent that removal
    would wait out the client's ping timeout, so it is left for the volume's teardown (the children are still
    reaped)."""
    from gluster_model.config.cluster import cluster_from_data

    from ..fakes import FakeExecutor

    c = cluster_from_data({"servers": [{"host": f"127.1.1.{i}", "brick_paths": ["/b"]} for i in (1, 2)],
                           "clients": ["127.1.1.3", "127.1.1.4"]}, "c.yaml", tmp_path)
    points = {h.address: f"/mnt/{h.address}" for h in c.clients}
    for silent, removed in ((None, True), ("127.1.1.2", False), ("127.1.1.4", True)):
        ex = FakeExecutor(cluster=c)
        if silent is not None:
            ex.mark_silent(silent, "no answer")
        iozone._cleanup(ex, list(c.clients), points, "glmodel-run-1", "once")
        assert bool(ex.ran(r"rm -rf -- /mnt/127\.1\.1\.3/glmodel-run-1")) is removed, silent
        assert set(ex.ran("iozone")) == {h.address for h in c.clients} - {silent}  # children reaped where it can

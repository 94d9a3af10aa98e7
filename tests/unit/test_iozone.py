"""iozone: argv and client-file builders, RSH wrapper, and parsers on output captured from the lab."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gluster_model.bench.iozone import build_argv, client_file, rsh_wrapper

from gluster_model.bench.workload import Workload
from gluster_model.bench.iozone_parse import (parse_auto, parse_iozone, parse_runs, parse_throughput, results_complete,
                                             split_runs)
from gluster_model.config.cluster import cluster_from_data
from gluster_model.errors import ParseError

IZ = Path(__file__).parent.parent / "data" / "iozone"
DIST = (IZ / "dist_lab_3threads_norestest.txt").read_text()


def test_distributed_capture() -> None:
    out = parse_throughput(DIST, ["write", "read", "random_read", "random_write"])
    assert out.version == "3.489" and out.flags == ("fsync", "close") and out.unit == "kB/s"
    w = out.metrics["write"]
    assert (w.threads, w.children_kbps, w.min_kbps, w.max_kbps, w.avg_kbps) == (3, 272092.85, 84331.59, 93884.09, 90697.62)
    assert out.metrics["random_write"].children_kbps == 289369.12 and out.metrics["read"].min_xfer_kb == 16384.0


def test_local_capture_with_retests_and_parent_lines() -> None:
    out = parse_iozone((IZ / "throughput_2threads_retests.txt").read_text())
    assert list(out.metrics) == ["write", "rewrite", "read", "reread", "random_read", "random_write"]
    assert out.metrics["reread"].children_kbps == 8323261.75
    odirect = parse_iozone((IZ / "odirect_1thread.txt").read_text())
    assert "O_DIRECT" in odirect.flags and odirect.metrics["rewrite"].parent_kbps == 17705.39


def test_auto_table() -> None:
    out = parse_auto((IZ / "auto_table.txt").read_text())
    assert out.mode == "auto" and out.table[0] == {
        "file_kb": 64, "record_kb": 4, "write": 24604, "rewrite": 21024, "read": 5860307, "reread": 5860307,
        "random_read": 679917, "random_write": 20227}
    assert {(r["file_kb"], r["record_kb"]) for r in out.table} >= {(256, 64), (128, 32)}


def test_truncated_and_garbled() -> None:
    with pytest.raises(ParseError, match="truncated after write, read"):
        parse_throughput(DIST[: DIST.index("Children see throughput for 3 random readers")])
    cut = DIST[: DIST.index("Min throughput per process")] + "\n\nTest running:\n iozone test complete.\n"
    with pytest.raises(ParseError, match="'write' block lacks its min/max/avg"):
        parse_throughput(cut)
    with pytest.raises(ParseError, match="expected test 'rewrite' is missing"):
        parse_throughput(DIST, ["write", "rewrite"])
    with pytest.raises(ParseError, match="no 'Children see throughput'"):
        parse_throughput("iozone: command not found")
    auto = (IZ / "auto_table.txt").read_text()
    with pytest.raises(ParseError, match="non-numeric cell"):
        parse_auto(auto.replace(" 24604 ", " 2x604 ", 1))
    whole = parse_auto(auto)
    assert whole.notes == ()
    # Rows complete, iozone's closing line missing (pasted from elsewhere): the rows are read, the gap said.
    pasted = parse_auto(auto[: auto.index("iozone test complete.")])
    assert pasted.table == whole.table
    assert pasted.notes == (f"no 'iozone test complete.' line: the end of the output is missing; "
                            f"{len(whole.table)} complete row(s) read",)
    # Cut in the middle of a row: the rows before it, and the cut row left out (not "a cell under no column").
    cut = parse_auto(auto[: auto.index(" 46379 ") + 4])  # in the second row
    assert cut.table == whole.table[:1] and cut.notes[0].endswith("1 complete row(s) read; a last row cut "
                                                                  "mid-line left out")
    with pytest.raises(ParseError, match="header without any result row"):
        parse_auto(auto[: auto.index("reclen") + 200].rsplit("\n", 1)[0] + "\n")


def test_argv() -> None:
    w = Workload(threads=3, file_size="16MB", record_size="64KB", tests=["random", "read"], sync="odirect")
    assert build_argv(w, "/tmp/c", "10.0.0.9") == [
        "iozone", "-+m", "/tmp/c", "-+h", "10.0.0.9", "-t", "3", "-s", "16384k", "-r", "64k",
        "-i", "0", "-i", "1", "-i", "2", "-I", "-e", "-c", "-+n", "-w"]
    osync = Workload(tests=["write"], sync="osync", include_flush=False, retests=True)
    assert build_argv(osync, "c", "m")[-3:] == ["-o", "-c", "-w"]
    assert osync.expected_metrics() == ["write", "rewrite"]


def test_client_file_round_robin() -> None:
    text = client_file(4, [("a", "/m/a"), ("b", "/m/b")])
    assert text == "a /m/a /usr/bin/iozone\nb /m/b /usr/bin/iozone\na /m/a /usr/bin/iozone\nb /m/b /usr/bin/iozone\n"


def test_rsh_wrapper_is_valid_sh_with_strict_keys(tmp_path: Path) -> None:
    (tmp_path / "id").write_text("k")
    c = cluster_from_data({"ssh": {"identity_file": str(tmp_path / "id"), "known_hosts": "/k h"},
                           "servers": [{"host": "10.0.0.1", "brick_paths": ["/b"], "ssh": {"port": 2200}}]},
                          "c.yaml", tmp_path)
    script = rsh_wrapper(c, list(c.hosts), ssh="echo")
    assert "StrictHostKeyChecking=yes" in script and "BatchMode=yes" in script
    (tmp_path / "rsh").write_text(script)
    ok = subprocess.run(["sh", str(tmp_path / "rsh"), "10.0.0.1", "iozone", "-+s"], capture_output=True, text=True)
    assert ok.returncode == 0
    assert "-p 2200" in ok.stdout and "UserKnownHostsFile=/k h" in ok.stdout and ok.stdout.rstrip().endswith(
        "10.0.0.1 iozone -+s")
    bad = subprocess.run(["sh", str(tmp_path / "rsh"), "evil.example", "id"], capture_output=True, text=True)
    assert bad.returncode == 255 and "not in the cluster file" in bad.stderr


def test_rsh_wrapper_records_children_whose_ssh_failed(tmp_path: Path) -> None:
    from gluster_model.bench.iozone import ended_children

    c = cluster_from_data({"servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]},
                                       {"host": "10.0.0.2", "brick_paths": ["/b"]}]}, "c.yaml", tmp_path)
    ended = tmp_path / "ended file"
    for ssh, host in (("true", "10.0.0.1"), ("false", "10.0.0.2")):
        (tmp_path / "rsh").write_text(rsh_wrapper(c, list(c.hosts), ssh=ssh, ended=str(ended)))
        done = subprocess.run(["sh", str(tmp_path / "rsh"), host, "iozone", "-+s"], capture_output=True, text=True)
        assert done.returncode == (0 if ssh == "true" else 1)  # the child's status passes through
    # Only the failed one is written down, with its status; a child that ended well is not.
    assert ended_children(ended.read_text()) == [("10.0.0.2", 1)]
    assert ended_children("garbage\n10.0.0.3 255\n") == [("10.0.0.3", 255)]


def test_reap_matches_only_the_children_of_this_master() -> None:
    import re

    from gluster_model.bench.iozone import reap_argv

    argv = reap_argv("127.0.0.1")
    assert argv[:3] == ["pkill", "-KILL", "-f"]
    pattern = re.compile(argv[3])
    assert pattern.search("/usr/bin/iozone -+s -t 1 -r 4 -s 4 -+c 127.0.0.1")
    assert not pattern.search("/usr/bin/iozone -+s -t 1 -r 4 -s 4 -+c 127.0.0.10")  # another master
    assert not pattern.search("/usr/bin/iozone -+s -t 1 -r 4 -s 4 -+c 127a0b0c1")  # dots are literal
    assert not pattern.search("iozone -+m clients -+h 127.0.0.1 -t 4")  # the master itself
    assert not pattern.search(f"sh -c {' '.join(argv)}")  # nor the shell that runs pkill remotely


def test_ops_per_second_output_is_read_as_ops_never_as_kb() -> None:
    # Captured: iozone -t 2 -O -s 4m -r 64k -i 0 -i 1 (iozone 3.489).
    out = parse_throughput((IZ / "throughput_ops_O_flag.txt").read_text())
    assert out.unit == "ops/s"
    assert out.metrics["write"].children_kbps == 63179.04 and out.metrics["reread"].children_kbps == 241913.04
    mixed = (IZ / "throughput_ops_O_flag.txt").read_text().replace("241913.04 ops/sec", "241913.04 kB/sec")
    with pytest.raises(ParseError, match="both kB/sec and ops/sec"):
        parse_throughput(mixed)


def test_a_file_of_several_runs_is_refused_whole_and_read_run_by_run() -> None:
    # Captured: two iozone -t 1 -i 0 runs (2 MB / 64 KB records, then 4 MB / 128 KB) appended to one file.
    text = (IZ / "two_runs_one_file.txt").read_text()
    with pytest.raises(ParseError, match="holds 2 runs"):
        parse_throughput(text)
    runs = parse_runs(text)
    assert [r.metrics["write"].children_kbps for r in runs] == [2470639.75, 4289813.50]
    assert [r.metrics["rewrite"].children_kbps for r in runs] == [6440169.50, 5920406.50]
    assert runs[0].command is not None and "-s 2m" in runs[0].command and "-s 4m" in str(runs[1].command)
    # One run whose test is reported twice (pasted output) is refused, not answered with the last figure.
    one = runs[0]
    assert one.mode == "throughput"
    doubled = split_runs(text)[0].replace("iozone test complete.", "") + split_runs(text)[1].split(
        "Command line used")[1].split("\n", 1)[1]
    with pytest.raises(ParseError, match="reported twice"):
        parse_throughput(doubled)


def test_auto_tables_of_this_and_older_iozone_versions() -> None:
    # Captured: iozone -a -s 1m -y 64k -q 256k -i 0 -i 1 -i 2 (3.489): 6 of 15 columns filled, rest blank.
    now = parse_auto((IZ / "auto_1mb_three_tests.txt").read_text())
    assert now.table[1] == {"file_kb": 1024, "record_kb": 128, "write": 4995276, "rewrite": 23754601,
                            "read": 26380939, "reread": 12790037, "random_read": 11614118, "random_write": 12639479}
    # Older versions' layout ("KB  reclen", "Output is in Kbytes/sec", rows of 8 cells under a 15-column
    # header), re-printed from the capture above since no older iozone is packaged here.
    old = parse_auto((IZ / "auto_old_KB_header_8_columns.txt").read_text())
    assert old.version == "3.308" and len(old.table) == 3
    assert old.table[2] == {"file_kb": 1024, "record_kb": 256, "write": 541742, "rewrite": 2687618,
                            "read": 3007560, "reread": 2774424, "random_read": 2687618, "random_write": 2848013}
    ops = (IZ / "auto_1mb_three_tests.txt").read_text().replace("Output is in kBytes/sec", "Output is in ops/sec")
    with pytest.raises(ParseError, match="operations per second"):
        parse_auto(ops)


def test_reap_until_quiet_ends_a_child_that_starts_after_the_first_look(tmp_path: Path) -> None:
    # An ssh session still starting its child when the trial was stopped: the child appears a moment after the
    # first pkill. A single pkill misses it; the reap keeps looking until three looks in a row find none.
    import time

    from gluster_model.bench.iozone import reap_until_quiet_script

    master = "10.99.0.1"
    late = subprocess.Popen(["bash", "-c", f'sleep 0.6; exec -a "iozone -+s -t 1 -r 4 -s 4 -+c {master}" sleep 60'])
    other = subprocess.Popen(["bash", "-c", 'exec -a "iozone -+s -t 1 -r 4 -s 4 -+c 10.99.0.10" sleep 60'])
    try:
        started = time.monotonic()
        done = subprocess.run(["sh", "-c", reap_until_quiet_script(master, quiet=3, interval=0.5, limit=20)],
                              timeout=30)
        took = time.monotonic() - started
        assert done.returncode == 0
        assert late.wait(timeout=5) == -9  # killed, although it started after the first look
        assert other.poll() is None  # another master's child is not touched
        assert 1.4 <= took < 6, took  # it stops after the quiet looks, not at its limit
    finally:
        for p in (late, other):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_results_are_complete_only_once_the_last_expected_block_is_whole() -> None:
    every = ["write", "read", "random_read", "random_write"]
    before_end = DIST[: DIST.index("iozone test complete.")]
    assert results_complete(before_end, every) and results_complete(DIST, every)
    # cut inside the last block: its "Min xfer" line is not printed yet
    cut = before_end[: before_end.rindex("Min xfer")]
    assert not results_complete(cut, every) and results_complete(cut, every[:3])
    assert not results_complete(before_end, [*every, "rewrite"]) and not results_complete(before_end, [])
    # a master ended once its results were whole reads like one that said it was complete
    early = parse_throughput(before_end, every, ended_after_results=True)
    assert early.metrics == parse_throughput(DIST, every).metrics
    with pytest.raises(ParseError, match="truncated"):
        parse_throughput(before_end, every)  # not ended by glmodel: a missing end is a truncated output
    with pytest.raises(ParseError, match="not whole"):
        parse_throughput(cut, every, ended_after_results=True)


def test_the_children_share_one_connection_per_host_from_a_private_directory(tmp_path: Path) -> None:
    import os
    import stat

    from gluster_model.remote.ssh_mux import SshMux

    mux = SshMux()
    opts = mux.options()
    assert opts[0::2] == ["-o"] * 5 and opts[1] == "ControlMaster=auto" and opts[5].startswith("ControlPersist=")
    assert "ServerAliveInterval=5" in opts  # a master to a host that dropped off is given up
    where = Path(opts[3].removeprefix("ControlPath=")).parent
    assert opts[3].endswith("/%C") and where.is_dir()
    assert stat.S_IMODE(os.stat(where).st_mode) == 0o700  # a socket there runs commands without a key
    assert mux.options() == opts  # one directory for the process
    c = cluster_from_data({"servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}]}, "c.yaml", tmp_path)
    (tmp_path / "rsh").write_text(rsh_wrapper(c, list(c.hosts), ssh="echo", shared=opts))
    out = subprocess.run(["sh", str(tmp_path / "rsh"), "10.0.0.1", "iozone", "-+s"], capture_output=True,
                         text=True).stdout
    assert f"ControlPath={where}/%C" in out and "StrictHostKeyChecking=yes" in out
    mux.close()
    assert not where.exists()
    again = mux.options()
    assert again != opts and Path(again[3].removeprefix("ControlPath=")).parent.is_dir()
    mux.close()

"""iperf3 and fio: pure command builders and parsers, on output captured on the lab and elsewhere."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from gluster_model.bench.fio import (BrickBaseline, DiskJob, DiskSpec, DiskTest, HostDisks, disk_script, fio_argv,
                                    limited_everywhere, measuring_order, over_limit, parse_fio_json, same_device,
                                    slowed)
from gluster_model.hardware.limits import parse_under, parse_throttles
from gluster_model.bench.iperf import (
    IperfMatrix,
    IperfSpec,
    PairResult,
    client_argv,
    client_script,
    parse_iperf_json,
    plan_pairs,
    server_script,
    unheld_pairs,
)
from gluster_model.config.cluster import cluster_from_data
from gluster_model.errors import ParseError
from gluster_model.remote.sections import parse_sections

DATA = Path(__file__).parent.parent / "data"


def _cluster(servers: list[str], clients: list[str]):  # type: ignore[no-untyped-def]
    return cluster_from_data({
        "name": "t",
        "servers": [{"host": h, "brick_paths": ["/data/b"]} for h in servers],
        "clients": [{"host": h} for h in clients],
    }, "t.yaml", Path("."))


def test_iperf_lab_captures() -> None:
    sent, received, retr = parse_iperf_json((DATA / "iperf3" / "lab-3.12-P2.json").read_text())
    raw = json.loads((DATA / "iperf3" / "lab-3.12-P2.json").read_text())
    assert raw["start"]["test_start"]["num_streams"] == 2  # two streams summed in 'end'
    assert received == raw["end"]["sum_received"]["bits_per_second"] > 1e9 and sent >= received * 0.99
    assert retr == raw["end"]["sum_sent"]["retransmits"]
    _, rev, _ = parse_iperf_json((DATA / "iperf3" / "lab-3.12-reverse.json").read_text())
    assert rev > 1e9


def test_iperf_elsewhere_and_failures() -> None:
    sent, received, retr = parse_iperf_json((DATA / "iperf3" / "elsewhere-3.6-zero-received.json").read_text())
    assert (round(sent), received, retr) == (6821690, 0.0, 0)
    with pytest.raises(ParseError, match="iperf3 reported: unable to connect to server: Connection refused"):
        parse_iperf_json((DATA / "iperf3" / "lab-3.12-refused.json").read_text(), "127.1.1.1")
    good = (DATA / "iperf3" / "lab-3.12-P2.json").read_text()
    with pytest.raises(ParseError, match="invalid JSON .*truncated"):
        parse_iperf_json(good[: len(good) // 2])
    with pytest.raises(ParseError, match="no JSON object"):
        parse_iperf_json("iperf3: error - unable to connect")
    with pytest.raises(ParseError, match="lacks sum_sent"):
        parse_iperf_json(good.replace('"sum_received"', '"sum_elsewhere"'))
    with pytest.raises(ParseError, match="no 'end' summary"):
        parse_iperf_json('{"start": {}, "intervals": []}')


def test_iperf_pairs_and_scripts() -> None:
    c = _cluster(["10.0.0.1", "10.0.0.2"], ["10.0.0.1", "10.0.0.3"])
    pairs = plan_pairs(c, 5300)
    # 10.0.0.1 is both; it is not paired with itself.
    assert [(p.client.address, p.server.address, p.port) for p in pairs] == [
        ("10.0.0.1", "10.0.0.2", 5300), ("10.0.0.3", "10.0.0.1", 5301), ("10.0.0.3", "10.0.0.2", 5301)]
    single = _cluster(["10.0.0.1"], ["10.0.0.1"])
    assert len(plan_pairs(single, 5201)) == 1  # nothing else to pair with
    spec = IperfSpec(seconds=3, streams=4)
    argv = client_argv(pairs[0], spec, "read")
    assert argv[:6] == ["iperf3", "-c", "10.0.0.2", "-p", "5300", "-B"] and argv[-2:] == ["-J", "-R"]
    assert "-P" in argv and argv[argv.index("-P") + 1] == "4"
    script = client_script(pairs[1:], spec, "write", "abc")
    assert script.count(" & p") == 2 and "wait $p1" in script and "-R" not in script
    synced = client_script(pairs[1:], spec, "write", "abc", start_ns=1_700_000_000_123_456_789)
    # Every client sleeps to the same wall-clock instant before its pairs start, and says how late it began.
    assert "1700000000123456789" in synced.splitlines()[0] and "late=" in synced.splitlines()[0]
    assert [ln for ln in synced.splitlines()[1:] if "late" not in ln] == script.splitlines()
    srv = server_script(c.host("10.0.0.1"), [5301], "abc")
    assert shlex.split(srv.splitlines()[0])[:4] == ["iperf3", "-s", "-D", "-1"]
    assert "/tmp/glmodel-iperf-abc-10.0.0.1-5301.pid" in srv


def test_iperf_client_sections_parse() -> None:
    # The client script's framing survives a pair whose output is an iperf3 error.
    good = (DATA / "iperf3" / "lab-3.12-reverse.json").read_text()
    bad = (DATA / "iperf3" / "lab-3.12-refused.json").read_text()
    text = f"\n@@glmodel begin pair0\n{good}\n@@glmodel end pair0 0\n\n@@glmodel begin pair1\n{bad}\n@@glmodel end pair1 1\n"
    sections = parse_sections(text, "iperf3 client output")
    assert sections["pair1"][0] == 1 and parse_iperf_json(sections["pair0"][1])[1] > 0
    with pytest.raises(ParseError, match="section 'pair1' has no end marker"):
        parse_sections(text[: text.rindex("@@glmodel end")], "iperf3 client output")


def test_iperf_matrix_summaries() -> None:
    m = IperfMatrix(IperfSpec())
    m.pairs = [PairResult("a", "s1", "write", 10.0, 9.0, 0, ""), PairResult("b", "s1", "write", 5.0, 4.0, 0, ""),
               PairResult("a", "s1", "read", 7.0, 7.0, 0, ""), PairResult("b", "s1", "read", None, None, None, "", "x")]
    assert m.aggregate_bps("write") == 13.0 and m.aggregate_bps("read") == 7.0
    assert m.per_host_bps("write") == {"a": 9.0, "s1": 13.0, "b": 4.0}
    assert m.median_pair_bps() == 7.0


def test_fio_lab_capture() -> None:
    jobs = parse_fio_json((DATA / "fio" / "lab-3.33-four-tests.json").read_text())
    assert list(jobs) == ["seq_write", "seq_read", "rand_read", "rand_write"]
    assert jobs["seq_write"].write_bps == 1597830095 and jobs["seq_write"].read_bps == 0
    assert jobs["rand_read"].read_iops == pytest.approx(13814.50253)
    assert jobs["seq_read"].mean_latency_us == pytest.approx(1184.75225)


def test_fio_elsewhere_old_version_mixed_job() -> None:
    jobs = parse_fio_json((DATA / "fio" / "elsewhere-2.10-mixed-kib.json").read_text())
    j = jobs["rw-sdb-4k-seq"]  # fio 2.x: KiB/s in "bw", no bw_bytes; a mixed job has both sides
    assert (j.read_bps, j.write_bps) == (2976 * 1024, 2982 * 1024)
    assert j.bytes_per_s == (2976 + 2982) * 1024 and j.iops == pytest.approx(744.13 + 745.59)


def test_fio_failures() -> None:
    einval = (DATA / "fio" / "lab-3.33-direct-einval.json").read_text()
    assert einval.startswith("fio: first direct IO errored")  # warnings before the JSON
    with pytest.raises(ParseError, match=r"job rand_read failed with error 22 \(EINVAL"):
        parse_fio_json(einval, "127.1.1.2")
    good = (DATA / "fio" / "lab-3.33-four-tests.json").read_text()
    with pytest.raises(ParseError, match="truncated"):
        parse_fio_json(good[:5000])
    with pytest.raises(ParseError, match="no JSON object"):
        parse_fio_json("")
    with pytest.raises(ParseError, match="no 'jobs' list"):
        parse_fio_json('{"fio version": "fio-3.33"}')
    with pytest.raises(ParseError, match="job seq_read lacks read/write"):
        data = json.loads(good)
        del data["jobs"][1]["read"]["iops"]
        parse_fio_json(json.dumps(data))


def test_fio_argv_and_script() -> None:
    spec = DiskSpec(size="64MB", tests=["rand_write", "seq_write"], runtime=5)
    assert spec.tests == ["seq_write", "rand_write"]  # the sequential write lays out the file first
    argv = fio_argv("/b/x", spec, direct=True)
    assert "--direct=1" in argv and "--size=65536k" in argv and "--runtime=5" in argv
    names = [a for a in argv if a.startswith("--name=")]
    assert names == ["--name=seq_write", "--name=rand_write"]
    assert argv.count("--stonewall") == 1 and argv.count("--end_fsync=1") == 2
    assert "--bs=4k" in argv and "--bs=1024k" in argv
    script = disk_script("/data/my brick", spec, False, "r1")
    assert "'/data/my brick/.glmodel-fio-r1'" in script and "--direct=0" in script and "rm -rf --" in script
    with pytest.raises(ValueError):
        DiskSpec(rand_block="1000")


def test_fio_numjobs_without_group_reporting_sums_every_entry() -> None:
    # Captured: fio --output-format=json, one job section with numjobs=4 and no group_reporting (fio 3.33).
    text = (DATA / "fio" / "lab-3.33-numjobs4-no-group-reporting.json").read_text()
    import json

    entries = json.loads(text)["jobs"]
    assert len(entries) == 4 and {e["jobname"] for e in entries} == {"seqw"}
    job = parse_fio_json(text)["seqw"]
    assert job.processes == 4
    assert job.write_bps == sum(e["write"]["bw_bytes"] for e in entries)
    assert job.write_iops == pytest.approx(sum(e["write"]["iops"] for e in entries))
    ios = [e["write"]["total_ios"] for e in entries]
    lat = sum(e["write"]["clat_ns"]["mean"] * n for e, n in zip(entries, ios)) / sum(ios) / 1000
    assert job.mean_latency_us == pytest.approx(lat)


def test_json_results_are_found_between_warning_lines() -> None:
    good = (DATA / "iperf3" / "lab-3.12-P2.json").read_text()
    noisy = ("iperf3: error - unable to set TCP_NODELAY: {mocked}\nwarning: report interval too small\n" + good +
             "\niperf3: interrupt - the client has terminated\n")
    assert parse_iperf_json(noisy) == parse_iperf_json(good)
    fio = (DATA / "fio" / "lab-3.33-four-tests.json").read_text()
    assert parse_fio_json("fio: note: both iodepth >= 1 and synchronous I/O engine\n" + fio + "\nfio: done {x}\n") \
        == parse_fio_json(fio)


def test_steady_fio_runs_for_its_whole_runtime() -> None:
    assert "--time_based" not in fio_argv("/b", DiskSpec(size="64MB", runtime=3), True)
    assert "--time_based" in fio_argv("/b", DiskSpec(size="64MB", runtime=3, steady=True), True)


def test_start_delay_follows_the_round_trip_within_bounds() -> None:
    from gluster_model.bench.iperf import start_delay_ns

    # One and a half round trips of room, 0.15-1.5 s; doubled for each pass measured again after a late client.
    assert start_delay_ns(0.1) == 150_000_000
    assert start_delay_ns(0.4) == 600_000_000
    assert start_delay_ns(0.001) == 150_000_000
    assert start_delay_ns(10.0) == 1_500_000_000
    assert start_delay_ns(0.2) < start_delay_ns(0.3)
    assert start_delay_ns(0.4, tries=1) == 1_200_000_000 and start_delay_ns(10.0, tries=2) == 6_000_000_000


def test_a_client_sleeps_to_the_shared_start_and_reports_how_late_it_began() -> None:
    import subprocess
    import time

    from gluster_model.bench.iperf import client_script, late_by
    from gluster_model.remote.sections import parse_sections

    pairs = plan_pairs(_cluster(["10.0.0.1"], ["10.0.0.2"]), 5201)
    for ahead_s in (0.3, -0.2):  # a start still to come; one already past (the command arrived late)
        start = time.time_ns() + int(ahead_s * 1e9)
        script = client_script(pairs, IperfSpec(), "write", "t", start_ns=start)
        # the start and the report only: the pairs' iperf3 commands are left out
        text = "\n".join(ln for ln in script.splitlines() if "iperf3" not in ln and "wait $p" not in ln
                         and "pair" not in ln)
        t0 = time.monotonic()
        out = subprocess.run(["bash", "-c", text], capture_output=True, text=True, check=True).stdout
        late = late_by(parse_sections(out, "test"))
        if ahead_s > 0:
            assert time.monotonic() - t0 >= ahead_s - 0.05  # it slept until the start
            assert 0 <= late < 0.1, late  # and began at it (a loaded machine wakes it late by milliseconds)
        else:
            assert late >= 0.2, late  # at once, and said how late


def test_a_pass_with_a_client_that_began_late_is_measured_again_and_kept_as_an_error_if_it_stays_late() -> None:
    from gluster_model.bench.iperf import PASS_TRIES, run_iperf
    from gluster_model.remote.sections import MARK
    from tests.fakes import FakeExecutor

    capture = (DATA / "iperf3" / "lab-3.12-P2.json").read_text()
    cluster = _cluster(["10.0.0.1", "10.0.0.2"], ["10.0.0.3"])

    def client(lates: list[int]) -> FakeExecutor:
        def reply(host: str, command: str) -> tuple[int, str]:
            late = lates.pop(0) if len(lates) > 1 else lates[0]
            out = f"\n{MARK} begin late\n{late}\n{MARK} end late 0\n"
            for i in range(2):
                out += f"\n{MARK} begin pair{i}\n{capture}\n{MARK} end pair{i} 0\n"
            return 0, out
        ex = FakeExecutor(cluster=cluster)
        ex.answer(r"iperf3 -c", reply)
        return ex

    said: list[str] = []
    ex = client([300_000_000, 5_000_000])  # late once by 300 ms, then on time
    m = run_iperf(ex, IperfSpec(directions=["write"]), said.append)
    assert len(ex.ran(r"iperf3 -c")) == 2 and len(m.ok()) == 2
    # iperf3 measures the link's capacity: its servers and clients stay out of an emulated CPU quota
    assert {h for h, c in ex.devices if "iperf3 -c" in c} == {"10.0.0.3"}
    assert {h for h, c in ex.devices if "iperf3 -s" in c} == {"10.0.0.1", "10.0.0.2"}
    assert any("10.0.0.3 began its pairs 300 ms after the shared start" in line for line in said)
    assert any(line.endswith("again, with a later start") for line in said)

    ex = client([400_000_000])  # late in every pass: no figure from it, each pair says why, its output kept
    m = run_iperf(ex, IperfSpec(directions=["write"]))
    assert len(ex.ran(r"iperf3 -c")) == PASS_TRIES and m.ok() == [] and len(m.pairs) == 2
    assert all("began its pairs 400 ms after the other clients in every pass" in (p.error or "") for p in m.pairs)
    assert all(p.raw.strip() == capture.strip() for p in m.pairs)


def _write_pass(pairs: list[tuple[str, str]], error: str | None = None) -> IperfMatrix:
    m = IperfMatrix(IperfSpec())
    m.pairs = [PairResult(c, s, "write", 1e9 + i, 9e8 + i, i, f"raw{i}", error if i == 0 else None)
               for i, (c, s) in enumerate(pairs)]
    return m


def test_read_pass_reuses_the_write_pass_only_when_its_flows_are_the_same() -> None:
    from gluster_model.bench.iperf import _same_flows

    # Every host client and server: the read pass's flows s -> c are the write pass's pairs (s, c).
    hyper = _cluster(["10.0.0.1", "10.0.0.2"], ["10.0.0.1", "10.0.0.2"])
    pairs = plan_pairs(hyper, 5201)
    done = _write_pass([(p.client.address, p.server.address) for p in pairs])
    reused = _same_flows(done, pairs, "read")
    assert reused is not None and len(reused) == len(pairs) == 2
    by_pair = {(p.client, p.server): p for p in reused}
    for w in done.pairs:  # the figure of flow a -> b is read pair (b, a)'s
        r = by_pair[(w.server, w.client)]
        assert (r.direction, r.received_bps, r.raw) == ("read", w.received_bps, w.raw)
    # Clients apart from servers: reading moves other flows (server -> client), so it is measured.
    split = _cluster(["10.0.0.1"], ["10.0.0.2", "10.0.0.3"])
    split_pairs = plan_pairs(split, 5201)
    assert _same_flows(_write_pass([(p.client.address, p.server.address) for p in split_pairs]),
                       split_pairs, "read") is None
    # A failed pair in the pass already run: measure again rather than copy the failure.
    failed = _write_pass([(p.client.address, p.server.address) for p in pairs], error="refused")
    assert _same_flows(failed, pairs, "read") is None
    assert _same_flows(IperfMatrix(IperfSpec()), pairs, "write") is None  # nothing measured yet


def test_end_brick_script_signals_only_bricks_and_only_digits() -> None:
    from gluster_model.gluster.apply import end_brick_script

    script = end_brick_script([123, 4567], wait_s=2)
    assert "for p in 123 4567;" in script and 'grep -qa glusterfsd "/proc/$p/cmdline"' in script
    assert "kill -TERM" in script and "-KILL" not in script and "-lt 40 ]" in script
    assert "[ $sent = 1 ] || exit 2" in script  # nothing to stop: said at once (stop_one_brick fails fast)
    with pytest.raises(ValueError):
        end_brick_script(["1; rm -rf /"])  # type: ignore[list-item]


def test_end_brick_script_ends_a_brick_and_spares_anything_else(tmp_path: Path) -> None:
    import shutil
    import subprocess

    from gluster_model.gluster.apply import end_brick_script

    fake_brick = tmp_path / "glusterfsd"  # a process whose command line names glusterfsd, as a brick's does
    shutil.copy(shutil.which("sleep") or "/bin/sleep", fake_brick)
    brick = subprocess.Popen([str(fake_brick), "60"])
    other = subprocess.Popen(["sleep", "60"])
    try:
        spared = subprocess.run(["sh", "-c", end_brick_script([other.pid], wait_s=1)])
        assert spared.returncode == 2 and other.poll() is None  # not a brick: not signalled, said so
        ended = subprocess.run(["sh", "-c", end_brick_script([brick.pid, other.pid], wait_s=5)])
        assert ended.returncode == 0 and brick.wait(timeout=5) == -15 and other.poll() is None
    finally:
        for p in (brick, other):
            p.kill()
            p.wait()


def test_baselines_come_out_in_the_store_shape_with_raw_output_once() -> None:
    from gluster_model.bench.fio import BrickBaseline

    raw = (DATA / "fio" / "lab-3.33-four-tests.json").read_text()
    brick = BrickBaseline("h1", "/b", True, parse_fio_json(raw), raw)
    rows = brick.measured()
    assert [(m.test, m.unit) for m in rows[:2]] == [(next(iter(brick.jobs)), "B/s"),
                                                     (next(iter(brick.jobs)) + "_iops", "IO/s")]
    assert len(rows) == 2 * len(brick.jobs) and [m.raw for m in rows].count(raw) == 1
    assert all(m.kind == "disk" and m.target == "/b" and m.value and m.value > 0 for m in rows)
    failed = BrickBaseline("h2", "/b", True, {}, "fio: EINVAL", error="no O_DIRECT").measured()
    assert [(m.test, m.value, m.error) for m in failed] == [("all", None, "no O_DIRECT")]

    m = IperfMatrix(IperfSpec())
    m.pairs = [PairResult("a", "s1", "write", 10.0, 9.0, 0, "{}"), PairResult("b", "s1", "read", None, None, None, "",
                                                                                 "refused")]
    assert [(r.host, r.target, r.test, r.value, r.unit, r.error) for r in m.measured()] == [
        ("a", "s1", "write", 9.0, "bit/s", None), ("b", "s1", "read", None, "bit/s", "refused")]


# -- which hosts' disks are measured at once -------------------------------------------------------------------

def _brick(test_mbps: dict[str, float], error: str | None = None) -> BrickBaseline:
    jobs = {t: DiskJob(t, v * 1e6 if t.endswith("read") else 0.0, 0.0 if t.endswith("read") else v * 1e6,
                       v * 1e6 / 4096 if t.endswith("read") else 0.0, 0.0 if t.endswith("read") else v * 1e6 / 4096,
                       None) for t, v in test_mbps.items()}
    return BrickBaseline("10.0.0.1", "/b", True, jobs=jobs, error=error)


SEQ: list[DiskTest] = ["seq_write", "seq_read"]
LIMIT = {"/b": {"read_bps": 100_000_000, "write_bps": 100_000_000}}


def test_hosts_on_machines_of_their_own_are_measured_at_once_and_shared_ones_only_with_limits() -> None:
    own = {a: HostDisks(f"boot-{a}") for a in ("a", "b", "c")}
    assert measuring_order(own, SEQ) == (["a", "b", "c"], [])
    lab = {a: HostDisks("one", shared=True, limits=LIMIT) for a in ("a", "b")}
    lab["c"] = HostDisks("one", shared=True)  # its device has no limit: it could be held back unseen
    assert measuring_order(lab, SEQ) == (["a", "b"], ["c"])
    # a random test's limit is in operations/s: a byte rate alone does not bound it
    assert measuring_order(lab, [*SEQ, "rand_read"]) == ([], ["a", "b", "c"])
    assert measuring_order(lab, SEQ, every_host=True) == (["a", "b", "c"], [])
    # one host at once is one host alone
    assert measuring_order({"a": HostDisks("x", shared=True, limits=LIMIT), "b": HostDisks("x", shared=True)},
                           SEQ) == ([], ["a", "b"])


def test_a_figure_short_of_its_limit_beside_others_is_measured_again() -> None:
    at_limit = _brick({"seq_write": 99.9, "seq_read": 99.8})
    assert not slowed(at_limit, LIMIT["/b"], SEQ)
    assert slowed(_brick({"seq_write": 99.9, "seq_read": 64.0}), LIMIT["/b"], SEQ)  # a neighbour held it back
    assert slowed(at_limit, None, SEQ)  # nothing says what it could have been
    assert slowed(_brick({"seq_write": 99.9}), LIMIT["/b"], SEQ)  # a test missing
    assert slowed(_brick({}, error="fio exited 1"), LIMIT["/b"], SEQ)


def test_a_figure_above_its_device_s_limit_is_one_the_limit_did_not_hold() -> None:
    assert over_limit(_brick({"seq_write": 99.9, "seq_read": 141.2}), LIMIT["/b"], SEQ)  # a 100 MB/s disk at 141
    assert not over_limit(_brick({"seq_write": 99.9, "seq_read": 104.0}), LIMIT["/b"], SEQ)  # a throttle's burst
    assert not over_limit(_brick({"seq_write": 400.0, "seq_read": 400.0}), None, SEQ)  # nothing says what it could be
    assert not over_limit(_brick({"seq_read": 99.0}), LIMIT["/b"], SEQ)  # a missing test is slowed's to judge
    assert over_limit(_brick({"seq_write": 105.5}), {"write_bps": 100_000_000}, ["seq_write"])
    assert not over_limit(_brick({"seq_read": 400.0}), {"write_bps": 100_000_000}, SEQ)  # reads not limited


def test_brick_limits_are_read_from_cgroup_v2_io_max_too() -> None:
    text = ("dev /l/n1/bricks 7:2\nio.max 7:2 rbps=120000000 wbps=max riops=max wiops=500\n"
            "io.max 7:2 rbps=90000000 wbps=60000000 riops=max wiops=max\nio.max 8:0 rbps=5 wbps=5\n")
    assert parse_throttles(text) == {"/l/n1/bricks": {"read_bps": 90000000, "write_bps": 60000000,
                                                      "write_iops": 500}}


def _flows(direction: str, *pairs: tuple[str, str, float]) -> IperfMatrix:
    return IperfMatrix(IperfSpec(directions=[direction]),  # type: ignore[list-item]
                       [PairResult(c, s, direction, v, v, 0, "") for c, s, v in pairs])  # type: ignore[arg-type]


GBIT = 10**9


def test_a_pair_is_held_when_a_link_it_crosses_is_full_and_unheld_otherwise() -> None:
    # a sends to b and c: its link out is full (0.97 of 1 Gbit/s), so both shares are what sharing it gives
    shared = _flows("write", ("a", "b", 0.6e9), ("a", "c", 0.37e9))
    assert unheld_pairs(shared, {"a": GBIT, "b": GBIT, "c": GBIT}) == []
    # the same figures under a 2 Gbit/s sender: no link is full, something else held both flows back
    assert [(p.client, p.server) for p in unheld_pairs(shared, {"a": 2 * GBIT, "b": GBIT, "c": GBIT})] == \
        [("a", "b"), ("a", "c")]
    # the receiver's link in explains a flow whose sender has room: b and c both send to a, whose link is full
    inbound = _flows("write", ("b", "a", 0.5e9), ("c", "a", 0.48e9))
    assert unheld_pairs(inbound, {"a": GBIT, "b": 10 * GBIT, "c": 10 * GBIT}) == []
    # a host without a limit fills nothing: only its peer's link can explain the flow
    assert len(unheld_pairs(inbound, {"a": None, "b": GBIT, "c": GBIT})) == 2
    # one flow explained (b's full link), the other not: only the latter
    mixed = _flows("write", ("b", "a", 0.96e9), ("c", "a", 0.3e9))
    assert [p.client for p in unheld_pairs(mixed, {"a": 2 * GBIT, "b": GBIT, "c": GBIT})] == ["c"]


def test_a_read_pass_sends_from_the_server_and_a_failed_pair_is_never_held() -> None:
    # read: the server sends (-R), so server s's link out carries both of its flows to the clients
    read = _flows("read", ("x", "s", 0.5e9), ("y", "s", 0.47e9))
    assert unheld_pairs(read, {"s": GBIT, "x": 5 * GBIT, "y": 5 * GBIT}) == []
    # as a write pass the same figures would load x's and y's links out, neither full
    write = _flows("write", ("x", "s", 0.5e9), ("y", "s", 0.47e9))
    assert len(unheld_pairs(write, {"s": 5 * GBIT, "x": GBIT, "y": GBIT})) == 2
    failed = IperfMatrix(IperfSpec(directions=["write"]), [PairResult("a", "b", "write", None, None, None, "",
                                                                      "a: connection refused")])
    assert len(unheld_pairs(failed, {"a": GBIT, "b": GBIT})) == 1


def test_disks_are_limited_everywhere_only_when_every_brick_of_every_host_bounds_every_test() -> None:
    assert limited_everywhere({a: HostDisks("one", shared=True, limits=LIMIT) for a in ("a", "b")}, SEQ)
    assert not limited_everywhere({"a": HostDisks("one", shared=True, limits=LIMIT), "b": HostDisks("one")}, SEQ)
    assert not limited_everywhere({"a": HostDisks("x", limits=LIMIT)}, [*SEQ, "rand_read"])  # IOPS not bounded
    assert not limited_everywhere({}, SEQ)


def test_the_device_under_a_brick_is_the_disk_behind_a_loop_device_and_odd_lines_are_ignored() -> None:
    text = ("dev /l/n1/bricks 7:2\nunder /l/n1/bricks loop@254:0@0\nunder /srv/b 8:17\nunder /x \n"
            "under /y loop@@\nunder /z 8:1 extra\n")
    assert parse_under(text) == {"/l/n1/bricks": "loop@254:0@0", "/srv/b": "8:17"}


def test_hosts_of_one_machine_share_figures_only_with_the_same_device_limits_and_group() -> None:
    group = (("cpu_quota_cores", None), ("ram_limit_bytes", None))
    base = HostDisks("one", shared=True, under={"/b": "loop@254:0@0"}, group=group)
    key = same_device(base, ["/b"])
    assert key is not None
    # another node's loop device on the same disk: the same key whatever its own number
    assert same_device(HostDisks("one", shared=True, under={"/b": "loop@254:0@0"}, group=group), ["/b"]) == key
    different = [HostDisks("two", shared=True, under={"/b": "loop@254:0@0"}, group=group),  # another machine
                 HostDisks("one", shared=True, under={"/b": "loop@254:1@0"}, group=group),  # another disk
                 HostDisks("one", shared=True, under={"/b": "loop@254:0@1"}, group=group),  # loop direct I/O on
                 HostDisks("one", shared=True, limits=LIMIT, under={"/b": "loop@254:0@0"}, group=group),
                 HostDisks("one", shared=True, under={"/b": "loop@254:0@0"},
                           group=(("cpu_quota_cores", 0.5), ("ram_limit_bytes", None)))]
    assert all(same_device(d, ["/b"]) not in (key, None) for d in different)
    # not known well enough: never another host's figures
    assert same_device(HostDisks("one", shared=True, under={"/b": "8:1"}), ["/b"]) is None  # group unknown
    assert same_device(HostDisks("one", shared=True, group=group), ["/b"]) is None  # device unknown
    assert same_device(HostDisks("boot-a", under={"/b": "8:1"}, group=group), ["/b"]) is None  # machine its own


def test_a_carried_figure_names_the_brick_it_was_measured_on_and_is_stored_as_that_brick_s() -> None:
    measured = _brick({"seq_write": 412.0, "seq_read": 655.0})
    carried = measured.carried_to("10.0.0.2", "/c")
    assert (carried.host, carried.path, carried.measured_on, carried.error) == ("10.0.0.2", "/c", "10.0.0.1:/b",
                                                                                 None)
    assert [(m.host, m.target, m.test, m.value) for m in carried.measured()] == \
        [("10.0.0.2", "/c", m.test, m.value) for m in measured.measured()]
    assert "10.0.0.1:/b" in (carried.measured()[0].raw or "")


def test_fio_measures_each_brick_as_a_device_outside_an_emulated_cpu_quota() -> None:
    from gluster_model.bench.fio import run_disk
    from tests.fakes import FakeExecutor

    raw = (DATA / "fio" / "lab-3.33-four-tests.json").read_text()
    ex = FakeExecutor(cluster=_cluster(["10.0.0.1", "10.0.0.2"], ["10.0.0.3"])).on(r"fio --output-format", raw)
    bricks = run_disk(ex, DiskSpec())
    assert [b.error for b in bricks] == [None, None]
    assert sorted(h for h, c in ex.devices if "fio --output-format" in c) == ["10.0.0.1", "10.0.0.2"]
    assert not any("boot_id" in c for _, c in ex.devices)  # what the hosts have is read as any command is


# -- another writer on a brick's device -------------------------------------------------------------------------

def _fio_json(write_iops: float, seconds: float = 2.0, block: int = 8192) -> str:
    ios = int(write_iops * seconds)
    return json.dumps({"jobs": [{"jobname": "rand_write", "error": 0,
                                 "read": {"bw_bytes": 0, "iops": 0.0, "total_ios": 0},
                                 "write": {"bw_bytes": int(write_iops * block), "iops": write_iops,
                                           "total_ios": ios}}]})


def test_the_device_script_waits_for_quiet_and_counts_the_device_s_io_around_fio(tmp_path: Path) -> None:
    import subprocess

    from gluster_model.bench.fio import device_script, parse_device_io

    # A real shell over this machine's /proc/diskstats: the temporary directory's device (or none, on a
    # filesystem without one, where nothing is printed and nothing waited for).
    script = device_script(str(tmp_path), 1.0) + '; [ -n "$p" ] && echo "glmodel-device after $(io)" >&2; true'
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=30)
    got = parse_device_io(done.stderr)
    dev = os.stat(tmp_path).st_dev
    listed = any(line.split()[:2] == [str(os.major(dev)), str(os.minor(dev))]
                 for line in Path("/proc/diskstats").read_text().splitlines())
    assert (got is not None) == listed, done.stderr
    if got is not None:
        assert got.waited_s <= 1.0 and got.ios >= 0  # a 1 s wait can never hold 2 s of quiet
        assert not got.quiet
    # the lines themselves, by hand: 7 half-seconds waited, quiet, 1000 I/Os then 1850 after fio
    text = "fio: warning\nglmodel-device quiet 7 1 1000\nglmodel-device after 1850\n"
    assert parse_device_io(text) == __import__("gluster_model.bench.fio", fromlist=["DeviceIO"]).DeviceIO(
        3.5, True, 850)
    assert parse_device_io("glmodel-device quiet 7 1 1000\n") is None  # fio never ended: no count
    assert parse_device_io("glmodel-device quiet x 1 1000\nglmodel-device after 9\n") is None
    script = disk_script("/data/b", DiskSpec(quiet_wait=5), True, "r1")
    assert script.index("/proc/diskstats") < script.index("fio --output-format") < script.index(" after ")
    assert "$w -lt 10 " in script  # 5 s in half-seconds


def test_a_figure_short_of_its_device_s_limit_is_measured_again_once_quiet_keeping_each_test_s_highest() -> None:
    from gluster_model.bench.fio import run_disk, short_of_limit
    from tests.fakes import FakeExecutor

    cluster = _cluster(["10.0.0.1", "10.0.0.2"], ["10.0.0.3"])
    # each host on a machine of its own, its brick's device throttled to 400 write IOPS (cgroup v1's root)
    ex = FakeExecutor(cluster=cluster)
    for i, host in enumerate(["10.0.0.1", "10.0.0.2"]):
        ex.on("boot_id", f"boot-{i}\ndev /data/b 7:{i}\nblkio.throttle.write_iops_device 7:{i} 400\n", host=host)
    quiet = "glmodel-device quiet 4 1 100\nglmodel-device after 900\n"
    busy = "glmodel-device quiet 60 0 100\nglmodel-device after 1300\n"
    ex.on("fio --output-format", _fio_json(398.0), stderr=quiet)
    ex.on("fio --output-format", _fio_json(251.0), stderr=busy, host="10.0.0.2", times=1)  # another writer
    said: list[str] = []
    bricks = {b.host: b for b in run_disk(ex, DiskSpec(tests=["rand_write"]), said.append)}
    one, two = bricks["10.0.0.1"], bricks["10.0.0.2"]
    assert one.runs == 1 and two.runs == 2
    assert two.jobs["rand_write"].iops == 398.0 and "measured again" in two.raw and two.raw.count("rand_write") == 2
    assert len([c for h, c in ex.calls if h == "10.0.0.2" and "fio --output-format" in c]) == 2
    assert any("short of their disk limit" in s and "10.0.0.2:/data/b 698 I/O beside fio's, not quiet after 30 s"
               in s for s in said), said
    # each test keeps its highest figure, whichever run it came from; a short figure never replaces a full one
    first = BrickBaseline("h", "/b", True, {"rand_write": DiskJob("rand_write", 0, 0, 0, 390.0, None),
                                            "rand_read": DiskJob("rand_read", 0, 0, 240.0, 0, None)})
    second = BrickBaseline("h", "/b", True, {"rand_write": DiskJob("rand_write", 0, 0, 0, 260.0, None),
                                             "rand_read": DiskJob("rand_read", 0, 0, 399.0, 0, None)})
    best = first.best_with(second)
    assert {t: j.iops for t, j in best.jobs.items()} == {"rand_write": 390.0, "rand_read": 399.0} and best.runs == 2
    assert first.best_with(BrickBaseline("h", "/b", True, error="lost")).jobs == first.jobs
    limits = {"read_iops": 400, "write_iops": 400}
    assert short_of_limit(first, limits, ["rand_write", "rand_read"]) and not short_of_limit(best, limits, [
        "rand_write", "rand_read"])
    assert not short_of_limit(first, None, ["rand_read"])  # no limit: nothing says what it could have been


def test_a_device_still_short_after_every_re_measurement_keeps_its_best_figure_and_says_so() -> None:
    from gluster_model.bench.fio import SHORT_AGAIN, run_disk
    from tests.fakes import FakeExecutor

    ex = FakeExecutor(cluster=_cluster(["10.0.0.1"], ["10.0.0.3"]))
    ex.on("boot_id", "boot-0\ndev /data/b 7:0\nblkio.throttle.write_iops_device 7:0 400\n")
    figures = iter([200.0, 310.0, 250.0, 390.0])

    def reply(host: str, command: str) -> tuple[int, str]:
        return 0, _fio_json(next(figures))

    ex.answer("fio --output-format", reply)
    said: list[str] = []
    brick, = run_disk(ex, DiskSpec(tests=["rand_write"]), said.append)
    assert brick.runs == 1 + SHORT_AGAIN and brick.jobs["rand_write"].iops == 310.0  # never more than that
    short = [s for s in said if "short of their disk limit" in s]
    assert len(short) == SHORT_AGAIN + 1 and "still short" in short[-1] and "highest figure" in short[-1]
    assert all("device not read" in s for s in short)  # no device lines: said, not guessed

"""Preflight: probe script construction, probe output parsing and judging (pure parts)."""

from __future__ import annotations

import dataclasses
import shlex
import subprocess
from pathlib import Path

import pytest

from gluster_model.config.cluster import cluster_from_data
from gluster_model.errors import ConfigError, ParseError
from gluster_model.hardware.facts import HostFacts
from gluster_model.preflight import clock_offsets, judge_host, parse_probe_output, probe_script

PROBE = (Path(__file__).parent.parent / "data" / "probe" / "lab_node1.txt").read_text()


def spec(**server: object):  # type: ignore[no-untyped-def]
    base = {"host": "127.1.1.1", "brick_paths": ["/tmp/lab1/nodes/1/bricks"]}
    data = {"servers": [{**base, **server}, {"host": "127.1.1.2", "brick_paths": ["/b"]},
                        {"host": "127.1.1.3", "brick_paths": ["/b"]}]}
    return cluster_from_data(data, "test.yaml", Path("/"))


def test_captured_probe_is_judged_ready() -> None:
    c = spec()
    rep = judge_host(c.hosts[0], parse_probe_output(PROBE), list(c.servers), 1 << 30)
    assert rep.ok, rep.failures()
    assert rep.facts["gluster_version"] == "10.3"
    assert isinstance(rep.facts["ram_bytes"], int) and rep.facts["ram_bytes"] > 1 << 30
    assert rep.facts["bricks"]["/tmp/lab1/nodes/1/bricks"]["fstype"] in ("ext4", "xfs", "tmpfs", "overlay")  # type: ignore[index]


def test_peer_missing_from_pool_fails_with_probe_fix() -> None:
    data = {"servers": [{"host": "127.1.1.1", "brick_paths": ["/tmp/lab1/nodes/1/bricks"]},
                        {"host": "127.1.1.2", "brick_paths": ["/b"]}, {"host": "127.1.1.9", "brick_paths": ["/b"]}]}
    c = cluster_from_data(data, "t.yaml", Path("/"))
    rep = judge_host(c.hosts[0], parse_probe_output(PROBE), list(c.servers), 0)
    bad = {f.name: f for f in rep.failures()}
    assert set(bad) == {"glusterd"}
    assert "127.1.1.9" in bad["glusterd"].detail and bad["glusterd"].fix == "gluster peer probe 127.1.1.9 (from 127.1.1.1)"


def test_too_little_free_space_fails() -> None:
    c = spec()
    rep = judge_host(c.hosts[0], parse_probe_output(PROBE), list(c.servers), 1 << 60)
    assert [f.name for f in rep.failures()] == ["brick /tmp/lab1/nodes/1/bricks"]


def test_glusterd_down_and_tool_missing() -> None:
    sections = parse_probe_output(PROBE)
    sections["peers"] = (1, "Connection failed. Please check if gluster daemon is operational.")
    sections["fio"] = (127, "sh: 1: fio: not found")
    c = spec()
    rep = judge_host(c.hosts[0], sections, list(c.servers), 0)
    bad = {f.name: f for f in rep.failures()}
    assert set(bad) == {"glusterd", "fio"}
    assert bad["glusterd"].fix == "start glusterd on this host"
    assert bad["fio"].fix == "install it: apt-get install fio"


def test_truncated_probe_output_raises() -> None:
    cut = PROBE[: PROBE.index("@@glmodel end peers")]
    with pytest.raises(ParseError, match="'peers' has no end marker"):
        parse_probe_output(cut)
    c = spec()
    partial = parse_probe_output(PROBE.split("@@glmodel begin brick0")[0])
    with pytest.raises(ParseError, match="section 'brick0' missing"):
        judge_host(c.hosts[0], partial, list(c.servers), 0)


def test_probe_script_quotes_values_and_runs_in_sh(tmp_path: Path) -> None:
    # A brick path with characters a shell would interpret must arrive as one literal argument.
    # The cluster file refuses such a path; the builder must still quote it (defence in depth).
    odd = tmp_path / "b $(touch pwned); x"
    odd.mkdir()
    with pytest.raises(ConfigError, match="must be an absolute path"):
        cluster_from_data({"servers": [{"host": "10.0.0.1", "brick_paths": [str(odd)]}]}, "t.yaml", Path("/"))
    c = cluster_from_data({"servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}]}, "t.yaml", Path("/"))
    script = probe_script(dataclasses.replace(c.hosts[0], brick_paths=(str(odd),)))
    assert shlex.split(script)  # well-formed shell words
    out = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60).stdout
    sections = parse_probe_output(out)
    assert {"kernel", "meminfo", "nproc", "peers", "brick0", "iozone", "fuse"} <= set(sections)
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    assert sections["brick0"][0] == 0  # df found the directory: the path arrived as one argument


def test_clock_offsets_relative_to_median() -> None:
    samples = {"a": (100.0, 100.05, 100.1), "b": (100.0, 102.05, 100.1), "c": (100.0, 99.55, 100.1)}
    off = clock_offsets(samples)
    assert off["a"] == pytest.approx((0.0, 0.05))
    assert off["b"][0] == pytest.approx(2.0) and off["c"][0] == pytest.approx(-0.5)


def test_cpus_are_scored_once_per_machine_and_limit_and_machines_at_once(tmp_path: Path) -> None:
    from gluster_model.preflight import cpu_scores, score_plan

    from ..fakes import FakeExecutor

    same = HostFacts(cpus=2, cpu_quota_cores=None)
    lab = {a: same.model_copy(update={"boot_id": "m1"}) for a in "abc"}
    assert score_plan(lab, ["a", "b", "c"]) == [[["a", "b", "c"]]]  # one machine, one limit: one score
    lab["c"] = lab["c"].model_copy(update={"cpu_quota_cores": 0.5})  # a node under its own quota is scored apart, after
    assert score_plan(lab, ["a", "b", "c"]) == [[["a", "b"], ["c"]]]
    own = {a: same.model_copy(update={"boot_id": f"m-{a}"}) for a in "abc"}  # machines of their own: each at once
    assert score_plan(own, ["a", "b", "c"]) == [[["a"]], [["b"]], [["c"]]]
    # no boot id known: each host alone, all one after another (they may share cores)
    assert score_plan({}, ["a", "b", "c"]) == [[["a"], ["b"], ["c"]]]

    c = cluster_from_data({"servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]} for i in (1, 2, 3)]},
                          "c.yaml", tmp_path)
    ex = FakeExecutor(cluster=c).on(r"sha256sum", "80000000\n80000000\n80000000\n")  # 32 MiB in 80 ms
    facts = {f"10.0.0.{i}": same.model_copy(update={"boot_id": "m1"}) for i in (1, 2, 3)}
    scores = cpu_scores(ex, facts)
    assert len(ex.ran(r"sha256sum")) == 1 and set(scores) == set(facts)
    assert len(set(scores.values())) == 1 and list(scores.values())[0] == pytest.approx(32 * 2**20 / 0.08 / 1e6)
    ex2 = FakeExecutor(cluster=c).on(r"sha256sum", "80000000\n")
    assert len(cpu_scores(ex2)) == 3 and len(ex2.ran(r"sha256sum")) == 3  # without facts: each host, as before


def test_the_probe_reads_the_boot_id_when_the_host_shows_one(tmp_path: Path) -> None:
    c = cluster_from_data({"servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}]}, "c.yaml", tmp_path)
    assert "/proc/sys/kernel/random/boot_id" in probe_script(c.hosts[0])

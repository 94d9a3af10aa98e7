"""VolumeConfig validation, brick placement against a cluster, create argv, and gluster --xml parsers."""

from __future__ import annotations

from pathlib import Path

import pytest

from gluster_model.config.cluster import cluster_from_data
from gluster_model.errors import ConfigError, ParseError
from gluster_model.gluster.cli import GlusterCommandError, GlusterVersion
from gluster_model.gluster.volume import (
    VolumeConfig,
    load_volume,
    parse_size,
    parse_volume_get_xml,
    parse_volume_info_xml,
    parse_volume_status_xml,
    plan_volume,
    values_match,
)

DATA = Path(__file__).parent.parent / "data"
BAD = sorted((DATA / "bad_volumes").iterdir())
G = DATA / "gluster"


def cluster(n: int = 3, paths: int = 1):  # type: ignore[no-untyped-def]
    servers = [{"host": f"10.0.0.{i}", "brick_paths": [f"/b{p}" for p in range(paths)]} for i in range(1, n + 1)]
    return cluster_from_data({"servers": servers}, "c.yaml", Path("/"))


@pytest.mark.parametrize("path", BAD, ids=[p.name for p in BAD])
def test_bad_volume_file_refused_with_one_line(path: Path) -> None:
    expect = path.read_text().splitlines()[0].removeprefix("# expect: ")
    with pytest.raises(ConfigError) as info:
        load_volume(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: ") and expect in msg and "\n" not in msg


def test_at_least_ten_bad_volume_files() -> None:
    assert len(BAD) >= 10


def test_replica_needs_enough_servers() -> None:
    with pytest.raises(ConfigError, match="replica 3 needs at least 3 servers; 2 in use"):
        plan_volume(VolumeConfig(layout="replicate", replica=3), cluster(2))
    with pytest.raises(ConfigError, match="not a multiple of the set size 3"):
        plan_volume(VolumeConfig(layout="replicate", replica=3, bricks=4), cluster(3))


def test_stripe_refused_on_gluster_6_and_later() -> None:
    with pytest.raises(ConfigError, match="no stripe translator .* use 'shard"):
        plan_volume(VolumeConfig(stripe=2, bricks=2), cluster(2), GlusterVersion(10, 3))
    plan = plan_volume(VolumeConfig(stripe=2, bricks=2), cluster(2), GlusterVersion(3, 12))
    assert plan.create_args()[:5] == ["volume", "create", "glmodel", "stripe", "2"]


def test_replica_sets_span_hosts_and_argv() -> None:
    cfg = VolumeConfig(name="rv", layout="replicate", replica=3, bricks=6)
    plan = plan_volume(cfg, cluster(3, paths=2))
    hosts = [b.host.address for b in plan.bricks]
    assert hosts[:3] == ["10.0.0.1", "10.0.0.2", "10.0.0.3"] and hosts[3:] == hosts[:3]
    assert [b.path for b in plan.bricks][:4] == ["/b0/rv-b0", "/b0/rv-b1", "/b0/rv-b2", "/b1/rv-b3"]
    assert plan.create_args() == ["volume", "create", "rv", "replica", "3", *[b.spec for b in plan.bricks], "force"]


def test_disperse_and_arbiter_argv() -> None:
    d = plan_volume(VolumeConfig(name="dv", layout="disperse", disperse=3), cluster(3))
    assert d.create_args()[3:7] == ["disperse", "3", "redundancy", "1"]
    a = plan_volume(VolumeConfig(name="av", layout="replicate", replica=3, arbiter=1), cluster(3))
    assert a.create_args()[3:7] == ["replica", "3", "arbiter", "1"]


def test_options_in_order_and_sizes() -> None:
    cfg = VolumeConfig(translators={"md-cache": False, "read-ahead": True}, cache_size="67108864",
                       shard={"enabled": True, "block_size": "16M"}, options={"performance.io-thread-count": "16"})
    assert cfg.volume_options() == {
        "performance.stat-prefetch": "off", "performance.read-ahead": "on", "performance.cache-size": "64MB",
        "features.shard": "on", "features.shard-block-size": "16MB", "performance.io-thread-count": "16"}
    assert parse_size("512KB") == 512 << 10 and parse_size("1g") == 1 << 30


@pytest.mark.parametrize("wanted,got,same", [
    ("on", "on", True), ("on", "enable", True), ("off", "on (DEFAULT)", False), ("64MB", "67108864", True),
    ("32MB", "64MB", False), ("16", "16", True)])
def test_values_match(wanted: str, got: str, same: bool) -> None:
    assert values_match(wanted, got) is same


def test_volume_info_parsers_on_lab_captures() -> None:
    (r3,) = parse_volume_info_xml((G / "volume_info_replica3_shard.xml").read_text())
    assert (r3.name, r3.type, r3.brick_count, r3.replica) == ("cap", "Replicate", 3, 3)
    assert r3.options["features.shard"] == "on" and r3.options["performance.read-ahead"] == "off"
    (d3,) = parse_volume_info_xml((G / "volume_info_disperse3.xml").read_text())
    assert (d3.type, d3.disperse, d3.redundancy) == ("Disperse", 3, 1)
    (x3,) = parse_volume_info_xml((G / "volume_info_distribute3.xml").read_text())
    assert x3.type == "Distribute" and len(x3.bricks) == 3 and x3.bricks[0].startswith("127.1.1.1:/")
    with pytest.raises(GlusterCommandError, match="does not exist"):
        parse_volume_info_xml((G / "volume_info_missing.xml").read_text())


def test_volume_get_and_status_parsers() -> None:
    assert parse_volume_get_xml((G / "volume_get_read_ahead.xml").read_text()) == {"performance.read-ahead": "off"}
    every = parse_volume_get_xml((G / "volume_get_all.xml").read_text())
    assert len(every) > 300 and every["features.shard"] == "on"
    bricks = parse_volume_status_xml((G / "volume_status_replica3.xml").read_text())
    assert len(bricks) == 3 and all(b.online and b.port and b.pid for b in bricks)
    with pytest.raises(ParseError, match="malformed XML"):
        parse_volume_get_xml((G / "volume_get_all.xml").read_text()[:500])


def test_mount_options_pin_the_client_source_address() -> None:
    from gluster_model.gluster.apply import mount_options

    assert mount_options([], None) == "defaults"
    assert mount_options(["10.0.0.2", "10.0.0.3"], None) == "backup-volfile-servers=10.0.0.2:10.0.0.3"
    assert mount_options(["10.0.0.2"], "192.168.7.4") == (
        "backup-volfile-servers=10.0.0.2,xlator-option=*.transport.socket.source-addr=192.168.7.4")


def _replica3_executor(tmp_path: Path) -> "FakeExecutor":
    from gluster_model.config.cluster import cluster_from_data

    from ..fakes import GLUSTER_DATA, FakeExecutor

    c = cluster_from_data({"servers": [{"host": f"127.1.1.{i}", "brick_paths": ["/b"]} for i in (1, 2, 3)]},
                          "c.yaml", tmp_path)
    return (FakeExecutor(cluster=c)
            .on(r"volume info", (GLUSTER_DATA / "volume_info_replica3_shard.xml").read_text())
            .on(r"volume status", (GLUSTER_DATA / "volume_status_replica3.xml").read_text()))


def test_teardown_waits_out_a_peer_still_reconnecting_and_refuses_anything_else(tmp_path: Path) -> None:
    from gluster_model.errors import CommandFailed
    from gluster_model.gluster.apply import teardown_volume

    ex = _replica3_executor(tmp_path)
    ex.on(r"volume stop", exit_code=1, times=1,
          stderr="volume stop: cap: failed: Staging failed on 127.1.1.3. Please check log file for details.")
    assert teardown_volume(ex, "cap") is True
    assert len(ex.ran(r"volume stop")) == 2 and len(ex.ran(r"volume delete")) == 1  # tried again, then deleted

    ex = _replica3_executor(tmp_path)
    ex.on(r"volume stop", exit_code=1, times=1, stderr="volume stop: cap: failed: Volume cap does not exist")
    with pytest.raises(CommandFailed, match="does not exist"):
        teardown_volume(ex, "cap")
    assert len(ex.ran(r"volume stop")) == 1 and not ex.ran(r"volume delete")  # a real refusal: said at once


def test_a_server_found_silent_is_not_waited_for_and_is_named(tmp_path: Path) -> None:
    """Once a server was found silent (it did not run `true`: a stalled trial asks), the teardown does not wait
    out glusterd's 60 s of "Staging failed" for a peer that cannot reconnect, and no command is sent to it: the
    error names the silent server at the first refusal."""
    from gluster_model.config.cluster import cluster_from_data
    from gluster_model.errors import ConnectError
    from gluster_model.gluster.apply import teardown_volume
    from gluster_model.remote.executor import silent_hosts

    from ..fakes import GLUSTER_DATA, FakeExecutor

    c = cluster_from_data({"servers": [{"host": f"127.1.1.{i}", "brick_paths": ["/b"]} for i in (1, 2, 3)],
                           "clients": ["127.1.1.4"]}, "c.yaml", tmp_path)
    ex = (FakeExecutor(cluster=c)
          .on(r"volume info", (GLUSTER_DATA / "volume_info_replica3_shard.xml").read_text())
          .on(r"volume status", (GLUSTER_DATA / "volume_status_replica3.xml").read_text())
          .on(r"volume stop", exit_code=1, stderr="volume stop: cap: failed: Staging failed on 127.1.1.3. Please "
              "check log file for details.")
          .fail(r"^true$", host="127.1.1.3", message="timed out"))
    assert silent_hosts(ex, [h.address for h in c.hosts], 10) == ["127.1.1.3"]
    assert silent_hosts(ex, ["127.1.1.3"], 10) == ["127.1.1.3"]  # remembered: not asked again
    assert ex.ran(r"^true$").count("127.1.1.3") == 1
    with pytest.raises(ConnectError, match=r"^127\.1\.1\.3: no answer from 127\.1\.1\.3 within 10s .*"
                       r"`volume stop` on 127\.1\.1\.1 waits for it: volume stop: cap: failed: Staging failed"):
        teardown_volume(ex, "cap")
    assert len(ex.ran(r"volume stop")) == 1  # at once, not tried again for a minute
    assert "127.1.1.3" not in {h for h, _ in ex.calls[ex.calls.index(("127.1.1.3", "true")) + 1:]}


def test_a_brick_is_stopped_for_a_degraded_read_only_after_the_heal_is_done(tmp_path: Path) -> None:
    from gluster_model.gluster.apply import stop_one_brick

    from ..fakes import GLUSTER_DATA

    status = (GLUSTER_DATA / "volume_status_replica3.xml").read_text()
    killed = status.replace("<pid>5343</pid>", "<pid>-1</pid>")  # the third brick's glusterfsd, gone
    at = status.index("<path>/tmp/lab1/nodes/3/bricks/cap</path>")
    killed = killed[:at] + killed[at:].replace("<status>1</status>", "<status>0</status>", 1)
    counts = iter(["Number of entries: 3\nNumber of entries: 0\n", "Number of entries: 0\n" * 3])
    ex = _replica3_executor(tmp_path)
    ex.answer(r"heal-count", lambda host, cmd: (0, next(counts)))
    ex.answer(r"volume status", lambda host, cmd: (0, killed if ex.ran(r"kill -TERM") else status))
    victim = stop_one_brick(ex, "cap")
    assert victim.pid == 5343
    kinds = ["heal" if "heal-count" in c else "kill" for _, c in ex.calls if "heal-count" in c or "kill -TERM" in c]
    assert kinds == ["heal", "heal", "kill"]  # asked again while 3 entries were pending; the brick stopped after


def test_hosts_already_seen_silent_are_counted_without_being_asked_again(tmp_path: Path) -> None:
    """A client that answered neither of the watchdog's two looks is silent already: the probe after the stall
    does not wait its seconds for it again, and marks it with the others it finds."""
    from gluster_model.config.cluster import cluster_from_data
    from gluster_model.remote.executor import silent_hosts

    from ..fakes import FakeExecutor

    c = cluster_from_data({"servers": [{"host": f"127.1.1.{i}", "brick_paths": ["/b"]} for i in (1, 2, 3)]},
                          "c.yaml", tmp_path)
    ex = FakeExecutor(cluster=c).fail(r"^true$", host="127.1.1.1", message="timed out")
    assert silent_hosts(ex, [h.address for h in c.hosts], 10, known={"127.1.1.3"}) == ["127.1.1.1", "127.1.1.3"]
    assert sorted(ex.ran(r"^true$")) == ["127.1.1.1", "127.1.1.2"]  # the known one was not asked
    assert set(ex.silent()) == {"127.1.1.1", "127.1.1.3"}


def test_a_volume_with_a_silent_server_is_unmounted_lazily(tmp_path: Path) -> None:
    """A plain umount of a client whose server went silent waits for the requests to it; with a server found
    silent the client's mount is detached lazily at once, and a silent client itself is not asked."""
    from gluster_model.config.cluster import cluster_from_data
    from gluster_model.errors import MultiHostError
    from gluster_model.gluster.apply import unmount

    from ..fakes import FakeExecutor

    c = cluster_from_data({"servers": [{"host": f"127.1.1.{i}", "brick_paths": ["/b"]} for i in (1, 2)],
                           "defaults": {"mount_root": "/mnt/gl"}}, "c.yaml", tmp_path)
    ex = FakeExecutor(cluster=c)
    unmount(ex, "cap")
    # a plain unmount bounded (a client flushing to full bricks hung it), then a lazy one
    assert all("timeout -k 5 30 umount /mnt/gl/cap 2>/dev/null || umount -l /mnt/gl/cap" in cmd
               for _, cmd in ex.calls), ex.calls
    ex = FakeExecutor(cluster=c)
    ex.mark_silent("127.1.1.2", "no answer from 127.1.1.2 within 10s")
    with pytest.raises(MultiHostError, match=r"127\.1\.1\.2: no answer"):
        unmount(ex, "cap")
    ((host, cmd),) = ex.calls
    assert host == "127.1.1.1" and "umount -l /mnt/gl/cap" in cmd and "umount /mnt/gl/cap" not in cmd

"""A host's facts and a baseline as typed records: what a probe found reads back unchanged through the store, every
release's record still reads, the hardware key of given facts is the one the untyped code made (baselines stay
found), and a baseline comes back as it was measured, with its hardware and campaign."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import insert, update

from gluster_model.bench.engine import Measured
from gluster_model.campaign.records import hardware_key
from gluster_model.config.cluster import cluster_from_data
from gluster_model.errors import StoreError
from gluster_model.hardware.facts import HostFacts
from gluster_model.preflight import judge_host, parse_probe_output
from gluster_model.store import schema
from gluster_model.store.store import open_store

PROBE = (Path(__file__).parent.parent / "data" / "probe" / "lab_node1.txt").read_text()
BRICK = "/tmp/lab1/nodes/1/bricks"


def _cluster():  # type: ignore[no-untyped-def]
    return cluster_from_data({"servers": [{"host": "10.0.0.1", "brick_paths": [BRICK]},
                                          {"host": "10.0.0.2", "brick_paths": ["/b"]}]}, "t.yaml", Path("/"))


def _probed() -> dict[str, Any]:
    """What gather_facts makes of a captured probe of a lab node, before it is typed."""
    c = _cluster()
    rep = judge_host(c.hosts[0], parse_probe_output(PROBE), list(c.servers), 0)
    return {"name": "node1", "roles": ["server"], **rep.facts, "cpu_score": 412.5}


def _key_as_before(cluster_name: str, facts: dict[str, dict[str, Any]], setting: tuple[tuple[str, str], ...] = ()
                   ) -> str:
    """The hardware key as the release before typed facts computed it from dictionaries (written out again here,
    sharing nothing with campaign.records)."""
    hosts = []
    for address, f in sorted(facts.items()):
        bricks = f.get("bricks") or {}
        row = [address, f.get("cpu_model"), f.get("cpus"), f.get("ram_bytes"), f.get("nic"), f.get("nic_speed_mbps"),
               f.get("nic_mtu"), sorted((p, b.get("fstype")) for p, b in bricks.items())]
        limits = {"cpu_quota_cores": f.get("cpu_quota_cores"),
                  "throttle": sorted((p, sorted(b["throttle"].items())) for p, b in bricks.items()
                                     if b.get("throttle"))}
        hosts.append(row + ([limits] if any(limits.values()) else []))
    doc = {"cluster": cluster_name, "hosts": hosts, **({"lab": dict(setting)} if setting else {})}
    return hashlib.sha256(json.dumps(doc, sort_keys=True, separators=(",", ":"), default=str).encode()).hexdigest()


def test_a_probed_hosts_facts_read_back_as_they_were_found() -> None:
    raw = _probed()
    facts = HostFacts.read(raw)
    assert json.loads(json.dumps(facts.record())) == json.loads(json.dumps(raw))
    assert facts.gluster_version == "10.3" and facts.cpus and facts.ram_bytes and facts.ram_bytes > 1 << 30
    assert facts.brick_fstypes and facts.brick_fstypes[0] in ("ext4", "xfs", "tmpfs", "overlay")
    assert facts.version("iperf3") == raw["iperf3_version"] and facts.version("nonesuch") is None


@pytest.mark.parametrize("extra", [
    {},
    {"cpu_quota_cores": 0.5},
    {"cpu_quota_cores": 1, "ram_limit_bytes": 1 << 30},
    {"bricks": {BRICK: {"free_bytes": 10, "fstype": "ext4", "throttle": {"write_bps": 60_000_000}}}},
    {"nic": None, "nic_mtu": None, "cpu_model": None},
])
def test_the_hardware_key_of_typed_facts_is_the_key_the_dictionaries_gave(extra: dict[str, Any]) -> None:
    raw = {"10.0.0.1": {**_probed(), **extra}, "10.0.0.2": {"name": "b", "roles": ["server"], "cpus": 4,
                                                           "ram_bytes": 8 << 30, "nic": "eth0", "nic_mtu": 1500}}
    typed = {a: HostFacts.read(f) for a, f in raw.items()}
    c = _cluster()
    assert hardware_key(c, typed) == _key_as_before(c.name, raw)
    setting = (("link", "1gbit"),)
    assert hardware_key(c, typed, setting) == _key_as_before(c.name, raw, setting) != hardware_key(c, typed)
    # a changed fact that the key holds changes it
    moved = {**typed, "10.0.0.2": typed["10.0.0.2"].model_copy(update={"nic_mtu": 9000})}
    assert hardware_key(c, moved) != hardware_key(c, typed)


def test_the_store_keeps_typed_facts_and_reads_an_older_releases_record(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as st:
        cid = st.ensure_campaign("c", "p", "0" * 64, {}, "t", {"name": "t"}, "0")
        st.put_hosts(cid, {"10.0.0.1": HostFacts.read(_probed())})
        (host,) = st.hosts(cid)
        assert (host.address, host.name, host.roles) == ("10.0.0.1", "node1", ["server"])
        assert host.facts == HostFacts.read(_probed())
        # a record as an earlier release wrote it, with a fact this one does not know and one of a tool
        old = {"name": "n2", "roles": ["client", "server"], "cpus": 2, "disk_scheduler": "mq-deadline",
               "iozone_version": "Version $Revision: 3.506 $"}
        with st.tx() as conn:
            conn.execute(insert(schema.hosts).values(campaign_id=cid, address="10.0.0.2", name="n2",
                                                     roles="client+server", facts=old))
        _, second = st.hosts(cid)
        assert second.roles == ["client", "server"] and second.facts.cpus == 2
        assert second.facts.record() == old and second.facts.version("iozone") == old["iozone_version"]


def test_baselines_go_in_as_measured_and_come_back_with_their_hardware_and_campaign(tmp_path: Path) -> None:
    found = [Measured("network", "10.0.0.2", "10.0.0.1", "write", 9.4e8, "bit/s", raw='{"end": {}}'),
             Measured("disk", "10.0.0.1", BRICK, "seq_read", None, "B/s", error="disturbed: a hog (pid 7)")]
    with open_store(tmp_path / "s.db") as st:
        cid = st.ensure_campaign("c", "p", "0" * 64, {}, "t", {"name": "t"}, "0")
        st.add_baselines("hw-1", cid, found)
        st.add_baselines("hw-2", None, found[:1])
        kept = st.baselines("hw-1")
        assert [Measured(b.kind, b.host, b.target, b.test, b.value, b.unit, b.error, b.raw) for b in kept] == found
        assert {(b.hardware_key, b.campaign_id) for b in kept} == {("hw-1", cid)} and kept[0].id < kept[1].id
        assert all(b.measured_at is not None for b in kept)
        assert [b.campaign_id for b in st.baselines("hw-2")] == [None] and st.baselines("hw-0") == []


def test_a_damaged_raw_baseline_is_one_line_naming_it(tmp_path: Path) -> None:
    """A baseline's raw output that is not zlib data (a damaged page) is refused naming the baseline, as a
    trial's is, not a zlib traceback."""
    found = [Measured("network", "10.0.0.2", "10.0.0.1", "write", 9.4e8, "bit/s", raw='{"end": {}}')]
    with open_store(tmp_path / "s.db") as st:
        st.add_baselines("hw-1", None, found)
        with st.tx() as conn:
            conn.execute(update(schema.baselines).values(raw=b"not zlib"))
        with pytest.raises(StoreError, match=r"baseline 1 \(network write on 10\.0\.0\.2\) is damaged") as err:
            st.baselines("hw-1")
    assert "\n" not in str(err.value)


def test_a_design_log_comes_back_as_decisions_in_order(tmp_path: Path) -> None:
    """Each chosen run with its reason, and the round's summary (no configuration) with its figures, as written."""
    from gluster_model.store.identity import StoredDecision

    with open_store(tmp_path / "s.db") as st:
        cid = st.ensure_campaign("c", "p", "0" * 64, {}, "t", {"name": "t"}, "0")
        st.add_design_log(cid, 0, [("h1", "initial design (1 of 2)", {}), ("h2", "initial design (2 of 2)", {})])
        st.add_design_log(cid, 1, [(None, "round 1: predictions steady", {"runs": 2, "stopped": True})])
        log = st.design_log(cid)
    assert [(e.round, e.config_hash, e.reason) for e in log] == [
        (0, "h1", "initial design (1 of 2)"), (0, "h2", "initial design (2 of 2)"),
        (1, None, "round 1: predictions steady")]
    assert log[2].figures == {"runs": 2, "stopped": True} and all(isinstance(e, StoredDecision) for e in log)
    assert all(e.created_at is not None for e in log)


def test_a_baseline_kind_key_holds_what_can_move_its_figures_and_nothing_else() -> None:
    """A setting that changes the disks keeps the network's key and not the disks'; the link and a delay the
    reverse; the CPU (each measurement's processes run on it) and a knob no entry knows change both; so do the
    facts of each kind (a NIC's MTU the network's, a brick's filesystem or the page cache's RAM the disks')."""
    from gluster_model.campaign.records import baseline_key

    c = _cluster()
    facts = {"10.0.0.1": HostFacts.read(_probed()), "10.0.0.2": HostFacts.read({"cpus": 2, "nic_mtu": 1500})}

    def keys(setting: tuple[tuple[str, str], ...], f: dict[str, HostFacts] = facts) -> tuple[str, str]:
        return baseline_key("network", c, f, setting), baseline_key("disk", c, f, setting)

    today = keys((("link", "1gbit"), ("disk", "40MB/s")))
    assert today[0] != today[1]  # a kind's key is its own
    for setting, moved in (((("link", "1gbit"), ("disk", "80MB/s")), "disk"),
                           ((("link", "500mbit"), ("disk", "40MB/s")), "network"),
                           ((("link", "1gbit"), ("disk", "40MB/s"), ("latency", "5ms")), "network"),
                           ((("link", "1gbit"), ("disk", "40MB/s"), ("ram", "512MB")), "disk"),
                           ((("link", "1gbit"), ("disk", "40MB/s"), ("brick_backing", "xfs")), "disk"),
                           ((("link", "1gbit"), ("disk", "40MB/s"), ("cpu", "0.5")), "both"),
                           ((("link", "1gbit"), ("disk", "40MB/s"), ("queue_depth", "4")), "both")):
        net, disk = keys(setting)
        assert (net != today[0], disk != today[1]) == (moved in ("network", "both"), moved in ("disk", "both")), \
            (setting, moved)
    mtu = {**facts, "10.0.0.2": facts["10.0.0.2"].model_copy(update={"nic_mtu": 9000})}
    ram = {**facts, "10.0.0.2": facts["10.0.0.2"].model_copy(update={"ram_bytes": 1 << 30})}
    setting = (("link", "1gbit"), ("disk", "40MB/s"))
    assert keys(setting, mtu)[0] != today[0] and keys(setting, mtu)[1] == today[1]
    assert keys(setting, ram)[0] == today[0] and keys(setting, ram)[1] != today[1]
    with pytest.raises(ValueError, match="not a baseline kind"):
        baseline_key("rtt", c, facts)


def test_a_baseline_measured_another_way_is_not_kept() -> None:
    """The key holds how the kind is measured: another fio size or iperf3 length is another key."""
    from gluster_model.campaign.records import baseline_key

    c, facts, setting = _cluster(), {"10.0.0.2": HostFacts.read({"cpus": 2})}, (("link", "1gbit"),)
    one = baseline_key("disk", c, facts, setting, {"size": "64MB", "runtime": 3})
    assert one == baseline_key("disk", c, facts, setting, {"runtime": 3, "size": "64MB"})
    assert one != baseline_key("disk", c, facts, setting, {"size": "256MB", "runtime": 3})
    assert baseline_key("network", c, facts, setting, {"seconds": 3}) != \
        baseline_key("network", c, facts, setting, {"seconds": 1})

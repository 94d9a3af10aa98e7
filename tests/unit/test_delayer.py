"""The packet delayer's nfnetlink_queue messages (built and parsed by hand: the kernel's format, from
linux/netfilter/nfnetlink_queue.h) and the latency knob's text."""

from __future__ import annotations

import json
import socket
import struct
from pathlib import Path

import pytest

from gluster_model.hardware import delayer
from gluster_model.hardware.knobs.latency import KNOB, parse_delay, show_delay
from gluster_model.hardware.settings import STEPPED, parse_setting


def _attrs(body: bytes) -> dict[int, bytes]:
    out, at = {}, 0
    while at + 4 <= len(body):
        size, kind = struct.unpack_from("=HH", body, at)
        out[kind & 0x3FFF] = body[at + 4: at + size]
        at += size + (-size % 4)
    return out


def test_config_binds_the_queue_and_asks_for_metadata_and_whole_gso_packets() -> None:
    bind, params = delayer.config_messages(7)
    for msg, seq in ((bind, 1), (params, 2)):
        length, kind, flags, got_seq, _ = struct.unpack_from("=IHHII", msg)
        assert length == len(msg) and kind == (3 << 8) | 2 and flags == 1 | 4 and got_seq == seq
        family, version, res_id = struct.unpack_from("=BBH", msg, 16)
        assert (family, version, socket.ntohs(res_id)) == (socket.AF_UNSPEC, 0, 7)
    assert _attrs(bind[20:])[1][:1] == bytes([1])  # NFQNL_CFG_CMD_BIND
    attrs = _attrs(params[20:])
    assert struct.unpack("!IB", attrs[2]) == (0, 1)  # copy range 0, NFQNL_COPY_META
    assert struct.unpack("!I", attrs[5]) == (4,) and struct.unpack("!I", attrs[4]) == (4,)  # F_GSO, its mask


def test_a_batch_verdict_accepts_up_to_an_id() -> None:
    msg = delayer.verdict_batch(3, 0x01020304)
    assert struct.unpack_from("=H", msg, 4)[0] == (3 << 8) | 3  # NFQNL_MSG_VERDICT_BATCH
    assert struct.unpack("!II", _attrs(msg[20:])[2]) == (1, 0x01020304)  # NF_ACCEPT, the id


def _packet(packet_id: int, stamp: tuple[int, int] | None = None) -> bytes:
    hdr = struct.pack("!IHB", packet_id, 0x0800, 1) + b"\0"  # id, hw protocol, hook, padding
    mark = struct.pack("=HH", 8, 3) + b"\0\0\0\1"  # an attribute before the header, as the kernel may send
    attrs = mark + struct.pack("=HH", 4 + len(hdr), 1) + hdr
    if stamp is not None:  # NFQA_TIMESTAMP after the header: seconds and microseconds, big-endian 64-bit
        attrs += struct.pack("=HH", 20, 4) + struct.pack(">qq", *stamp)
    body = struct.pack("=BBH", socket.AF_INET, 0, socket.htons(0)) + attrs
    return struct.pack("=IHHII", 16 + len(body), (3 << 8) | 0, 0, 0, 0) + body


def test_packet_ids_are_read_from_each_message_of_a_datagram() -> None:
    assert delayer.packet_ids(_packet(5) + _packet(6)) == ([(5, None), (6, None)], 0)
    error = struct.pack("=IHHII", 36, 2, 0, 1, 0) + struct.pack("=i", -1) + b"\0" * 16
    assert delayer.packet_ids(error) == ([], 1)  # EPERM: the kernel refused (not root)
    ack = struct.pack("=IHHII", 36, 2, 0, 1, 0) + struct.pack("=i", 0) + b"\0" * 16
    assert delayer.packet_ids(ack) == ([], 0)


def test_each_packet_keeps_the_kernels_receive_time() -> None:
    """The stamp follows its own packet, wherever in the message it is: 1.75 s past 1,800,000,000."""
    found, err = delayer.packet_ids(_packet(7, (1_800_000_001, 750_000)) + _packet(8) + _packet(9, (5, 1)))
    assert err == 0 and [i for i, _ in found] == [7, 8, 9]
    assert found[0][1] == pytest.approx(1_800_000_001.75, abs=1e-6) and found[1][1] is None
    assert found[2][1] == pytest.approx(5.000001, abs=1e-9)
    # a stamp cut short by the datagram's end is no stamp, and the packet is still held
    cut = _packet(10, (1, 0))
    assert delayer.packet_ids(cut[:-8])[0] == [(10, None)]


def test_a_packet_is_held_from_when_the_kernel_received_it() -> None:
    """A packet read 300 us after it arrived (the delayer woke late) is due 300 us sooner than one read at
    once; a stamp a second or more before the read, or after it, is a clock step, not a wait."""
    wall_minus_mono = 1_000_000.0
    read_at = 50.0
    assert delayer.arrival(read_at + wall_minus_mono - 0.0003, read_at, wall_minus_mono) == pytest.approx(49.9997)
    assert delayer.arrival(None, read_at, wall_minus_mono) == read_at
    assert delayer.arrival(read_at + wall_minus_mono - 2.0, read_at, wall_minus_mono) == read_at
    assert delayer.arrival(read_at + wall_minus_mono + 0.001, read_at, wall_minus_mono) == read_at


def test_the_status_file_says_how_late_packets_were_let_through(tmp_path: Path) -> None:
    late = delayer.Lateness()
    for s in (0.0001, 0.0003):
        late.add(s)
    late.stamped = 2
    path = str(tmp_path / "delayer.status")
    delayer.write_status(path, late, 500)
    got = json.loads(Path(path).read_text())
    assert got == {"delay_us": 500, "packets": 2, "stamped": 2, "late_us_mean": 200.0, "late_us_max": 300.0}
    assert not Path(path + ".tmp").exists()


@pytest.mark.parametrize("text, us", [("250us", 250), ("0.5ms", 500), ("1 ms", 1000), ("1.25ms", 1250),
                                      ("none", None), ("0", None)])
def test_delays_read_and_shown_round_trip(text: str, us: int | None) -> None:
    assert parse_delay(text) == us
    assert parse_delay(show_delay(us)) == us
    assert parse_setting("latency", text) == {"latency": us}


@pytest.mark.parametrize("text, says", [("slow", "not a delay"), ("2s", "1us to 1s"), ("0.1us", "1us to 1s"),
                                        ("-1ms", "1us to 1s")])
def test_a_bad_delay_says_what_is_allowed(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_delay(text)


def test_a_hosts_delay_is_recorded_rule_first_and_started_before_its_rule() -> None:
    """The undo takes the rule away before the delayer (packets then pass), the do starts the delayer and waits
    for its bound queue before the rule that feeds it exists, and the record reads back in words; the knob is
    one set by commands (``hardware/knobs/latency.py``), the same on a cluster's host as on a lab node."""
    import shlex

    from pathlib import Path

    from gluster_model.config.cluster import cluster_from_data
    from gluster_model.hardware.emulation import _host_plan, apply_script, describe_record

    from ..fakes import FakeExecutor

    assert STEPPED["latency"] is KNOB and KNOB.step is not None and not KNOB.shares
    cluster = cluster_from_data({"name": "c", "emulation": {"allow": True, "record_dir": "/var/lib/glm/"},
                                 "servers": [{"host": "10.0.0.2", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    ex = FakeExecutor(cluster=cluster)
    ex.on(r"getent ahostsv4", "dev=eth1\nmtu=1500\n")
    ex.on(r"tc qdisc show", "qdisc: qdisc noqueue 0: root refcnt 2\nstep latency: none\n")
    undo, do, words = _host_plan(ex, "10.0.0.2", None, {}, None, None, {"latency": 250})
    rule = shlex.join(delayer.input_rule("eth1"))
    assert len(undo) == 1 and undo[0][:2] == ["sh", "-c"]
    assert undo[0][2].index(f"iptables -D {rule}") < undo[0][2].index("kill")  # the rule goes first
    assert do[-2] == ["iptables", "-A", *delayer.input_rule("eth1")]
    assert "kill -0" in do[-1][2]  # a delayer that ended after binding its queue fails the setting
    started = next(a[2] for a in do if "setsid" in " ".join(a))
    assert "python3 /var/lib/glm/emulation-10.0.0.2.delayer.py --queue 27182 --delay-us 250" in started
    waits = next(i for i, a in enumerate(do) if "-s " in " ".join(a))
    assert do.index(next(a for a in do if "setsid" in " ".join(a))) < waits < len(do) - 2
    assert "--status /var/lib/glm/emulation-10.0.0.2.delayer.status" in started
    assert words == "packets received on eth1 held 250us"
    script = apply_script(cluster.emulation_file("10.0.0.2", "undo"), undo, do)
    recorded = "\n".join(shlex.join(a) for a in undo)
    assert script.index("printf") < script.index("iptables -A")
    assert describe_record(recorded) == (1, "packet delay on eth1")
    # a lab node: the same commands, its files in the node's directory
    assert KNOB.step.apply(250, "eth0", "/lab/nodes/1/")[-2] == ["iptables", "-A", *delayer.input_rule("eth0")]
    assert any("/lab/nodes/1/delayer.py" in " ".join(a) for a in KNOB.step.apply(250, "eth0", "/lab/nodes/1/"))


def test_a_host_whose_packets_already_go_to_a_queue_is_refused_before_anything_changes() -> None:
    """Two readers of one NFQUEUE would fight for its packets: a host whose INPUT chain feeds one already (its
    own IPS, or a delay glmodel did not record) is refused, naming the rule, at planning time."""
    from pathlib import Path

    from gluster_model.config.cluster import cluster_from_data
    from gluster_model.hardware.emulation import EmulationError, _host_plan

    from ..fakes import FakeExecutor

    cluster = cluster_from_data({"name": "c", "emulation": {"allow": True},
                                 "servers": [{"host": "10.0.0.2", "brick_paths": ["/b"]}]}, "c.yaml", Path("."))
    ex = FakeExecutor(cluster=cluster)
    ex.on(r"getent ahostsv4", "dev=eth1\nmtu=1500\n")
    ex.on(r"tc qdisc show", "step latency: queued: -A INPUT -i eth1 -j NFQUEUE --queue-num 0\n")
    with pytest.raises(EmulationError, match="10.0.0.2: latency: packets arriving on eth1 already go to an NFQUEUE"):
        _host_plan(ex, "10.0.0.2", None, {}, None, None, {"latency": 250})
    assert KNOB.step is not None and KNOB.step.restore("none", "eth1", "/x/")  # nothing there: ours is undone


def test_the_delayers_cpu_counts_as_the_network_not_as_load() -> None:
    """A trial's context names processes outside the system under test that used CPU; the delayer is the
    emulated network's latency, so its name (set by the process itself, 15 characters at most) is one of its own."""
    from gluster_model.campaign.trial_context import OWN

    assert len(delayer.COMM) <= 15 and OWN.match(delayer.COMM.decode())
    assert not OWN.match("python3")

"""Link shaping commands for the lab (pure builders; the lab integration test runs them for real)."""

from __future__ import annotations

import pytest

from gluster_model.errors import LabError
from gluster_model.lab.links import IFB, parse_rate, removal_argv, shaping_argv, show_rate


@pytest.mark.parametrize("text, bits", [("1gbit", 10**9), ("10Gbit", 10**10), ("100mbit", 10**8), ("2.5g", 25 * 10**8),
                                        ("unlimited", None), ("none", None)])
def test_parse_rate(text: str, bits: int | None) -> None:
    assert parse_rate(text) == bits


@pytest.mark.parametrize("text, says", [("fast", "not a link rate"), ("1gbps", "in bits"), ("10kbit", "at least")])
def test_parse_rate_refuses(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_rate(text)


def test_show_rate_round_trips() -> None:
    assert [show_rate(parse_rate(t)) for t in ("1gbit", "2.5gbit", "100mbit", "unlimited")] == [
        "1gbit", "2.5gbit", "100mbit", "unlimited"]


def test_shaping_commands_limit_each_node_both_ways() -> None:
    cmds = [" ".join(c) for c in shaping_argv({"127.1.1.3": 10**10, "127.1.1.1": 10**9})]
    assert cmds[:5] == [f"ip link add {IFB} type ifb", f"ip link set {IFB} up",
                        "tc qdisc add dev lo root handle 1: htb default 0",
                        "tc qdisc add dev lo handle ffff: ingress",
                        f"tc qdisc add dev {IFB} root handle 1: htb default 0"]
    # Node 1 (class 1:11): its sends are classed by source on lo, its receives by destination on the IFB.
    assert any(c.startswith("tc class add dev lo parent 1: classid 1:11 htb rate 1000000000bit ceil 1000000000bit")
               for c in cmds)
    assert "tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip src 127.1.1.1/32 flowid 1:11" in cmds
    assert (f"tc filter add dev lo parent ffff: protocol ip prio 1 u32 match ip dst 127.1.1.1/32 action mirred "
            f"egress redirect dev {IFB}") in cmds
    assert f"tc filter add dev {IFB} parent 1: protocol ip prio 1 u32 match ip dst 127.1.1.3/32 flowid 1:13" in cmds
    assert sum("rate 10000000000bit" in c for c in cmds) == 2  # node 3's two classes
    assert shaping_argv({}) == []
    assert [" ".join(c) for c in removal_argv()] == ["tc qdisc del dev lo root", "tc qdisc del dev lo ingress",
                                                      f"ip link del {IFB}"]


def test_only_lab_addresses_are_shaped() -> None:
    with pytest.raises(LabError, match="not a lab node address"):
        shaping_argv({"10.0.0.1": 10**9})

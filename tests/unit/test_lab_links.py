"""Link shaping commands for the lab (pure builders; the lab integration test runs them for real)."""

from __future__ import annotations

import pytest

from gluster_model.hardware.link import IFB, parse_rate, removal_argv, shaping_argv, show_rate
from gluster_model.lab.netns import bridge_argv, bridge_name, clash, host_veth, netns_name, node_argv


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


def test_shaping_commands_limit_a_nic_both_ways_with_acks_first() -> None:
    cmds = [" ".join(c) for c in shaping_argv("eth0", 3 * 10**8)]
    assert cmds[:3] == [f"ip link add {IFB} type ifb", f"ip link set {IFB} txqueuelen 1000", f"ip link set {IFB} up"]
    for dev in ("eth0", IFB):  # egress on the NIC, ingress on the IFB device: the same classes
        assert f"tc qdisc add dev {dev} root handle 1: htb default 10" in cmds
        assert any(c.startswith(f"tc class add dev {dev} parent 1: classid 1:1 htb rate 300000000bit "
                                f"ceil 300000000bit") for c in cmds)
        # Bulk and small packets share the rate; small ones (ACKs) go first and may take all of it.
        assert any(c.startswith(f"tc class add dev {dev} parent 1:1 classid 1:10 htb rate 285000000bit "
                                f"ceil 300000000bit") and c.endswith("prio 1") for c in cmds)
        assert any(c.startswith(f"tc class add dev {dev} parent 1:1 classid 1:20 htb rate 15000000bit "
                                f"ceil 300000000bit") and c.endswith("prio 0") for c in cmds)
        assert (f"tc filter add dev {dev} parent 1: protocol ip prio 1 u32 match u16 0x0000 0xff80 at 2 "
                f"flowid 1:20") in cmds
    assert cmds[-2:] == ["tc qdisc add dev eth0 handle ffff: ingress",
                         f"tc filter add dev eth0 parent ffff: protocol all prio 1 u32 match u32 0 0 action mirred "
                         f"egress redirect dev {IFB}"]
    assert [" ".join(c) for c in removal_argv("eth0")] == ["tc qdisc del dev eth0 root",
                                                           "tc qdisc del dev eth0 handle ffff: ingress",
                                                           f"ip link del {IFB}"]


def test_lab_network_commands_name_the_lab_and_run_in_the_node() -> None:
    lab = "/tmp/some-lab"
    cmds = [" ".join(c) for c in node_argv(lab, 2)]
    ns, outer = netns_name(lab, 2), host_veth(lab, 2)
    assert ns.startswith("glm-") and ns.endswith("-2") and len(outer) <= 15 and len(bridge_name(lab)) <= 15
    assert cmds[0] == f"ip netns add {ns}" and f"ip link set {outer} master {bridge_name(lab)}" in cmds
    assert f"nsenter --net=/run/netns/{ns} -- ip addr add 10.213.1.2/24 dev eth0" in cmds
    assert netns_name("/tmp/other-lab", 2) != ns  # two lab directories never share names
    # The bridge names its lab, so a second lab on the subnet is told which one to take down.
    assert f"ip link set dev {bridge_name(lab)} alias glmodel lab {lab}" in [" ".join(c) for c in bridge_argv(lab)]


def test_a_subnet_already_in_use_is_found() -> None:
    shown = ("1: lo    inet 127.0.0.1/8 scope host lo\n"
             "2: eth0    inet 10.213.0.5/16 brd 10.213.255.255 scope global eth0\n")
    assert clash(shown) == "eth0 (10.213.0.5/16)"
    assert clash("2: eth0    inet 192.168.1.5/24 scope global eth0\n") is None


def test_a_lab_on_another_subnet_puts_its_nodes_and_the_machine_there() -> None:
    lab = "/tmp/second-lab"
    cmds = [" ".join(c) for c in node_argv(lab, 3, "10.213.2.0/24")]
    assert f"nsenter --net=/run/netns/{netns_name(lab, 3)} -- ip addr add 10.213.2.3/24 dev eth0" in cmds
    bridge = [" ".join(c) for c in bridge_argv(lab, "10.213.2.0/24")]
    assert f"ip addr add 10.213.2.254/24 dev {bridge_name(lab)}" in bridge
    # the default lab's addresses are no clash for it, its own subnet's are
    assert clash("3: glmbr-aaaaaa    inet 10.213.1.254/24 scope global glmbr-aaaaaa\n", "10.213.2.0/24") is None
    assert clash("3: glmbr-aaaaaa    inet 10.213.2.254/24 scope global glmbr-aaaaaa\n", "10.213.2.0/24")


@pytest.mark.parametrize("bad", ["10.213.2.0/16", "10.213.2.5/24", "8.8.8.0/24", "fd00::/64", "lab2", ""])
def test_a_subnet_that_is_not_a_private_ipv4_slash_24_is_refused_in_one_line(bad: str) -> None:
    from gluster_model.errors import LabError
    from gluster_model.lab.netns import parse_subnet

    with pytest.raises(LabError) as err:
        parse_subnet(bad)
    assert str(err.value) == f"--subnet {bad!r}: give a private IPv4 /24 network, such as 10.213.2.0/24"

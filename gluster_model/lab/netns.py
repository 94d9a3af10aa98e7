"""Each lab node as a machine on a network: its own network namespace with one NIC on the lab's bridge.

Node *i* of a lab gets the namespace ``glm-<lab>-<i>``, a veth pair whose inner end is renamed ``eth0`` and holds
the node's address (host *i* of the lab's /24 subnet, 10.213.1.0/24 unless ``lab up --subnet`` says another), and
whose outer end sits on the lab's bridge, which holds host 254 so the machine itself reaches every node. Two labs
on one machine need two subnets: the nodes' processes share one process table and one /tmp, and what glmodel
finds there by a node's address (the iozone children serving a master, a fio server's pid file) must be one
lab's. glusterd and sshd start inside the namespace (``nsenter --net``: only
the network is private; the mount namespace stays the machine's, so bricks and FUSE mounts are where the lab
put them), and so does everything started over SSH on the node. Each node's daemons also get a hostname of
their own (see ``as_node``). To Gluster, a node then sees only its own
address as local, like a real machine, and a node's traffic to any other crosses its NIC, where tc shapes it.

What still differs from separate machines: one kernel (one page cache, which ``drop_caches`` empties for all
nodes at once), shared cores (a node's CPU is a cgroup quota, not a core of its own), and one process table.

Pure builders make the argv lists; ``create`` and ``delete`` are the only places that run them. The names are
derived from the lab directory, and ``state.json`` records them before they exist, so ``lab down`` removes them
even after a kill -9.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
from pathlib import Path

from ..errors import LabError
from .run import all_pids, run

DEFAULT_SUBNET = "10.213.1.0/24"  # the lab's /24: node i is host i, the machine host 254
HOST_INDEX = 254
NIC = "eth0"  # the name of every node's NIC inside its namespace, as on a small real machine
NETNS_DIR = Path("/run/netns")
# Jumbo frames, as storage networks run them: at 1500 bytes a link shaped to 300 Mbit/s carried 287 Mbit/s of
# TCP payload (headers), at 9000 298 (measured with iperf3).
MTU = "9000"


def lab_id(lab_dir: str) -> str:
    """Six hex digits unique to one lab directory (interface names have at most 15 characters)."""
    return hashlib.sha256(lab_dir.encode()).hexdigest()[:6]


def netns_name(lab_dir: str, index: int) -> str:
    return f"glm-{lab_id(lab_dir)}-{index}"


def bridge_name(lab_dir: str) -> str:
    return f"glmbr-{lab_id(lab_dir)}"


def host_veth(lab_dir: str, index: int) -> str:
    return f"glm{lab_id(lab_dir)}h{index}"


def parse_subnet(text: str) -> ipaddress.IPv4Network:
    """A lab subnet from ``--subnet``: a private IPv4 /24 (its hosts 1-253 are the nodes, 254 the machine)."""
    try:
        net = ipaddress.ip_network(text.strip())
    except ValueError:
        net = None
    if not isinstance(net, ipaddress.IPv4Network) or net.prefixlen != 24 or not net.is_private:
        raise LabError(f"--subnet {text!r}: give a private IPv4 /24 network, such as 10.213.2.0/24")
    return net


def node_address(index: int, subnet: str = DEFAULT_SUBNET) -> str:
    return str(parse_subnet(subnet).network_address + index)


def host_address(subnet: str = DEFAULT_SUBNET) -> str:
    """The machine's own address on the lab's bridge."""
    return node_address(HOST_INDEX, subnet)


def in_netns(netns: str, argv: list[str]) -> list[str]:
    """``argv`` run inside a node's network namespace (and only that: mounts and /proc stay the machine's)."""
    return ["nsenter", f"--net={NETNS_DIR / netns}", "--", *argv]


def as_node(netns: str, address: str, argv: list[str]) -> list[str]:
    """``argv`` started as the node's daemons are: in its network namespace and a UTS namespace of its own whose
    hostname is the node's address.

    On one machine every node would have the machine's hostname, and a brick reports that name as its location
    (its pathinfo): every client then took every brick for its own, and AFR's choose-local read from whichever
    answered last. The address as hostname resolves without /etc/hosts, to the node itself.
    """
    return in_netns(netns, ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', address, *argv])


def bridge_argv(lab_dir: str, subnet: str = DEFAULT_SUBNET) -> list[list[str]]:
    """The commands that make the lab's bridge, with the machine's own address on it."""
    br = bridge_name(lab_dir)
    return [["ip", "link", "add", br, "type", "bridge"],
            # The alias names the lab, so a clash with another lab can say which one to take down.
            ["ip", "link", "set", "dev", br, "alias", f"glmodel lab {lab_dir}"],
            ["ip", "addr", "add", f"{host_address(subnet)}/24", "dev", br],
            ["ip", "link", "set", br, "mtu", MTU],
            ["ip", "link", "set", br, "up"]]


def node_argv(lab_dir: str, index: int, subnet: str = DEFAULT_SUBNET) -> list[list[str]]:
    """The commands that give node ``index`` its namespace and its NIC on the bridge."""
    ns, outer, inner = netns_name(lab_dir, index), host_veth(lab_dir, index), f"glm{lab_id(lab_dir)}n{index}"
    return [["ip", "netns", "add", ns],
            ["ip", "link", "add", outer, "type", "veth", "peer", "name", inner],
            ["ip", "link", "set", outer, "mtu", MTU],
            ["ip", "link", "set", outer, "master", bridge_name(lab_dir)],
            ["ip", "link", "set", outer, "up"],
            ["ip", "link", "set", inner, "netns", ns],
            in_netns(ns, ["ip", "link", "set", inner, "name", NIC]),
            in_netns(ns, ["ip", "link", "set", NIC, "mtu", MTU]),
            in_netns(ns, ["ip", "addr", "add", f"{node_address(index, subnet)}/24", "dev", NIC]),
            in_netns(ns, ["ip", "link", "set", NIC, "up"]),
            in_netns(ns, ["ip", "link", "set", "lo", "up"])]


def clash(addresses_text: str, subnet: str = DEFAULT_SUBNET) -> str | None:
    """The first device whose IPv4 address lies in the lab's /24, from ``ip -4 -o addr show`` text (pure)."""
    ours = parse_subnet(subnet)
    for line in addresses_text.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[2] == "inet":
            try:
                net = ipaddress.ip_interface(parts[3]).network
            except ValueError:
                continue
            if net.overlaps(ours):
                return f"{parts[1]} ({parts[3]})"
    return None


def check_free(lab_dir: str, subnet: str = DEFAULT_SUBNET) -> None:
    """Refuse when another device (another lab's bridge, a real network) already uses the lab's subnet."""
    found = clash(run(["ip", "-4", "-o", "addr", "show"]).stdout, subnet)
    if found is None:
        return
    device = found.split()[0]
    alias = run(["ip", "-o", "link", "show", "dev", device], check=False).stdout
    other = alias.split(" alias glmodel lab ", 1)[1].split()[0] if " alias glmodel lab " in alias else None
    if other is not None and other != lab_dir:
        raise LabError(f"the lab's subnet {subnet} is in use by the lab in {other}; run `glmodel lab down "
                       f"--dir {other}`, or give this lab another with --subnet")
    if other is None:
        raise LabError(f"the lab's subnet {subnet} is already used on this machine by {found}; give the lab "
                       f"another with --subnet")


def create(lab_dir: str, indices: list[int], subnet: str = DEFAULT_SUBNET) -> None:
    """Make the bridge and every node's namespace and NIC (the caller recorded them in the state first)."""
    if not Path("/proc/sys/net/ipv4").is_dir():
        raise LabError("this machine has no IPv4 networking for the lab's nodes")
    check_free(lab_dir, subnet)
    for argv in bridge_argv(lab_dir, subnet):
        run(argv)
    for index in indices:
        for argv in node_argv(lab_dir, index, subnet):
            run(argv)


def _inode(path: Path) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def pids(netns: str) -> list[int]:
    """Every process inside one node's namespace: its daemons, and anything its SSH sessions left behind."""
    target = _inode(NETNS_DIR / netns)
    if target is None:
        return []
    me = os.getpid()
    return sorted(p for p in all_pids() if p != me and _inode(Path(f"/proc/{p}/ns/net")) == target)


def exists(netns: str) -> bool:
    return (NETNS_DIR / netns).exists()


def delete(lab_dir: str, netns: list[str]) -> list[str]:
    """Remove the namespaces (their NICs, qdiscs and IFB devices go with them) and the bridge.

    Returns what is still there afterwards (each is named, to be tried again by the next ``lab down``).
    """
    left = []
    for ns in netns:
        if exists(ns):
            run(["ip", "netns", "del", ns], check=False)
        if exists(ns):
            left.append(f"network namespace {ns}")
        # A bring-up killed between making a veth pair and moving its inner end leaves both ends here.
        outer = host_veth(lab_dir, int(ns.rsplit("-", 1)[1]))
        if run(["ip", "link", "show", outer], check=False).returncode == 0:
            run(["ip", "link", "del", outer], check=False)
    br = bridge_name(lab_dir)
    if run(["ip", "link", "show", br], check=False).returncode == 0:
        run(["ip", "link", "del", br], check=False)
        if run(["ip", "link", "show", br], check=False).returncode == 0:
            left.append(f"bridge {br}")
    return left

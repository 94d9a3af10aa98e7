"""Link speed as tc gives it to one NIC: a full-duplex rate, the same commands on a lab node and on any host.

- sending: an HTB qdisc on the NIC's egress whose one class holds the rate;
- receiving: the NIC's ingress redirects every packet to an IFB device, whose egress has the same HTB class.

So a packet from host A to host B is limited by A's send rate and by B's receive rate, and a host's link is
shared by all its peers, as a NIC is. Pure functions: rates parsed and shown, commands built as argv lists; the
lab (``lab.links``) runs them inside a node's namespace, ``emulation`` over SSH on a cluster's hosts.
"""

from __future__ import annotations

import re

IFB = "glmifb0"
ALIAS = "glmodel-link"  # the IFB device's alias: "glmodel-link <bit/s>", the rate its shaping was made with
_RATE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(bit|bps)?\s*$", re.IGNORECASE)
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_MIN_RATE = 10**6  # 1 Mbit/s: below this iozone trials would take forever on the lab


def parse_rate(text: str) -> int | None:
    """'1gbit', '10Gbit', '100mbit', '2.5g' -> bits per second; 'unlimited'/'none' -> None (no shaping)."""
    t = text.strip().lower()
    if t in ("unlimited", "none", "off", "0"):
        return None
    m = _RATE.match(t)
    if not m:
        raise ValueError(f"{text!r} is not a link rate (use e.g. 100mbit, 1gbit, 10gbit, or unlimited)")
    if (m.group(3) or "").lower() == "bps":
        raise ValueError(f"{text!r}: give the rate in bits (e.g. 1gbit), as NICs are sold")
    rate = int(float(m.group(1)) * _SCALE[m.group(2).lower()])
    if rate < _MIN_RATE:
        raise ValueError(f"{text!r}: at least 1mbit")
    return rate


def show_rate(bits: int | None) -> str:
    if bits is None:
        return "unlimited"
    for unit, scale in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits >= scale:
            return f"{bits / scale:g}{unit}"
    return f"{bits}bit"


def _class_args(rate: int, ceil: int) -> list[str]:
    # The burst must hold several 64 KiB segments (a veth passes GSO super-packets), or a fast class undershoots
    # its rate; the quantum only matters when classes borrow, and stays under HTB's 200000 limit.
    burst = str(max(ceil // 8 // 250, 4 * 65536))
    return ["htb", "rate", f"{rate}bit", "ceil", f"{ceil}bit", "burst", burst, "cburst", burst, "quantum", "131072"]


def shaping_argv(nic: str, rate: int, ifb: str = IFB) -> list[list[str]]:
    """The commands that limit ``nic`` to ``rate`` bit/s each way (egress directly, ingress through ``ifb``).

    Each direction is one HTB class of ``rate`` with two children: bulk data, and packets under 128 bytes
    (TCP ACKs) served first. Without that, a node receiving at its full rate queues the ACKs of what it sends
    behind the data in its ingress FIFO, and its sending collapsed to a quarter of the rate (measured); fair
    queueing (sfq, fq_codel) would do the same, but not every kernel has it, and HTB with u32 is everywhere tc is.
    """
    small = max(rate // 20, 10**5)
    cmds: list[list[str]] = [["ip", "link", "add", ifb, "type", "ifb"],
                             ["ip", "link", "set", ifb, "txqueuelen", "1000"],  # an IFB's default queue is 32
                             ["ip", "link", "set", ifb, "up"],
                             # the exact rate, where emulation finds it (tc prints rates rounded)
                             ["ip", "link", "set", ifb, "alias", f"{ALIAS} {rate}"]]
    for dev in (nic, ifb):
        cmds += [["tc", "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "10"],
                 ["tc", "class", "add", "dev", dev, "parent", "1:", "classid", "1:1", *_class_args(rate, rate)],
                 ["tc", "class", "add", "dev", dev, "parent", "1:1", "classid", "1:10",
                  *_class_args(rate - small, rate), "prio", "1"],
                 ["tc", "class", "add", "dev", dev, "parent", "1:1", "classid", "1:20", *_class_args(small, rate),
                  "prio", "0"],
                 # IPv4 total length below 128 bytes (the 16 bits at offset 2, upper 9 bits zero).
                 ["tc", "filter", "add", "dev", dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match",
                  "u16", "0x0000", "0xff80", "at", "2", "flowid", "1:20"]]
    return cmds + [
        ["tc", "qdisc", "add", "dev", nic, "handle", "ffff:", "ingress"],
        ["tc", "filter", "add", "dev", nic, "parent", "ffff:", "protocol", "all", "prio", "1", "u32", "match", "u32",
         "0", "0", "action", "mirred", "egress", "redirect", "dev", ifb],
    ]


def removal_argv(nic: str, ifb: str = IFB) -> list[list[str]]:
    """The commands that take a NIC's shaping away again (each may find its part already gone)."""
    return [["tc", "qdisc", "del", "dev", nic, "root"],
            ["tc", "qdisc", "del", "dev", nic, "handle", "ffff:", "ingress"],
            ["ip", "link", "del", ifb]]


def state_script(nic: str, ifb: str = IFB) -> str:
    """Shell text printing what traffic control ``nic`` has now: its qdiscs (``qdisc: ...`` lines) and the
    alias of glmodel's IFB device where there is one (``alias: glmodel-link <bit/s>``)."""
    import shlex

    n, i = shlex.quote(nic), shlex.quote(ifb)
    return (f"tc qdisc show dev {n} | sed 's/^/qdisc: /'; "
            f"ip -d link show dev {i} 2>/dev/null | sed -n 's/^ *alias \\(.*\\)$/alias: \\1/p'")


def host_state_script(address: str, ifb: str = IFB) -> str:
    """``state_script`` for the NIC that holds the host's cluster address (``nic.nic_script`` finds it)."""
    import shlex

    from .nic import nic_script

    i = shlex.quote(ifb)
    return (f"{{ {nic_script(address)}; }} >/dev/null; [ -n \"$dev\" ] || exit 0; "
            "tc qdisc show dev \"$dev\" | sed 's/^/qdisc: /'; "
            f"ip -d link show dev {i} 2>/dev/null | sed -n 's/^ *alias \\(.*\\)$/alias: \\1/p'")


def parse_state(text: str) -> tuple[str, int | None]:
    """What a NIC's traffic control is, from ``state_script``'s output (pure): ("none", None) for the kernel's
    default (a root qdisc of handle 0:, no ingress); ("glmodel", rate) for shaping ``shaping_argv`` made (a
    lab's link, or a host's own made with glmodel), at its exact rate; ("<the root qdisc>", None) for anything
    else, which glmodel did not make and does not replace."""
    qdiscs = [ln.removeprefix("qdisc: ").strip() for ln in text.splitlines() if ln.startswith("qdisc: ")]
    alias = next((ln.removeprefix("alias: ").strip() for ln in text.splitlines() if ln.startswith("alias: ")), "")
    root = next((q for q in qdiscs if " root" in q), "")
    extra = [q for q in qdiscs if q.split()[1:2] in (["ingress"], ["clsact"])]
    words = root.split()[1:]  # kind, handle, ...
    handle = words[1] if len(words) > 1 else "0:"
    name, _, value = alias.partition(" ")
    if name == ALIAS and value.isdecimal() and words[:2] == ["htb", "1:"]:
        return "glmodel", int(value)
    if handle == "0:" and not extra:
        return "none", None
    return (extra[0] if handle == "0:" and extra else root or extra[0])[:80], None

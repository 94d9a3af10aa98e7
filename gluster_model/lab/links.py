"""Network speed per lab node: each node's address gets a full-duplex link of its own rate.

On one machine every lab node talks over the loopback device at memory speed, so the network — the feature the
reference study found decisive — cannot vary. This module shapes it with tc:

- sending: an HTB class per shaped node on ``lo``'s root qdisc, matched by source address;
- receiving: ``lo``'s ingress redirects packets for shaped nodes to an IFB device, whose HTB classes match the
  destination address.

So a packet from node A to node B is limited by A's send rate and by B's receive rate, and a node's link is
shared by all its peers, as a NIC is. Unshaped traffic (other addresses, unshaped nodes) passes untouched.
Commands are built as argv lists by pure functions; ``apply`` is the one place that runs them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..errors import LabError
from .run import run
from .state import PREFIX

IFB = "glmifb0"
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


def _class_args(rate: int) -> list[str]:
    # rate = ceil: no borrowing. The burst must hold several of loopback's 64 KiB segments, or a fast class
    # undershoots its rate; the quantum only matters when classes borrow, and is kept under HTB's 200000 limit.
    burst = str(max(rate // 8 // 250, 4 * 65536))
    return ["htb", "rate", f"{rate}bit", "ceil", f"{rate}bit", "burst", burst, "cburst", burst, "quantum", "131072"]


def shaping_argv(rates: Mapping[str, int], ifb: str = IFB) -> list[list[str]]:
    """The commands that install ``rates`` (address -> bit/s) on lo and the IFB device, in order."""
    if not rates:
        return []
    cmds: list[list[str]] = [
        ["ip", "link", "add", ifb, "type", "ifb"],
        ["ip", "link", "set", ifb, "up"],
        ["tc", "qdisc", "add", "dev", "lo", "root", "handle", "1:", "htb", "default", "0"],
        ["tc", "qdisc", "add", "dev", "lo", "handle", "ffff:", "ingress"],
        ["tc", "qdisc", "add", "dev", ifb, "root", "handle", "1:", "htb", "default", "0"],
    ]
    for address, rate in sorted(rates.items(), key=lambda kv: _index(kv[0])):
        classid = f"1:{10 + _index(address)}"
        cmds += [
            ["tc", "class", "add", "dev", "lo", "parent", "1:", "classid", classid, *_class_args(rate)],
            ["tc", "filter", "add", "dev", "lo", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip",
             "src", f"{address}/32", "flowid", classid],
            ["tc", "filter", "add", "dev", "lo", "parent", "ffff:", "protocol", "ip", "prio", "1", "u32", "match",
             "ip", "dst", f"{address}/32", "action", "mirred", "egress", "redirect", "dev", ifb],
            ["tc", "class", "add", "dev", ifb, "parent", "1:", "classid", classid, *_class_args(rate)],
            ["tc", "filter", "add", "dev", ifb, "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match", "ip",
             "dst", f"{address}/32", "flowid", classid],
        ]
    return cmds


def removal_argv(ifb: str = IFB) -> list[list[str]]:
    """The commands that remove what ``shaping_argv`` installed (each may find nothing to remove)."""
    return [["tc", "qdisc", "del", "dev", "lo", "root"], ["tc", "qdisc", "del", "dev", "lo", "ingress"],
            ["ip", "link", "del", ifb]]


def _index(address: str) -> int:
    last = address.rsplit(".", 1)[-1]
    if not address.startswith(PREFIX) or not last.isdigit() or not 1 <= int(last) <= 254:
        raise LabError(f"{address}: not a lab node address ({PREFIX}N)")
    return int(last)


def foreign_qdisc() -> str | None:
    """A root or ingress qdisc on lo, or a device of our IFB name, already there (None if lo is clear)."""
    shown = run(["tc", "qdisc", "show", "dev", "lo"], check=False).stdout
    for line in shown.splitlines():
        if line.startswith("qdisc") and "noqueue" not in line and " parent " not in line:
            return f"lo already has `{line.strip()}`"
    if run(["ip", "link", "show", IFB], check=False).returncode == 0:
        return f"a network device {IFB} already exists"
    return None


def install(rates: Mapping[str, int]) -> None:
    """Replace whatever shaping is installed with ``rates`` (the caller owns lo's qdiscs: see lab.set_links)."""
    remove()
    try:
        for argv in shaping_argv(rates):
            run(argv)
    except LabError:
        remove()
        raise


def remove() -> None:
    """Remove lo's root and ingress qdiscs and the IFB device (each may already be gone)."""
    for argv in removal_argv():
        run(argv, check=False)

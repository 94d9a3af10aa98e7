"""The MTU of a host's NIC: the largest packet it sends and takes in one piece. Jumbo frames (9000) cut the
packets, interrupts and per-packet CPU of large transfers; a smaller MTU (a tunnel, a VPN, an overlay network's
1450) raises them. Set with ``ip link`` on the interface that holds the host's cluster address; "default" puts
back what the host had.
"""

from __future__ import annotations

import shlex

from ..knob import Argv, HostStep, Knob, KnobValue

MIN_MTU, MAX_MTU = 1280, 9000  # IPv6's least, and the jumbo frames NICs and switches commonly take


def parse_mtu(text: str) -> int | None:
    """'9000', '1400' -> bytes; 'default' (or 'unlimited', 'none') -> None: as the host has it."""
    t = str(text).strip().lower()
    if t in ("default", "unlimited", "none"):
        return None
    if not t.isdecimal() or not MIN_MTU <= int(t) <= MAX_MTU:
        raise ValueError(f"{text!r} is not an MTU (bytes, {MIN_MTU} to {MAX_MTU}, e.g. 1500 or 9000; or default)")
    return int(t)


def show_mtu(value: int | None) -> str:
    return "default" if value is None else str(value)


def _read(nic: str) -> str:
    # ip, not /sys/class/net: in a network namespace entered without its own /sys mount, sysfs shows the
    # machine's interfaces, while ip asks the namespace's kernel state
    return f"ip -o link show dev {shlex.quote(nic)} | sed -n 's/.* mtu \\([0-9]*\\) .*/\\1/p'"


def _apply(value: KnobValue, nic: str, files: str) -> list[Argv]:
    return [["ip", "link", "set", "dev", nic, "mtu", str(parse_mtu(str(value)))]]


def _restore(was: str, nic: str, files: str) -> list[Argv]:
    had = was.strip()
    if not had.isdecimal():
        raise ValueError(f"the MTU {nic} had could not be read ({had[:40]!r})")
    return [["ip", "link", "set", "dev", nic, "mtu", had]]


KNOB = Knob("mtu", "MTU of the node's NIC in bytes: 1400, 1500, 9000, or default (as it was).", parse_mtu, show_mtu,
            emulated=True, shares=False, baselines=("network",),
            step=HostStep(_read, _apply, _restore, reconnect=True))

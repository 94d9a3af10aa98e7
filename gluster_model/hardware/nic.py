"""A host's network interface: which one holds its cluster address, its speed and MTU (pure: script and parser).

``preflight`` reports it as a host fact; ``emulation`` shapes it.
"""

from __future__ import annotations

import shlex


def nic_script(address: str) -> str:
    """Shell text naming the interface that holds ``address`` (the host's cluster address), its speed and MTU."""
    a = shlex.quote(address)
    # The device holding the address (a host name is resolved first); `ip route get` of a host's own address
    # would name lo. MTU and index come from netlink, which sees the caller's network namespace; the speed
    # from sysfs only when sysfs shows that same device (a lab node's sysfs is the machine's).
    return (f"h={a}; " + "ip4=$(getent ahostsv4 \"$h\" | awk 'NR==1{print $1}'); t=${ip4:-$h}; "
            'dev=$(ip -o addr show to "$t" | awk \'NR==1{print $2}\'); '
            '[ -n "$dev" ] || dev=$(ip -o route get "$t" | sed -n \'s/.* dev \\([^ ]*\\).*/\\1/p\'); '
            'link=$(ip -o link show dev "$dev" 2>/dev/null); echo "dev=$dev"; '
            'echo "mtu=$(echo "$link" | sed -n \'s/.* mtu \\([0-9]*\\).*/\\1/p\')"; '
            'if [ "$(cat "/sys/class/net/$dev/ifindex" 2>/dev/null)" = "${link%%:*}" ]; then '
            'echo "speed=$(cat "/sys/class/net/$dev/speed" 2>/dev/null)"; fi')


def parse_nic(text: str) -> dict[str, object]:
    """{nic, nic_speed_mbps, nic_mtu} from the nic section; unknown values (lo, virtual NICs) become None."""
    kv = dict(ln.split("=", 1) for ln in text.splitlines() if "=" in ln)
    speed, mtu = kv.get("speed", "").strip(), kv.get("mtu", "").strip()
    # Virtual and loopback devices report no speed or -1.
    return {"nic": kv.get("dev", "").strip() or None,
            "nic_speed_mbps": int(speed) if speed.isdecimal() and int(speed) > 0 else None,
            "nic_mtu": int(mtu) if mtu.isdecimal() else None}


def show_nic(facts: dict[str, object]) -> str:
    """'eth0, 10 Gbit/s, MTU 1500' (the parts known) for the check table."""
    nic, speed, mtu = facts.get("nic"), facts.get("nic_speed_mbps"), facts.get("nic_mtu")
    parts = [str(nic or "unknown NIC")]
    if isinstance(speed, int):
        parts.append(f"{speed / 1000:g} Gbit/s" if speed >= 1000 else f"{speed} Mbit/s")
    if isinstance(mtu, int):
        parts.append(f"MTU {mtu}")
    return ", ".join(parts)

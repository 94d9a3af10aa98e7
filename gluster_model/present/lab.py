"""The ``lab`` commands' output: each node's daemons, peers and hardware."""

from __future__ import annotations

from typing import Any

from ..lab import LabState, NodeStatus, node_settings


def _up(ok: bool) -> str:
    return "[green]up[/green]" if ok else "[red]down[/red]"


def status_table(state: LabState, nodes: list[NodeStatus]) -> Any:
    from rich.table import Table

    table = Table(title=f"lab in {state.dir}")
    for col in ("node", "role", "glusterd", "sshd", "peers", "link", "bricks", "disk", "ram", "cpu", "latency"):
        table.add_column(col)
    for n in nodes:
        hw = node_settings(state, n.address)
        role = state.role(n.address)
        table.add_row(n.address, role, _up(n.glusterd), _up(n.sshd), f"{n.peers_connected}/{n.peers_total}",
                      hw["link"], hw["bricks"] if role != "client" else "-", hw["disk"], hw["ram"], hw["cpu"],
                      hw["latency"])
    return table


def node_lines(nodes: list[tuple[str, dict[str, str]]], columns: tuple[str, ...]) -> list[str]:
    """One line per node: its address and the settings of ``columns`` (the value alone when there is one)."""
    return [f"{address}  " + "  ".join(shown[c] if len(columns) == 1 else f"{c} {shown[c]}" for c in columns)
            for address, shown in nodes]

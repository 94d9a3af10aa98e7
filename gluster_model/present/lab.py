"""The ``lab`` commands' output: each node's daemons, peers and hardware."""

from __future__ import annotations

from typing import Any

from ..lab import LabState, NodeStatus, node_settings


def _up(ok: bool) -> str:
    return "[green]up[/green]" if ok else "[red]down[/red]"


def status_table(state: LabState, nodes: list[NodeStatus]) -> Any:
    from rich.table import Table

    table = Table(title=f"lab in {state.dir}")
    settings = [node_settings(state, n.address) for n in nodes]  # every hardware setting a node has, in order
    for col in ("node", "role", "glusterd", "sshd", "peers", *(settings[0] if settings else ())):
        table.add_column(col)
    for n, hw in zip(nodes, settings):
        role = state.role(n.address)
        table.add_row(n.address, role, _up(n.glusterd), _up(n.sshd), f"{n.peers_connected}/{n.peers_total}",
                      *("-" if k == "bricks" and role == "client" else v for k, v in hw.items()))
    return table


def node_lines(nodes: list[tuple[str, dict[str, str]]], columns: tuple[str, ...] | None = None) -> list[str]:
    """One line per node: its address and the settings of ``columns`` (every one it has when None; the value
    alone when there is one)."""
    lines = []
    for address, shown in nodes:
        cols = columns or tuple(shown)
        lines.append(f"{address}  " + "  ".join(shown[c] if len(cols) == 1 else f"{c} {shown[c]}" for c in cols))
    return lines

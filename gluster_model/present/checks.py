"""Whether hosts are ready: the preflight report (``check``) and SSH host keys (``trust``), as tables or JSON."""

from __future__ import annotations

from typing import Any

from ..preflight import TOOL_NAMES, Check, CheckResult, HostReport

# Table columns: (title, names of the checks shown in it).
_COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gluster", ("gluster", "glusterd")),
    ("tools", (*TOOL_NAMES, "fuse")),
    ("bricks", ("brick",)),
    ("cpu / ram", ("hardware",)),
    ("nic", ("nic",)),
    ("clock", ("clock",)),
)


def _pick(rep: HostReport, names: tuple[str, ...]) -> list[Check]:
    return [c for c in rep.checks if c.name in names or (names == ("brick",) and c.name.startswith("brick "))]


def _cell(rep: HostReport, title: str, names: tuple[str, ...]) -> str:
    checks = _pick(rep, names)
    if not checks:
        return "[dim]-[/dim]"
    bad = [c for c in checks if not c.ok]
    if bad:
        return "[red]" + "; ".join(f"{c.name}: {c.detail}" for c in bad) + "[/red]"
    if title == "tools":
        return "[green]" + " ".join(c.name for c in checks) + "[/green]"
    return "[green]" + "; ".join(c.detail for c in checks) + "[/green]"


def check_table(result: CheckResult) -> Any:
    """One row per host reached, then one line per failed check with its fix (a host that could not be reached
    is that one line only: a row of empty cells says nothing more); no table when no host was reached."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title="glmodel check")
    table.add_column("host", no_wrap=True)
    table.add_column("roles")
    for title, _ in _COLUMNS:
        table.add_column(title)
    table.add_column("verdict", no_wrap=True)
    reached = [rep for rep in result.reports if not any(c.name == "ssh" and not c.ok for c in rep.checks)]
    for rep in reached:
        cells = [_cell(rep, title, names) for title, names in _COLUMNS]
        verdict = "[bold green]ready[/bold green]" if rep.ok else "[bold red]NOT READY[/bold red]"
        table.add_row(rep.host.name, "+".join(sorted(rep.host.roles)), *cells, verdict)
    fixes = [Text.from_markup(f"[red]✗[/red] {r.host.name}: {c.name}: {c.detail}" + (f" — fix: {c.fix}" if c.fix else ""))
             for r in result.reports for c in r.failures()]
    # what each host holds itself to already: emulation keeps it as a ceiling (a line each, not a column)
    limits = [Text(f"{r.host.name}: {c.detail}") for r in result.reports for c in r.checks if c.name == "limits"]
    # hosts of one machine: the CPU score the models take is what each keeps under load (hardware/cpu_share.py)
    shared = [Text(f"{r.host.name}: {c.detail}") for r in result.reports for c in r.checks if c.name == "machine"]
    return Group(*([table] if reached else []), *limits, *shared, *fixes)


def trust_table(cluster: str, rows: list[tuple[str, str, str, str, str]]) -> Any:
    """One row per host: address, port, key type, fingerprint, status (known, new, changed, or the error)."""
    from rich.markup import escape
    from rich.table import Table

    colour = {"known": "green", "new": "yellow", "changed": "bold red"}
    table = Table(title=f"SSH host keys of {cluster}")
    for col in ("host", "port", "type", "fingerprint", "status"):
        table.add_column(col)
    for host, port, kind, fingerprint, status in rows:
        c = colour.get(status, "red")
        table.add_row(host, port, kind, fingerprint, f"[{c}]{escape(status)}[/{c}]")
    return table

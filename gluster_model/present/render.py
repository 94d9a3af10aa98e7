"""Rendering of library results for the terminal (rich) and as JSON. Presentation only."""

from __future__ import annotations

import json
from typing import Any

from typing import TYPE_CHECKING

from ..preflight import Check, CheckResult, HostReport

if TYPE_CHECKING:
    from ..bench.fio import BrickBaseline
    from ..bench.iperf import IperfMatrix

# Table columns: (title, names of the checks shown in it).
_COLUMNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("gluster", ("gluster", "glusterd")),
    ("tools", ("iozone", "iperf3", "fio", "fuse")),
    ("bricks", ("brick",)),
    ("cpu / ram", ("hardware",)),
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
    """One row per host, then one line per failed check with its fix."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(title="glmodel check")
    table.add_column("host", no_wrap=True)
    table.add_column("roles")
    for title, _ in _COLUMNS:
        table.add_column(title)
    table.add_column("verdict", no_wrap=True)
    for rep in result.reports:
        ssh_failed = [c for c in rep.checks if c.name == "ssh" and not c.ok]
        if ssh_failed:
            cells = [f"[red]ssh: {ssh_failed[0].detail}[/red]"] + [""] * (len(_COLUMNS) - 1)
        else:
            cells = [_cell(rep, title, names) for title, names in _COLUMNS]
        verdict = "[bold green]ready[/bold green]" if rep.ok else "[bold red]NOT READY[/bold red]"
        table.add_row(rep.host.name, "+".join(sorted(rep.host.roles)), *cells, verdict)
    fixes = [Text.from_markup(f"[red]✗[/red] {r.host.name}: {c.name}: {c.detail}" + (f" — fix: {c.fix}" if c.fix else ""))
             for r in result.reports for c in r.failures()]
    return Group(table, *fixes)


def check_json(result: CheckResult) -> str:
    out = {
        "ok": result.ok,
        "hosts": [
            {
                "host": r.host.address,
                "name": r.host.name,
                "roles": sorted(r.host.roles),
                "ok": r.ok,
                "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail, "fix": c.fix} for c in r.checks],
                "facts": r.facts,
            }
            for r in result.reports
        ],
    }
    return json.dumps(out, indent=2, default=str)


def iperf_table(matrix: IperfMatrix) -> Any:
    """One row per pair and direction (Gbit/s), then the aggregate of each direction."""
    from rich.table import Table

    table = Table(title=f"iperf3 matrix: {matrix.spec.seconds}s, {matrix.spec.streams} stream(s) per pair")
    for col in ("client", "server", "direction", "Gbit/s", "retransmits"):
        table.add_column(col, justify="right" if col in ("Gbit/s", "retransmits") else "left")
    for p in matrix.pairs:
        if p.error:
            table.add_row(p.client, p.server, p.direction, "[red]failed[/red]", f"[red]{p.error}[/red]")
        else:
            table.add_row(p.client, p.server, p.direction, f"{(p.received_bps or 0) / 1e9:.2f}", str(p.retransmits))
    for d in matrix.spec.directions:
        table.add_row("[bold]all[/bold]", "", d, f"[bold]{matrix.aggregate_bps(d) / 1e9:.2f}[/bold]", "")
    return table


def disk_table(bricks: list[BrickBaseline]) -> Any:
    """One row per brick: MB/s of each test (and IOPS of the random ones)."""
    from rich.table import Table

    tests = list(dict.fromkeys(t for b in bricks for t in b.jobs))
    table = Table(title="disk baseline (fio)")
    table.add_column("host")
    table.add_column("brick path")
    table.add_column("I/O")
    for t in tests:
        table.add_column(f"{t} MB/s" + (" (IOPS)" if t.startswith("rand") else ""), justify="right")
    for b in bricks:
        if b.error:
            table.add_row(b.host, b.path, "", f"[red]{b.error}[/red]")
            continue
        cells = []
        for t in tests:
            j = b.jobs.get(t)
            cells.append("-" if j is None else f"{j.bytes_per_s / 1e6:,.1f}" +
                         (f" ({j.iops:,.0f})" if t.startswith("rand") else ""))
        table.add_row(b.host, b.path, "O_DIRECT" if b.direct else "buffered+fsync", *cells)
    return table

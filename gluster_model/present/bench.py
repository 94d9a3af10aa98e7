"""The ``bench`` commands' output: iozone's metrics, the iperf3 matrix and the fio baselines, as tables or JSON."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..bench.fio import BrickBaseline
    from ..bench.iozone import IozoneRun
    from ..bench.iperf import IperfMatrix
    from ..bench.workload import Workload

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



def iozone_table(run: IozoneRun, volume: str, workload: Workload) -> Any:
    from rich.table import Table

    assert run.output is not None
    table = Table(title=f"iozone on {volume}: {workload.threads} threads, {workload.file_size} files, "
                        f"{workload.record_size} records")
    for col in ("test", "children kB/s", "MB/s", "min/thread", "max/thread"):
        table.add_column(col, justify="right" if col != "test" else "left")
    for name, m in run.output.metrics.items():
        table.add_row(name, f"{m.children_kbps:,.0f}", f"{m.children_kbps / 1024:,.1f}", f"{m.min_kbps:,.0f}",
                      f"{m.max_kbps:,.0f}")
    return table

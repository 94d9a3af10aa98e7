"""The terminal: a console sized for it, a spinner the engines update, and the campaign's progress bar and
lines (what ``campaign.progress``'s reporters are told, drawn with rich)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..campaign.progress import CampaignSummary
from ..plan.factors import RunSpec


def console() -> Any:
    """The terminal's width on a terminal (``COLUMNS`` where set); piped or redirected, ``COLUMNS`` where set,
    else a wide fixed one, so no table cell is folded (rich would otherwise assume 80 columns)."""
    import os
    import sys

    from rich.console import Console

    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdecimal() and int(columns) >= 40 else None
    return Console(width=width) if sys.stdout.isatty() or width else Console(width=240)


@contextmanager
def spinner(enabled: bool = True) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr whose text the engines update; silent when stderr is not a terminal."""
    from rich.console import Console

    err = Console(stderr=True)
    if not enabled or not err.is_terminal:
        yield lambda message: None
        return
    with err.status("starting") as status:
        yield lambda message: status.update(message)


class ProgressReporter:
    """Draws collect's progress: a bar with runs done/total, the current run and ETA; one line per finished run."""

    def __init__(self, out: Any, total: int, done: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = out
        self.progress = Progress(TextColumn("[bold]runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                 TextColumn("ETA {task.fields[eta]}"), TextColumn("{task.description}"),
                                 console=out, transient=True)
        self.task = self.progress.add_task("starting", total=total, completed=done, eta="?")

    def __enter__(self) -> ProgressReporter:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def status(self, message: str) -> None:
        self.progress.update(self.task, description=message)

    def note(self, message: str) -> None:
        self.console.print(message, highlight=False, markup=False)

    def run_started(self, position: int, total: int, run: RunSpec, eta_s: float | None) -> None:
        eta = "?" if eta_s is None else f"{int(eta_s // 60)}m{int(eta_s % 60):02d}s"
        self.progress.update(self.task, description=f"run {position}/{total}: {run.label}", eta=eta)

    def run_finished(self, position: int, total: int, run: RunSpec, line: str, ok: bool) -> None:
        from rich.markup import escape

        self.progress.update(self.task, advance=1)
        mark = "[green]✓[/green]" if ok else "[red]✗[/red]"
        self.console.print(f"{mark} {position}/{total} {escape(line)}", highlight=False)


class PlanConsole:
    """Renders run_plan's campaigns: a line per campaign, a progress bar per run."""

    def __init__(self, out: Any) -> None:
        self.console = out

    def campaign(self, name: str, total: int, done: int, where: str) -> ProgressReporter:
        self.console.print(f"campaign {name}: {total} run(s), {done} already done; store {where}", highlight=False)
        return ProgressReporter(self.console, total, done)

    def finished(self, summary: CampaignSummary) -> None:
        self.console.print(campaign_line(summary), highlight=False)

    def note(self, message: str) -> None:
        self.console.print(message, highlight=False)


def campaign_line(summary: CampaignSummary) -> str:
    name = summary.campaign
    if summary.already_done == summary.total:
        return f"campaign {name}: all {summary.total} run(s) already done; nothing to run"
    overhead = summary.wall_seconds / summary.engine_seconds if summary.engine_seconds else float("nan")
    return (f"campaign {name}: {summary.done} run(s) done now, {summary.already_done} before, "
            f"{summary.failed} failed; {summary.trials} trial(s); {summary.wall_seconds:.0f}s wall, "
            f"{summary.engine_seconds:.0f}s in the engines, {summary.baseline_seconds:.0f}s baselines"
            + "".join(f" ({kind} kept from {by})" for kind, by in sorted(summary.kept.items()))
            + (f", the first run at {summary.first_run_seconds:.0f}s" if summary.first_run_seconds is not None else "")
            + (f" (wall/engine {overhead:.2f})" if summary.engine_seconds else ""))

"""`glmodel verify` for people: predicted against measured per scenario, MAPE, coverage, the measured change
against the interval a measured change falls in, whether the ranking held; and what a dry run would build."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .predict import name_text, rich_table, num
from ..text import printable
from ..campaign.records import setting_campaign

if TYPE_CHECKING:
    from ..verify import Check, Verification, Work


def print_verification(console: Any, v: Verification) -> None:
    """Per metric: predicted (interval) vs measured per scenario, then MAPE, coverage and the ranking check."""
    from rich.table import Table

    for m in v.metrics:
        t = Table(title=f"{m.metric} (MB/s) — model {m.model}, {v.level:.0%} prediction interval, predicted at the "
                  "measured hardware", title_justify="left")
        gains = [c for c in m.checks if c.gain_measured is not None]
        cols = ["scenario", "predicted", "interval", "measured", "error", "inside", "basis"]
        cols += ["predicted change", "measured change", "in its interval"] if gains else []
        for col in cols:
            t.add_column(col, justify="left" if col in ("scenario", "basis") else "right", no_wrap=col != "scenario")
        for c in m.checks:
            row = [name_text(c.scenario), num(c.predicted), f"{num(c.low)}–{num(c.high)}", f"{num(c.measured)} "
                   f"(n={c.trials})", f"{num(c.error_pct, '+.1f')}%", "yes" if c.inside else "[red]no[/]", c.basis]
            if gains:
                row += _gain_cells(c)
            t.add_row(*row)
        console.print(t)
        line = (f"{m.metric}: MAPE {num(m.mape, '.1f')}% over {m.n} scenario(s); {num((m.coverage or 0) * 100, '.0f')}%"
                f" of the measurements inside the {v.level:.0%} intervals")
        judged = [c.gain_inside for c in gains if c.gain_inside is not None]
        if judged:
            line += (f"; measured change inside the interval of a measured change (the change's uncertainty and "
                     f"both runs' noise) in {sum(judged)} of {len(judged)}")
        if m.ranking_held is not None:
            tie = f", tied with {', '.join(printable(n) for n in m.tied_with)}" if m.tied_with else ""
            held = ("held" if m.ranking_held else
                    "a candidate it was tied with" if m.measured_best_was_tied else "did not hold")
            line += (f"; {'best gain per price' if m.by_price else 'fastest'}: predicted {m.best_predicted}{tie}, "
                     f"measured {m.best_measured} ({held})")
        console.print(line, highlight=False)
    for name, why in v.skipped.items():
        console.print(f"not measured: {name}: {why}", highlight=False)
    for note in v.notes:
        console.print(f"note: {note}", highlight=False)
    if v.campaigns:
        console.print(f"verification campaign(s): {', '.join(v.campaigns)}", highlight=False)


def _gain_cells(c: Check) -> list[str]:
    """Predicted change against the baseline with its interval, the measured change, and whether it fell inside."""
    if c.gain_measured is None:
        return ["baseline", "", ""]
    if c.gain_predicted is None:
        return ["-", num(c.gain_measured, "+.1f"), "-"]
    interval = (f" [{num(c.gain_low, '+.1f')}, {num(c.gain_high, '+.1f')}]"
                if c.gain_low is not None and c.gain_high is not None else "")
    inside = {True: "yes", False: "[red]no[/]", None: "-"}[c.gain_inside]
    return [f"{num(c.gain_predicted, '+.1f')}{interval}", num(c.gain_measured, "+.1f"), inside]


def verify_plan_lines(work: Work, model_file: str) -> list[str]:
    """``verify --dry-run``: each scenario's run and the campaign that would measure it, or why it cannot be."""
    out = [f"verify {', '.join(work.metrics)} of {model_file}: {len(work.expanded.runs)} run(s) in "
           f"{len(work.campaigns)} campaign(s)"]
    for t in work.targets:
        where = setting_campaign(work.base, t.run.lab) if t.run else f"not measured: {t.why}"
        out.append(f"  {printable(t.scenario.name)}: {t.run.label + ' -> ' if t.run else ''}{where}")
    return out

"""`glmodel compare` drawn: a terminal table with the slower rows first, a Markdown table fit for a pull-request
comment, and a figure of the ratios with their intervals and the margin shaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..compare import Comparison, Row
from ..text import printable

_COLOUR = {"slower": "bold red", "faster": "green", "same": "cyan", "undecided": "yellow"}


def _pct(x: float) -> str:
    return f"{(x - 1) * 100:+.1f}%"


def _mean(v: float, unit: str) -> str:
    return f"{v:,.0f}" if unit == "files/s" or v >= 1000 else f"{v:,.1f}"


def _change(r: Row) -> str:
    return f"{_pct(r.ratio.ratio)} [{_pct(r.ratio.low)}, {_pct(r.ratio.high)}]"


def headline(c: Comparison) -> str:
    """One sentence: what was compared and the verdict."""
    n = c.counts()
    where = f" (stores {c.b.store} and {c.a.store})" if c.a.store != c.b.store else ""
    verdict = (f"{n['slower']} slower beyond ±{c.margin * 100:g}%" if n["slower"] else
               f"no row slower beyond ±{c.margin * 100:g}%")
    return (f"{c.b.label} against {c.a.label}{where}: {verdict} ({n['faster']} faster, {n['same']} the same within "
            f"±{c.margin * 100:g}%, {n['undecided']} undecided; {len(c.rows)} row(s), verdicts Holm-adjusted at "
            f"{c.level:.0%})")


def table(c: Comparison) -> Any:
    """The rows as a rich table (every number whole at 80 columns: long configurations wrap)."""
    from rich.table import Table

    t = Table(title=printable(headline(c)), title_justify="left", show_lines=False)
    t.add_column("verdict", no_wrap=True)
    t.add_column("metric", no_wrap=True)
    t.add_column("configuration", overflow="fold")
    t.add_column("A", justify="right", no_wrap=True)
    t.add_column("B", justify="right", no_wrap=True)
    t.add_column(f"change [{c.level:.0%}]", justify="right", no_wrap=True)
    for r in c.rows:
        colour = _COLOUR[r.verdict]
        t.add_row(f"[{colour}]{r.verdict}[/{colour}]", r.metric, printable(r.config), _mean(r.mean_a, r.unit),
                  _mean(r.mean_b, r.unit), _change(r))
    return t


def lines(c: Comparison) -> list[str]:
    """What goes below the table: the rows without a partner, hardware that differs, notes."""
    out: list[str] = []
    units: dict[str, list[str]] = {}
    for r in c.rows:
        units.setdefault(r.unit, []).append(r.metric)
    if set(units) - {"MB/s"}:  # the table's A and B carry no unit: say which rows are not MB/s
        out.append("A and B are means in " + "; ".join(
            f"{u} ({', '.join(dict.fromkeys(m))})" for u, m in units.items()))
    if c.only_a or c.only_b:
        out.append(f"not compared: {len(c.only_a)} configuration(s) only in A, {len(c.only_b)} only in B"
                   + (f" (e.g. {printable(c.only_a[0] if c.only_a else c.only_b[0])})" if c.only_a or c.only_b else ""))
    for name, a, b in c.hardware:
        out.append(f"measured hardware differs: {name} {a:.3g} (A) vs {b:.3g} (B), {_pct(b / a)}: the difference may "
                   "come from the hardware, not from the change")
    out += c.notes
    return out


def markdown(c: Comparison) -> str:
    """A Markdown table fit for a pull-request comment."""
    head = [f"| verdict | metric | configuration | A | B | change [{c.level:.0%}] |", "|---|---|---|---:|---:|---|"]
    body = [f"| **{r.verdict}** | {r.metric} | {r.config} | {_mean(r.mean_a, r.unit)} {r.unit} | "
            f"{_mean(r.mean_b, r.unit)} {r.unit} | {_change(r)} |" for r in c.rows]
    below = [f"- {ln}" for ln in lines(c)]
    return "\n".join([f"**{headline(c)}**", "", *head, *body, *([""] + below if below else [])]) + "\n"


def figure(c: Comparison, path: Path) -> None:
    """The ratios with their intervals, one row each, the margin shaded around 1."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = c.rows
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.5))
    ax.axvspan(1 - c.margin, 1 + c.margin, color="0.9", label=f"±{c.margin * 100:g}% margin")
    ax.axvline(1.0, color="0.5", lw=0.8)
    colours = {"slower": "tab:red", "faster": "tab:green", "same": "tab:blue", "undecided": "tab:orange"}
    for i, r in enumerate(rows):
        ax.plot([r.ratio.low, r.ratio.high], [i, i], color=colours[r.verdict], lw=2)
        ax.plot([r.ratio.ratio], [i], "o", color=colours[r.verdict])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r.metric}: {r.config}"[:60] for r in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel(f"B / A (interval {c.level:.0%})")
    ax.legend(loc="lower right", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def render(console: Any, c: Comparison) -> None:
    """The table, then the lines below it, on the terminal."""
    console.print(table(c))
    for line in lines(c):
        console.print(line, highlight=False, markup=False)


def write(c: Comparison, md_out: Path | None, figure_out: Path | None) -> None:
    """The Markdown table and the figure, where asked (paths checked before the comparison)."""
    if md_out is not None:
        md_out.write_text(markdown(c))
    if figure_out is not None:
        figure(c, figure_out)

"""An answer for people: the decision in words first, one compact table per metric, everything else with
``details``; CSV rows and a bar chart with intervals for files. Renders only: every number comes from the answer.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..model.features import label
from ..predict.whatif import Answer, MetricAnswer, Prediction, parts_of, show_value
from ..text import printable
from ..predict.whatif import HEADROOM_DROP


_BASIS_STYLE = {"measured": "green", "interpolated": "", "bounded": "cyan", "extrapolated": "yellow"}


def num(v: float | None, fmt: str = "") -> str:
    """MB/s as people read them: one decimal below 100, whole numbers with thousands separators above."""
    if v is None or not math.isfinite(v):
        return "-"
    return format(v, fmt or (",.0f" if abs(v) >= 100 else ".1f"))


def money(v: float | None, currency: str = "") -> str:
    if v is None or not math.isfinite(v):
        return "-"
    # cents only where a small amount has them: a price of 50 reads "50", as 100 reads "100"
    return f"{v:,.2f} {currency}".strip() if v < 100 and v != round(v) else f"{v:,.0f} {currency}".strip()


def change(p: Prediction) -> str:
    """The change against the baseline with its own interval, e.g. ``+14.8 ± 5.1`` (or ``baseline``); for a guess
    ``unknown``: a number outside the data, with an interval that only says how the model extrapolates, would
    read as confident."""
    if p.delta is None:
        return "baseline"
    if p.basis == "extrapolated":
        return "unknown"
    sign = num(p.delta, "+,.0f" if abs(p.delta) >= 100 else "+.1f")
    if p.delta_low is None or p.delta_high is None:
        return sign
    half = (p.delta_high - p.delta_low) / 2
    return f"{sign} ± {num(half)}"


def change_words(p: Prediction) -> str:
    """``+53.5 MB/s (+44.9 to +62.1, +136%)``: the change, its interval, and the change in percent."""
    inner = f"{num(p.delta_pct, '+.0f')}%"
    if p.delta_low is not None and p.delta_high is not None:
        inner = f"{num(p.delta_low, '+.1f')} to {num(p.delta_high, '+.1f')}, {inner}"
    return f"{num(p.delta, '+.1f')} {p.unit} ({inner})"


def basis_words(p: Prediction) -> str:
    """The basis, and for a bounded upgrade what bounds it and what binds after it."""
    if p.basis != "bounded" or p.bound is None:
        return p.basis
    after = (f"after it the {p.binds_after} limit at ~{num(p.value)} {p.unit}" if p.binds_after == p.bound_stage
             else f"after it the {p.binds_after} still limit; the {p.bound_stage} would at ~{num(p.bound)} {p.unit}")
    if p.delta is not None and p.delta_low is not None and p.delta_high is not None and p.delta_low <= 0 <= p.delta_high:
        after = f"no gain: {after}"
    cautions = "".join(f"; {f}" for f in p.flags)  # what the answer rests on that nothing measured
    return f"bounded upgrade ({after}; its figures: {p.capacity_from or 'spec values'}{cautions})"


def rank_cell(p: Prediction) -> str:
    if p.rank:
        return str(p.rank)
    return p.reason


def rich_table(title: str, columns: list[tuple[str, str]]) -> Any:
    from rich import box
    from rich.table import Table

    t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False,
              collapse_padding=True)
    for col, just in columns:
        # the names wrap where the terminal is narrow; numbers and short words never do (``whole_numbers``)
        t.add_column(col, justify=just, no_wrap=just == "right", overflow="fold")  # type: ignore[arg-type]
    return t


def whole_numbers(t: Any) -> Any:
    """The table with every column but the first at least as wide as its widest cell, so a narrow terminal wraps
    the names (and a header that does not fit) and never cuts a figure to "…"."""
    from rich.text import Text

    for col in t.columns[1:]:  # the first column (names) wraps at spaces; every other cell stays whole
        cells = [c if isinstance(c, Text) else Text.from_markup(str(c)) for c in col._cells]
        col.min_width = max([c.cell_len for c in cells], default=0)
        col.no_wrap = True
    return t


NAME_WIDTH = 12  # the names' column keeps at least this much of a narrow terminal (they wrap at spaces)


def print_fitted(console: Any, t: Any) -> None:
    """Print a table from ``rich_table``/``whole_numbers`` whole at the console's width: where its columns do not
    fit beside the names, it is printed in parts, each with the names again ("continued"), never cropped."""
    from rich import box
    from rich.table import Table

    gap = 2  # collapsed padding: one space each side of a column, shared
    widths = [c.min_width or 0 for c in t.columns[1:]]
    if NAME_WIDTH + sum(w + gap for w in widths) <= console.width:
        console.print(t)
        return
    parts: list[list[int]] = [[]]
    used = NAME_WIDTH
    for i, w in enumerate(widths, start=1):
        if parts[-1] and used + w + gap > console.width:
            parts.append([])
            used = NAME_WIDTH
        parts[-1].append(i)
        used += w + gap
    for n, part in enumerate(parts):
        title = t.title if n == 0 else f"{t.title} (continued)"
        sub = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        for i in [0, *part]:
            c = t.columns[i]
            sub.add_column(c.header, justify=c.justify, no_wrap=c.no_wrap, overflow=c.overflow, min_width=c.min_width)
        for r in range(t.row_count):
            sub.add_row(*[t.columns[i]._cells[r] for i in [0, *part]])
        console.print(sub)


def name_text(text: str) -> Any:
    from rich.text import Text

    return Text(printable(text))  # a Text is never read as markup


def compact_table(m: MetricAnswer, a: Answer) -> Any:
    """One row per scenario: MB/s, interval, change ± its interval, basis, price, gain per 1,000, rank."""
    priced = any(p.price for p in m.predictions)
    # only ranked candidates carry a gain per price: with none ranked the column would be dashes only
    gains = priced and any(p.gain_per_cost is not None for p in m.predictions)
    cur = printable(a.currency) or "of price"
    cols = [("scenario", "left"), (m.unit, "right"), ("interval", "right"), ("change", "right"), ("basis", "left")]
    if priced:
        cols += [("price", "right")] + ([("gain/1k", "right")] if gains else [])
    cols += [("rank", "left")]
    title = f"{m.metric} ({m.unit}), model {m.model}, {a.level:.0%} intervals"
    if gains:
        title += f"; gain/1k: {m.unit} gained per 1,000 {cur}"
    t = rich_table(title, cols)
    trades = a.trade_offs()
    for p in m.predictions:
        style = _BASIS_STYLE[p.basis]
        row = [name_text(p.scenario), num(p.value), f"{num(p.low)}–{num(p.high)}", change(p),
               f"[{style}]{p.basis}[/]" if style else p.basis]
        if priced:
            row += [money(p.price)] + ([num(p.gain_per_cost * 1000, "+.1f") if p.gain_per_cost is not None else "-"]
                                       if gains else [])
        row.append(rank_cell(p) + (" trade-off" if p.scenario in trades else ""))
        t.add_row(*row)
    return whole_numbers(t)


def summary_lines(a: Answer) -> list[str]:
    """The answer in words (rich markup; user text escaped): per metric the best buy with its gain, interval and
    basis, or why there is none; what limits the baseline; which scenarios are guesses."""
    from rich.markup import escape

    def nm(text: str) -> str:
        return escape(printable(text))

    models = sorted({m.model for m in a.metrics})
    lines = [f"{nm(a.source or 'Question')}: {len(a.scenarios) - 1} candidate(s) against [bold]{nm(a.baseline)}"
             f"[/]; model {', '.join(models)}, {a.level:.0%} intervals."]
    priced = any(p.price for m in a.metrics for p in m.predictions[1:])
    if not priced and not all(m.all_guesses for m in a.metrics):
        lines.append("No candidate has a price, so none is ranked by gain per price: each change and its "
                     "interval are in the tables.")
    for m in a.metrics:
        best = m.best
        if not priced and best is None:
            continue
        if best is not None:
            cost = (f" for {money(best.price, nm(a.currency))}, {num((best.gain_per_cost or 0) * 1000, '.1f')} {m.unit} "
                    f"per 1,000 {nm(a.currency) or 'of price'}" if best.price else "")
            lines.append(f"Best buy for {m.metric}: [bold]{nm(best.scenario)}[/]: "
                         f"{change_words(best)}{cost}; {basis_words(best)}." + tie_words(m, nm(a.currency)))
        else:
            lines.append(f"No candidate to recommend for {m.metric}: {nm(m.no_best)}.")
    lines += _bottleneck_lines(a)
    gives_up = a.gives_up()
    for name, what in gives_up.items():
        moves = [f"{num(p.delta, '+.1f')} {m.unit} {m.metric}" for m in a.metrics for p in m.predictions[1:]
                 if p.scenario == name and p.delta is not None and p.effect != "no measurable effect"]
        lines.append(f"Not a purchase: {nm(name)}" + (f" ({', '.join(moves)})" if moves else "") +
                     f" gives up {nm(what.split(', so')[0])}.")
    # a trade-off (a gain on one metric, a loss on another) is marked in the tables' rank column
    free = [(m.metric, p) for m in a.metrics for p in m.predictions
            if p.reason in ("free", "no price") and p.scenario not in gives_up and p.effect == "gain"]
    if free:
        lines.append("Gains without a price: " + "; ".join(f"{nm(p.scenario)} {num(p.delta, '+.1f')} {p.unit} {metric}"
                                                         for metric, p in free) + ".")
    guesses = a.extrapolated
    if guesses:
        why = sorted({f for m in a.metrics for p in m.predictions if p.basis == "extrapolated" for f in p.flags[:1]})
        lines.append(f"[yellow]Extrapolated (guesses, never ranked): {', '.join(nm(g) for g in guesses)}[/]; "
                     f"{nm(why[0])}" + (f" (and {len(why) - 1} more reason(s))" if len(why) > 1 else "") + ".")
    return lines


def tie_words(m: MetricAnswer, currency: str) -> str:
    """" Tied within the error with ...": the candidates the best buy cannot be told from by gain per price."""
    from rich.markup import escape

    others = [p for p in m.predictions if p.scenario in (m.best.tied_with if m.best else [])]
    if not others:
        return ""
    per = f"per 1,000 {currency or 'of price'}"
    named = ", ".join(f"{escape(printable(p.scenario))} ({num(p.delta, '+.1f')} {p.unit}, "
                      f"{num((p.gain_per_cost or 0) * 1000, '.1f')} {per})" for p in others)
    return f" Tied within the error with {named}: either by gain per price; choose by the gain you need."


def _bottleneck_lines(a: Answer) -> list[str]:
    """What limits the baseline, from the same contrasts the tables show: per metric the candidate that gains
    most inside the data, or that nothing in the file moves it; a guess where the baseline is extrapolated.
    Headroom (how far each resource can fall) where no candidate is priced, as in the bottleneck question."""
    from rich.markup import escape

    base = escape(printable(a.baseline))
    room = [] if any(m.best is not None for m in a.metrics) else headroom_lines(a)
    if not a.metrics:
        return []
    guess = any(m.predictions[0].basis == "extrapolated" for m in a.metrics)
    tail = " A guess: the baseline itself lies outside the data." if guess else ""
    tops: dict[str, list[str]] = {}  # the candidate that gains most -> "write +53.5"
    still = [m.metric for m in a.metrics if m.top_gain is None]
    for m in a.metrics:
        if m.top_gain is not None:
            tops.setdefault(m.top_gain.scenario, []).append(f"{m.metric} {num(m.top_gain.delta, '+.1f')} {m.unit}")
    # "write +53.5, read +121.3 MB/s": one unit said once, several each after its figure
    parts = [f"{escape(printable(n))} ({', '.join(x.rsplit(' ', 1)[0] for x in v)} MB/s)"
             if all(x.endswith(" MB/s") for x in v) else f"{escape(printable(n))} ({', '.join(v)})"
             for n, v in tops.items()]
    if still:
        parts.append(f"nothing in this file moves {' or '.join(still)}")
    limits = "; ".join(f"{m.metric}: the {escape(m.limit_text)}" for m in a.metrics if m.limit)
    lines = [f"What limits {base}: {limits or 'nothing the model has raises it here'}; the file's largest gain: "
             + "; ".join(parts) + "." + tail]
    for name in tops:  # a combined upgrade, part by part: what each gives alone, and together
        alone = parts_of(a, name)
        each, more = [], False
        for m in a.metrics:
            got = {p.scenario: p for p in m.predictions}
            if alone and m.top_gain is not None and m.top_gain.scenario == name and all(n in got for n in alone):
                each.append(f"{m.metric} " + " and ".join(num(got[n].delta, '+.1f') for n in alone)
                            + f" alone, {num(m.top_gain.delta, '+.1f')} together")
                more |= (m.top_gain.delta or 0) > 1.05 * sum(got[n].delta or 0 for n in alone)
        if each:
            lines.append(f"{escape(printable(name))} = {' + '.join(escape(printable(n)) for n in alone)}: "
                         + "; ".join(each) + (" (more than the sum: each lifts the stage that binds the other)."
                                             if more else "."))
    return lines + room


def headroom_lines(a: Answer) -> list[str]:
    return [line for m in a.metrics if (line := headroom_line(m))]


def headroom_line(m: MetricAnswer) -> str:
    """How far each hardware input can fall before the metric drops: 'none' for what limits it."""
    if not m.headroom:
        return ""
    parts = []
    for h in m.headroom:
        if h.ends == "drop":
            parts.append(f"{h.resource}: none" if h.share >= 0.999 else f"{h.resource} to {h.share:.0%} of today")
        elif h.ends == "least":
            parts.append(f"{h.resource} to {h.share:.0%} or less (no drop down to the least measured)")
        else:
            parts.append(f"{h.resource} to {h.share:.0%} at least (lower alone, it leaves the measured settings)")
    return f"Headroom for {m.metric} (a fall of under {HEADROOM_DROP:.0%}): " + "; ".join(parts) + "."


def print_answer(console: Any, a: Answer, details: bool = False) -> None:
    """The decision first; then one compact table per metric that has an answer inside the data."""
    if details:
        print_details(console, a)
        return
    for line in summary_lines(a):
        console.print(line, highlight=False)
    inside = [m for m in a.metrics if not m.all_guesses]
    for m in inside:
        print_fitted(console, compact_table(m, a))
    hidden = "" if inside else "the guesses, "
    console.print(f"[dim]--details: {hidden}every flag, measured means, capacity and levers[/]", highlight=False)


# -- details (every table) --------------------------------------------------------------------------------------

def metric_table(m: MetricAnswer, a: Answer) -> Any:
    priced = any(p.price for p in m.predictions)
    measured = any(p.measured_mean is not None for p in m.predictions)
    cols = [("scenario", "left"), (m.unit, "right"), ("interval", "right"), ("change", "right"),
            ("change %", "right"), ("basis", "left"), ("ceiling", "right")]
    cols += [("measured", "right")] if measured else []
    cols += [("price", "right"), ("gain/1k", "right"), ("rank", "left")] if priced else []
    t = rich_table(f"{m.metric} ({m.unit}), model {m.model}, {a.level:.0%} prediction interval", cols)
    for p in m.predictions:
        style = _BASIS_STYLE[p.basis]
        row = [name_text(p.scenario), num(p.value), f"{num(p.low)}–{num(p.high)}", change(p),
               num(p.delta_pct, "+.0f"), f"[{style}]{p.basis}[/]" if style else p.basis,
               f"{num(p.ceiling)} ({p.ceiling_stage})" if p.ceiling is not None else "-"]
        if measured:
            row.append(f"{num(p.measured_mean)} (n={p.measured_trials})" if p.measured_mean is not None else "")
        if priced:
            # the same figure as the compact table's: MB/s (or files/s) gained per 1,000 of the currency
            row += [money(p.price, printable(a.currency)),
                    num(p.gain_per_cost * 1000, "+.1f") if p.gain_per_cost is not None else "-",
                    rank_cell(p)]
        t.add_row(*row)
    return whole_numbers(t)


def capacity_table(a: Answer) -> Any | None:
    if all(c.raw_tb is None for c in a.capacity):
        return None
    priced = any(v is not None for v in a.prices.values())
    cols = [("scenario", "left"), ("layout", "left"), ("raw TB", "right"), ("usable TB", "right")]
    cols += [("price", "right"), ("price/usable TB", "right")] if priced else []
    t = rich_table("capacity", cols)
    for c in a.capacity:
        row = [name_text(c.scenario), c.layout, num(c.raw_tb), num(c.usable_tb)]
        if priced:
            price = a.prices.get(c.scenario)
            per_tb = price / c.usable_tb if price is not None and c.usable_tb else None
            row += [money(price, printable(a.currency)), money(per_tb, printable(a.currency))]
        t.add_row(*row)
    return t


def levers_table(a: Answer) -> Any:
    t = rich_table(f"at the baseline ({printable(a.baseline)}): what limits each metric",
               [("metric", "left"), ("bottleneck", "left"), ("+10% of it gives", "right"),
                ("other levers (effect on the metric)", "left")])
    for m in a.metrics:
        b = m.bottleneck
        others = [lv for lv in m.levers if lv is not b][:3]
        t.add_row(m.metric, (f"{m.limit_text}" + (f" (elasticity of {label(b.feature)} {b.elasticity:.2f})"
                                             if b and b.elasticity is not None else "")) if m.limit
                  else "none raises it here", f"{b.effect_pct:+.1f}%" if b else "-",
                  "; ".join(_lever(lv) for lv in others) or "-")
    return t


def _lever(lv: Any) -> str:
    off = " (off the data)" if lv.off_data else ""
    if lv.kind == "switch":
        return f"{label(lv.feature)} → {lv.to}: {num(lv.effect_pct, '+.1f')}%{off}"
    return f"{label(lv.feature)} +10%: {num(lv.effect_pct, '+.1f')}%{off}"


def print_details(console: Any, a: Answer) -> None:
    """Every table: predictions with ceilings and measured means, flags, reasons not ranked, capacity, levers."""
    from rich.markup import escape

    for line in summary_lines(a):
        console.print(line, highlight=False)
    for m in a.metrics:
        print_fitted(console, metric_table(m, a))
        common = [f for f in m.predictions[0].flags if all(f in p.flags for p in m.predictions)]
        for flag in common:
            console.print(f"  [yellow]every scenario[/]: {escape(printable(flag))}", highlight=False)
        for p in m.predictions:
            for flag in p.flags:
                if flag not in common:
                    console.print(f"  [yellow]{escape(printable(p.scenario))}[/]: {escape(printable(flag))}",
                                  highlight=False)
        for p in m.predictions[1:]:
            if p.not_ranked:
                console.print(f"  not ranked: {escape(printable(p.scenario))}: {p.not_ranked}", highlight=False)
    cap = capacity_table(a)
    if cap is not None:
        console.print(cap)
    console.print(levers_table(a))
    if any(m.best is not None for m in a.metrics):  # the summary left it out
        for line in headroom_lines(a):
            console.print(line, highlight=False)
    if a.filled:
        ref = a.scenarios[a.baseline]
        varied = [k for k in a.filled if k in a.varied]
        fixed = len(a.filled) - len(varied)
        parts = [", ".join(f"{label(k)} {show_value(k, ref[k])}" for k in varied)] if varied else []
        parts += [f"{fixed} input(s) the data never varied, at their measured values"] if fixed else []
        console.print("  not set by any scenario, so taken from the model's reference configuration (a measured one): "
                      + "; ".join(parts), highlight=False)
    for note in a.notes:
        console.print(f"  note: {escape(printable(note))}", highlight=False)


def to_csv(a: Answer) -> str:
    """One row per scenario and metric."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["metric", "model", "scenario", "predicted_mbps", "low", "high", "level", "delta_mbps", "delta_pct",
                "delta_low", "delta_high", "effect", "basis", "distance", "ceiling_mbps", "ceiling_stage",
                "measured_mbps", "measured_trials", "price", "price_per_gained_mbps", "gain_per_cost", "rank",
                "not_ranked", "raw_tb", "usable_tb", "flags"])
    cap = {c.scenario: c for c in a.capacity}
    for m in a.metrics:
        for p in m.predictions:
            c = cap[p.scenario]
            w.writerow([m.metric, m.model, p.scenario, _g(p.value), _g(p.low), _g(p.high), a.level, _g(p.delta),
                        _g(p.delta_pct), _g(p.delta_low), _g(p.delta_high), p.effect, p.basis, _g(p.distance),
                        _g(p.ceiling), p.ceiling_stage, _g(p.measured_mean), p.measured_trials or "",
                        _g(p.price), _g(p.price_per_gain), _g(p.gain_per_cost), p.rank or "", p.not_ranked,
                        _g(c.raw_tb), _g(c.usable_tb), " | ".join(p.flags)])
    return buf.getvalue()


def _g(v: float | None) -> str:
    return "" if v is None or not math.isfinite(v) else f"{v:.6g}"


def figure(a: Answer, path: str | Path) -> None:
    """Bars per scenario for each metric with the prediction interval; extrapolated bars hatched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = [p.scenario for p in a.metrics[0].predictions]
    fig, axes = plt.subplots(1, len(a.metrics), figsize=(max(4.0, 1.0 + 0.7 * len(names)) * len(a.metrics), 4.2),
                             squeeze=False)
    for ax, m in zip(axes[0], a.metrics):
        x = np.arange(len(m.predictions))
        vals = np.array([p.value for p in m.predictions])
        err = np.array([[p.value - p.low for p in m.predictions], [p.high - p.value for p in m.predictions]])
        bars = ax.bar(x, vals, yerr=np.clip(err, 0, None), capsize=4, color="#4c78a8", edgecolor="black")
        for bar, p in zip(bars, m.predictions):
            if p.basis == "extrapolated":
                bar.set_hatch("//")
                bar.set_facecolor("#f2cf5b")
        ax.set_xticks(x, [printable(n) for n in names], rotation=30, ha="right")
        ax.set_title(f"{m.metric} ({m.model} model)")
        ax.set_ylabel(f"predicted {m.metric} throughput (MB/s)")
        ax.set_xlabel("scenario")
    fig.suptitle(f"predicted throughput with {a.level:.0%} prediction intervals (hatched: extrapolated)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def gain_figure(a: Answer, path: str | Path) -> None:
    """Per metric, what each priced candidate buys: MB/s gained per 1,000 of the currency, with the interval of
    the change scaled the same way; the best buy marked, guesses hatched, candidates without a price left out
    (said in the title). Without any priced candidate, the throughput bars of ``figure``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    priced = [p.scenario for p in a.metrics[0].predictions[1:] if p.price]
    if not priced:
        figure(a, path)
        return
    cur = printable(a.currency) or "of price"
    fig, axes = plt.subplots(1, len(a.metrics), figsize=(6.0 * len(a.metrics), 0.8 + 0.45 * len(priced)),
                             squeeze=False)
    for ax, m in zip(axes[0], a.metrics):
        rows = [p for p in m.predictions[1:] if p.price]
        y = list(range(len(rows)))[::-1]
        per = [(p.delta or 0.0) / float(p.price or 1) * 1000 for p in rows]
        low = [max(v - (p.delta_low or p.delta or 0.0) / float(p.price or 1) * 1000, 0.0) if p.delta_low is not None
               else 0.0 for p, v in zip(rows, per)]
        high = [max((p.delta_high or p.delta or 0.0) / float(p.price or 1) * 1000 - v, 0.0)
                if p.delta_high is not None else 0.0 for p, v in zip(rows, per)]
        colours = ["#e45756" if p.rank == 1 else "#f2cf5b" if p.basis == "extrapolated" else "#4c78a8" for p in rows]
        bars = ax.barh(y, per, xerr=[low, high], color=colours, edgecolor="black", capsize=3)
        for bar, p, up in zip(bars, rows, high):
            if p.basis == "extrapolated":
                bar.set_hatch("//")
            if p.rank == 1:  # beyond the interval's end, so the label never hides it
                ax.annotate("best buy", (bar.get_width() + up, bar.get_y() + bar.get_height() / 2), xytext=(8, 0),
                            textcoords="offset points", va="center", fontweight="bold", color="#b22222")
        ax.margins(x=0.22)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(y, [printable(p.scenario) for p in rows])
        ax.set_xlabel(f"{m.metric}: MB/s gained per 1,000 {cur}")
        ax.set_title(f"{m.metric} ({m.model} model)")
    unpriced = len(a.metrics[0].predictions) - 1 - len(priced)
    fig.suptitle(f"what each candidate buys, with the {a.level:.0%} interval of its change (hatched: extrapolated)"
                 + (f"; {unpriced} without a price left out" if unpriced else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@dataclass(frozen=True)
class Files:
    """Where predict's answer is also written: CSV rows and a bar chart. The paths are checked when this is made,
    before the answer is computed, so a path that cannot be written loses no work."""

    csv: Path | None = None
    figure: Path | None = None

    def __post_init__(self) -> None:
        from .cli_kit import checked_outputs

        checked_outputs((self.csv, "--csv", ()), (self.figure, "--figure", (".png", ".svg", ".pdf")))

    def write(self, answer: Answer) -> None:
        if self.csv is not None:
            self.csv.write_text(to_csv(answer))
        if self.figure is not None:
            figure(answer, self.figure)

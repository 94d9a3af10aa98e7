"""An answer as rich tables, CSV rows, or a bar chart with intervals."""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .whatif import Answer, MetricAnswer, Prediction, show_value

if TYPE_CHECKING:
    from ..verify import Verification

_BASIS_STYLE = {"measured": "green", "interpolated": "", "extrapolated": "yellow"}


def _num(v: float | None, fmt: str = "") -> str:
    if v is None or not math.isfinite(v):
        return "-"
    return format(v, fmt or (".0f" if abs(v) >= 100 else ".1f"))


def _money(v: float | None, currency: str) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    return f"{v:,.2f} {currency}".strip() if v < 100 else f"{v:,.0f} {currency}".strip()


def _vs(p: Prediction) -> str:
    if p.delta is None:
        return "baseline"
    return f"{_num(p.delta, '+.0f' if abs(p.delta) >= 100 else '+.1f')} ({_num(p.delta_pct, '+.0f')}%)"


def metric_table(m: MetricAnswer, a: Answer) -> Any:
    from rich.table import Table

    t = Table(title=f"{m.metric} (MB/s) — model {m.model}, {a.level:.0%} prediction interval", title_justify="left")
    priced = any(p.cost_per_mbps is not None for p in m.predictions)
    measured = any(p.measured_mean is not None for p in m.predictions)
    cols = [("scenario", "left"), ("MB/s", "right"), ("interval", "right"), ("vs baseline", "right"),
            ("basis", "left")]
    cols += [("measured", "right")] if measured else []
    cols += [("price/MB/s", "right"), ("rank", "right")] if priced else []
    for col, just in cols:
        t.add_column(col, justify=just, no_wrap=col != "scenario")  # type: ignore[arg-type]
    for p in m.predictions:
        style = _BASIS_STYLE[p.basis]
        row = [p.scenario, _num(p.value), f"{_num(p.low)}–{_num(p.high)}", _vs(p),
               f"[{style}]{p.basis}[/]" if style else p.basis]
        if measured:
            row.append(f"{_num(p.measured_mean)} (n={p.measured_trials})" if p.measured_mean is not None else "")
        if priced:
            row += [_money(p.cost_per_mbps, a.currency), str(p.rank) if p.rank else ""]
        t.add_row(*row)
    return t


def capacity_table(a: Answer) -> Any | None:
    if all(c.raw_tb is None for c in a.capacity):
        return None
    from rich.table import Table

    priced = any(v is not None for v in a.prices.values())
    t = Table(title="capacity", title_justify="left")
    for col in ("scenario", "layout", "raw TB", "usable TB", *(("price", "price/usable TB") if priced else ())):
        t.add_column(col, justify="left" if col in ("scenario", "layout") else "right")
    for c in a.capacity:
        row = [c.scenario, c.layout, _num(c.raw_tb), _num(c.usable_tb)]
        if priced:
            price = a.prices.get(c.scenario)
            per_tb = price / c.usable_tb if price is not None and c.usable_tb else None
            row += [_money(price, a.currency), _money(per_tb, a.currency)]
        t.add_row(*row)
    return t


def levers_table(a: Answer) -> Any:
    from rich.table import Table

    t = Table(title=f"at the baseline ({a.baseline}): what limits each metric", title_justify="left")
    for col in ("metric", "bottleneck", "+10% of it gives", "other levers (effect on the metric)"):
        t.add_column(col)
    for m in a.metrics:
        b = m.bottleneck
        others = [lv for lv in m.levers if lv is not b][:3]
        t.add_row(m.metric, f"{b.feature} (elasticity {b.elasticity:.2f})" if b and b.elasticity is not None
                  else "none raises it here", f"{b.effect_pct:+.1f}%" if b else "-",
                  "; ".join(_lever(lv) for lv in others) or "-")
    return t


def _lever(lv: Any) -> str:
    off = " (off the data)" if lv.off_data else ""
    if lv.kind == "switch":
        return f"{lv.feature} → {lv.to}: {_num(lv.effect_pct, '+.1f')}%{off}"
    return f"{lv.feature} +10%: {_num(lv.effect_pct, '+.1f')}%{off}"


def print_answer(console: Any, a: Answer) -> None:
    for m in a.metrics:
        console.print(metric_table(m, a))
        common = [f for f in m.predictions[0].flags if all(f in p.flags for p in m.predictions)]
        for flag in common:
            console.print(f"  [yellow]every scenario[/]: {flag}", highlight=False)
        for p in m.predictions:
            for flag in p.flags:
                if flag not in common:
                    console.print(f"  [yellow]{p.scenario}[/]: {flag}", highlight=False)
        if m.best_upgrade:
            best = next(p for p in m.predictions if p.scenario == m.best_upgrade)
            console.print(f"  best upgrade per unit price: [bold]{best.scenario}[/] "
                          f"({best.gain_per_cost * 1000:+.2f} MB/s per 1,000 {a.currency or 'of price'})"
                          if best.gain_per_cost is not None else "", highlight=False)
    cap = capacity_table(a)
    if cap is not None:
        console.print(cap)
    console.print(levers_table(a))
    if a.filled:
        ref = a.scenarios[a.baseline]
        varied = [k for k in a.filled if k in a.varied]
        fixed = len(a.filled) - len(varied)
        parts = [", ".join(f"{k}={show_value(k, ref[k])}" for k in varied)] if varied else []
        parts += [f"{fixed} input(s) the data never varied, at their measured values"] if fixed else []
        console.print("  not set by any scenario, so taken from the model's reference configuration (a measured one): "
                      + "; ".join(parts), highlight=False)
    for note in a.notes:
        console.print(f"  note: {note}", highlight=False)
    guesses = sorted({p.scenario for m in a.metrics for p in m.predictions if p.basis == "extrapolated"})
    if guesses:
        console.print(f"  [yellow]extrapolated (guesses, not measurements): {', '.join(guesses)}[/]",
                      highlight=False)


def to_csv(a: Answer) -> str:
    """One row per scenario and metric."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["metric", "model", "scenario", "predicted_mbps", "low", "high", "level", "delta_mbps", "delta_pct",
                "basis", "distance", "measured_mbps", "measured_trials", "price", "cost_per_mbps",
                "gain_per_cost", "rank", "raw_tb", "usable_tb", "flags"])
    cap = {c.scenario: c for c in a.capacity}
    for m in a.metrics:
        for p in m.predictions:
            c = cap[p.scenario]
            w.writerow([m.metric, m.model, p.scenario, _g(p.value), _g(p.low), _g(p.high), a.level, _g(p.delta),
                        _g(p.delta_pct), p.basis, _g(p.distance), _g(p.measured_mean), p.measured_trials or "",
                        _g(a.prices.get(p.scenario)), _g(p.cost_per_mbps), _g(p.gain_per_cost), p.rank or "", _g(c.raw_tb),
                        _g(c.usable_tb), " | ".join(p.flags)])
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
        ax.set_xticks(x, names, rotation=30, ha="right")
        ax.set_title(f"{m.metric} ({m.model})")
        ax.set_ylabel("MB/s")
    fig.suptitle(f"predicted throughput, {a.level:.0%} intervals (hatched: extrapolated)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def print_verification(console: Any, v: Verification) -> None:
    """Per metric: predicted (interval) vs measured per scenario, then MAPE, coverage and the ranking check."""
    from rich.table import Table

    for m in v.metrics:
        t = Table(title=f"{m.metric} (MB/s) — model {m.model}, {v.level:.0%} prediction interval, predicted at the "
                  "measured hardware", title_justify="left")
        for col in ("scenario", "predicted", "interval", "measured", "error", "inside", "basis"):
            t.add_column(col, justify="left" if col in ("scenario", "basis") else "right", no_wrap=col != "scenario")
        for c in m.checks:
            t.add_row(c.scenario, _num(c.predicted), f"{_num(c.low)}–{_num(c.high)}", f"{_num(c.measured)} "
                      f"(n={c.trials})", f"{_num(c.error_pct, '+.1f')}%", "yes" if c.inside else "[red]no[/]",
                      c.basis)
        console.print(t)
        line = (f"{m.metric}: MAPE {_num(m.mape, '.1f')}% over {m.n} scenario(s); {_num((m.coverage or 0) * 100, '.0f')}%"
                f" of the measurements inside the {v.level:.0%} intervals")
        if m.ranking_held is not None:
            line += (f"; best gain per price: predicted {m.best_predicted}, measured {m.best_measured} "
                     f"({'held' if m.ranking_held else 'did not hold'})")
        console.print(line, highlight=False)
    for name, why in v.skipped.items():
        console.print(f"not measured: {name}: {why}", highlight=False)
    for note in v.notes:
        console.print(f"note: {note}", highlight=False)
    if v.campaigns:
        console.print(f"verification campaign(s): {', '.join(v.campaigns)}", highlight=False)

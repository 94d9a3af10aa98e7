"""Terminal output of `glmodel tune`: per metric the recommended options against Gluster's defaults, the gain
with its interval, what does not matter, and the commands that apply it."""

from __future__ import annotations

from typing import Any

from ..model.features import label
from ..predict.tune import EQUIVALENCE, Advice, MetricAdvice, describe
from ..predict.whatif import show_value


def _mbps(v: float, lo: float, hi: float) -> str:
    return f"{v:,.1f} MB/s [{lo:,.1f}, {hi:,.1f}]"


def metric_lines(m: MetricAdvice, a: Advice) -> list[str]:
    changed = {n: v for n, v in m.recommended.options.items() if v != m.defaults.options.get(n)}
    head = f"{m.metric} ({m.model} model)"
    if m.metric.startswith("balanced"):
        lines = [f"{head}: {describe(changed) if changed else 'Gluster defaults'}; mean gain over the metrics "
                 f"{m.gain:+.1f}%"]
    else:
        gain = ("none (the defaults are the recommendation)" if not changed else
                f"{m.gain:+,.1f} MB/s [{m.gain_low:+,.1f}, {m.gain_high:+,.1f}]" if m.gain_low == m.gain_low
                else f"{m.gain:+,.1f} MB/s (no interval from this model)")
        lines = [f"{head}: {describe(changed) if changed else 'keep Gluster defaults'}",
                 f"  recommended {_mbps(m.recommended.value, m.recommended.low, m.recommended.high)}; defaults "
                 f"{_mbps(m.defaults.value, m.defaults.low, m.defaults.high)}; gain {gain} ({a.level:.0%})"]
        if m.pitfall is not None:
            pit = m.pitfall
            share = f", {pit.change / m.recommended.value:+.0%}" if m.recommended.value > 0 else ""
            lines.append(f"  avoid: {describe({pit.option: pit.value})} ({pit.change:+,.1f} MB/s "
                         f"[{pit.low:+,.1f}, {pit.high:+,.1f}]{share})")
        if m.not_mattering:
            lines.append(f"  does not matter here (every change within ±{EQUIVALENCE:.0%}, equivalence test; left "
                         "at the default): " + ", ".join(label(n) for n in m.not_mattering))
        if m.unclear:
            lines.append("  unclear (neither shown to matter nor shown not to; left at the default, worth "
                         "measuring): " + ", ".join(label(n) for n in m.unclear))
    if m.recommended.basis == "extrapolated":
        lines.append("  extrapolated: " + "; ".join(m.recommended.flags))
    commands = m.commands(a.volume)
    if not commands:
        return lines + ["  (nothing to set)"]
    lines.append("  check the live volume first:")
    lines += [f"    {c}" for c in m.checks(a.volume)]
    lines.append("  then set:")
    lines += [f"    {c}" for c in commands]
    lines += [f"  trade-off of {label(n)}: {note}" for n, note in m.safety().items()]
    return lines


def advice_lines(a: Advice) -> list[str]:
    given = ", ".join(f"{label(k)} {show_value(k, v)}" for k, v in a.workload.items()) or "none given"
    lines = [f"workload: {given}"]
    if a.assumed:
        lines.append("assumed (the data's reference configuration): " +
                     ", ".join(f"{label(k)} {show_value(k, v)}" for k, v in a.assumed.items()))
    for m in a.metrics:
        lines += metric_lines(m, a)
    if a.balanced is not None:
        lines += metric_lines(a.balanced, a)
    lines += [f"note: {n}" for n in a.notes]
    return lines


def print_advice(console: Any, a: Advice) -> None:
    for line in advice_lines(a):
        console.print(line, highlight=False, markup=False)

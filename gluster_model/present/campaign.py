"""``collect --dry-run``'s lines: the campaign it would run, and each run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..campaign.preview import Preview


def duration(seconds: float) -> str:
    """Minutes up to 90, then hours and minutes: '84 min', '2 h 15 min', '54 h 13 min'."""
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes <= 90 else f"{minutes // 60} h {minutes % 60} min"


def preview_lines(p: Preview) -> list[str]:
    low, high = p.trials
    runs = sum(n for _, n in p.settings) if p.sides is not None else len(p.runs)  # a side's runs in each look
    out = [f"campaign {p.campaign}: {p.volumes} volume(s), {runs} run(s), "
           f"{low}{'' if low == high else f'-{high}'} trial(s) (warm-ups included); "
           f"estimated {duration(p.seconds)} ({p.cost_source})",
           f"  cluster {p.cluster}: {len(p.servers)} server(s): "
           + "; ".join(f"{name} ({', '.join(bricks)})" for name, bricks in p.servers)
           + f"; {len(p.clients)} client(s): {', '.join(p.clients)}"]
    out += [f"  adapted to the cluster: {note}" for note in p.notes]
    if p.adaptive is not None:
        out.append(f"  adaptive: chooses at most {p.adaptive[0]} of these {len(p.runs)} candidate run(s) as it goes, "
                   f"{p.adaptive[1]} per round after the first (the counts and estimate above are for all of them)")
    if p.search_budget is not None:
        out.append(f"  a search: measures the screening runs first, then chooses more as it goes, at most "
                   f"{p.search_budget} run(s) in all (its budget; the counts and estimate above are the screening's)")
    if p.sides is not None:
        factor, a, b, looks = p.sides
        out.append(f"  an interleaved comparison: side A {factor}={a}, side B {factor}={b}, each in {looks} "
                   "campaign(s), in this order (a drift through the session falls on both sides alike):")
        out += [f"    {name}: {n} run(s)" for name, n in p.settings]
    elif p.settings:
        out.append(f"  {len(p.settings)} hardware setting(s), each a campaign with its own facts (its baselines "
                   "measured where its change can move them, kept from an earlier setting where it cannot):")
        out += [f"    {name}: {n} run(s)" for name, n in p.settings]
    if p.duplicates:
        out.append(f"  {p.duplicates} design point(s) merged: they differ only in factors that do not apply to them")
    out += skipped_lines(p.skipped)
    if p.detectable and p.sides is not None:
        out.append("  compared side against side (`glmodel compare --against sides`), it calls a configuration "
                   f"slower (80% power, 5% level over every row; {p.sides[3]} run(s) a side) from about:")
    elif p.detectable:
        out.append("  run again after a change and compared (`glmodel compare --against last`), it calls a "
                   "configuration slower (80% power, 5% level over every row) from about:")
    out += [f"    {metric}: {d.change * 100:.1f}% slower, from {source}" for metric, d, source in p.detectable]
    out += [f"  {i:4d}  {run.volume.name}  {run.label}" for i, run in enumerate(p.runs, 1)]
    return out


def skipped_lines(skipped: Sequence[tuple[Mapping[str, object], str]]) -> list[str]:
    """Design points the cluster cannot run, counted by reason (reasons that differ only in their numbers are
    one), each with one example in words: the reason as it was given and the factors it names."""
    import re

    by: dict[str, list[tuple[Mapping[str, object], str]]] = {}
    for point, why in skipped:
        by.setdefault(re.sub(r"\d+(\.\d+)?", "N", why), []).append((point, why))
    out = [f"  {len(skipped)} design point(s) skipped, the cluster cannot run them:"] if skipped else []
    for _, items in sorted(by.items(), key=lambda kv: -len(kv[1])):
        point, why = items[0]
        named = {k: v for k, v in point.items() if re.search(rf"\b{re.escape(str(k))}", why)}
        example = f" ({', '.join(f'{k}={v}' for k, v in named.items())})" if named else ""
        out.append(f"    {len(items)} like: {why}{example}")
    return out

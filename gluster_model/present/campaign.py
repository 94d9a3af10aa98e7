"""``collect --dry-run``'s lines: the campaign it would run, and each run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..campaign.preview import Preview


def preview_lines(p: Preview) -> list[str]:
    low, high = p.trials
    out = [f"campaign {p.campaign}: {p.volumes} volume(s), {len(p.runs)} run(s), "
           f"{low}{'' if low == high else f'-{high}'} trial(s) (warm-ups included); "
           f"estimated {p.seconds / 60:.0f} min ({p.cost_source})",
           f"  cluster {p.cluster}: {len(p.servers)} server(s): "
           + "; ".join(f"{name} ({', '.join(bricks)})" for name, bricks in p.servers)
           + f"; {len(p.clients)} client(s): {', '.join(p.clients)}"]
    out += [f"  adapted to the cluster: {note}" for note in p.notes]
    if p.adaptive is not None:
        out.append(f"  adaptive: chooses at most {p.adaptive[0]} of these {len(p.runs)} candidate run(s) as it goes, "
                   f"{p.adaptive[1]} per round after the first (the counts and estimate above are for all of them)")
    if p.settings:
        out.append(f"  {len(p.settings)} hardware setting(s), each a campaign with its own baselines:")
        out += [f"    {name}: {n} run(s)" for name, n in p.settings]
    if p.duplicates:
        out.append(f"  {p.duplicates} design point(s) merged: they differ only in factors that do not apply to them")
    out += skipped_lines(p.skipped)
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

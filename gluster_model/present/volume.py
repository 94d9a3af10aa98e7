"""The ``volume`` commands' lines: what apply did and read back, and the volume as the servers have it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..gluster.apply import ApplyResult
    from ..gluster.volume import VolumeInfo


def applied_lines(r: ApplyResult, mounted: dict[str, str]) -> list[str]:
    """What apply did, every option as read back, and where the volume is mounted (if it was)."""
    out = [f"volume {r.info.name}: {r.action} ({r.info.type}, {len(r.info.bricks)} bricks)"]
    out += [f"  {key} = {value}" for key, value in r.options.items()]
    if mounted:
        out.append(f"mounted on {len(mounted)} client(s): " + ", ".join(f"{h}:{p}" for h, p in mounted.items()))
    return out


def info_lines(info: VolumeInfo) -> list[str]:
    return ([f"{info.name}: {info.type}, {info.status}, {info.brick_count} bricks"]
            + [f"  brick {b}" for b in info.bricks] + [f"  {k} = {v}" for k, v in sorted(info.options.items())])

"""Will a run's files fit on the bricks that hold them? Checked before iozone starts, because iozone's
distributed mode does not fail when a brick fills: it stops at "Test running:" and waits for the trial
timeout (an hour by default) without a word.

Where a file goes: DHT places each whole file on one subvolume (a replica or disperse set, or one brick) by
hashing its name; with sharding, each shard block is placed the same way on its own. So the number of files
(or shards) a subvolume receives is binomial, and a subvolume must hold its expected share plus three standard
deviations (never more than all of them). Each brick of a replica set holds every byte its set receives;
each brick of a disperse set holds 1/(disperse − redundancy) of it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import GlmodelError
from ..units import parse_size

if TYPE_CHECKING:
    from ..remote.executor import Executor
    from .volume import Brick, VolumePlan

HEADROOM = 1.10  # metadata, xattrs, the brick filesystem's own reserve


def format_size(n: int) -> str:
    """Bytes as MB (2**20, as sizes are written in plans) with thousands separators."""
    return f"{n / 2**20:,.0f} MB"


@dataclass(frozen=True)
class Shortfall:
    """Bricks that cannot hold what the run writes to them."""

    bricks: list[tuple[str, int]]  # brick spec, free bytes
    need: int  # bytes each of them must hold (headroom included)
    files: int
    file_size: int

    def message(self) -> str:
        free = ", ".join(f"{spec} {format_size(b)}" for spec, b in self.bricks[:4])
        more = f" (and {len(self.bricks) - 4} more)" if len(self.bricks) > 4 else ""
        return (f"{self.files} file(s) of {format_size(self.file_size)} need {format_size(self.need)} on a brick "
                f"(with {HEADROOM - 1:.0%} headroom) but {free}{more} free: refused before iozone starts "
                "(a smaller file_size or fewer threads, or larger bricks)")


def worst_share(items: int, subvolumes: int, sigmas: float = 3.0) -> int:
    """Items a subvolume may receive when each lands on one of ``subvolumes`` at random: the mean plus
    ``sigmas`` binomial standard deviations, rounded up, at most all of them."""
    if subvolumes <= 1:
        return items
    p = 1 / subvolumes
    return min(items, math.ceil(items * p + sigmas * math.sqrt(items * p * (1 - p))))


def bytes_per_brick(plan: VolumePlan, files: int, file_size: int) -> int:
    """What the fullest brick of ``plan`` may have to hold for ``files`` files of ``file_size`` bytes."""
    c = plan.config
    subvolumes = max(1, len(plan.bricks) // c.set_size)
    if c.shard is not None and c.shard.enabled:
        block = parse_size(c.shard.block_size)
        blocks_per_file = max(1, math.ceil(file_size / block))
        data = worst_share(files * blocks_per_file, subvolumes) * min(block, file_size)
    else:
        data = worst_share(files, subvolumes) * file_size
    if c.layout == "disperse":
        data = math.ceil(data / ((c.disperse or 1) - (c.redundancy or 1)))
    return math.ceil(data * HEADROOM)


def shortfall(plan: VolumePlan, free: Mapping[str, int], files: int, file_size: int) -> Shortfall | None:
    """The bricks of ``plan`` whose free bytes (by brick spec) cannot hold their share; None when all can."""
    need = bytes_per_brick(plan, files, file_size)
    short = [(b.spec, free[b.spec]) for b in plan.bricks if b.spec in free and free[b.spec] < need]
    return Shortfall(short, need, files, file_size) if short else None


def brick_free(executor: Executor, bricks: list[Brick]) -> dict[str, int]:
    """Free bytes of the filesystem under each brick, one `df` per server (brick specs as keys)."""
    by_host: dict[str, list[Brick]] = {}
    for b in bricks:
        by_host.setdefault(b.host.address, []).append(b)
    results = executor.run_many(by_host, lambda a: ["df", "-B1", "--output=avail", *[b.path for b in by_host[a]]],
                                timeout=60)
    out: dict[str, int] = {}
    for address, result in results.items():
        lines = result.stdout.strip().splitlines()[1:]
        if len(lines) != len(by_host[address]) or not all(ln.strip().isdecimal() for ln in lines):
            raise GlmodelError(f"{address}: df gave {len(lines)} figure(s) for {len(by_host[address])} brick(s): "
                               f"{result.stdout.strip()[:120]!r}")
        for b, ln in zip(by_host[address], lines):
            out[b.spec] = int(ln.strip())
    return out

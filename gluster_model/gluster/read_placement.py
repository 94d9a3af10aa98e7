"""Where a replicated volume's reads land under Gluster's default read policy, as a distribution.

With ``cluster.read-hash-mode`` 1 (Gluster's default) AFR reads a file from the copy its GFID
hashes to; mode 2 hashes the GFID with the reader's PID. A GFID is random, so each file's reading copy is a
uniform draw. When every file is read equally and each brick serves at its own limit, a run ends when the
busiest brick has served its files: the run reads at ``files / (bricks * max files on one brick)`` of the
rate an even spread would give. Four files on two copies read at 50%, 67% or 100% of it; the lab's 8 KiB
random reads at 300 IOPS a brick measured 304-309, 404-435 and 599-618 IOPS (data/stages_proof/iops_disk_300.csv).

References
----------
GlusterFS, ``xlators/cluster/afr/src/afr-common.c`` (``afr_hash_child``) and the option table of
``cluster.read-hash-mode`` (glusterd-volume-set.c).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DRAWS = 100_000  # placements drawn: the probabilities are good to about 0.3 percentage points
MAX_LEVELS = 4   # up to this many distinct rates are named one by one; more as a range
# What a model file keeps of a run's workload so that `predict` can say how many files its reads draw from
READ_INPUTS = ("large_files", "files", "shared_read")


@dataclass(frozen=True)
class ReadSpread:
    """A read's rate as a fraction of an even spread over the bricks: each level with its probability."""

    files: int
    bricks: int
    levels: tuple[tuple[float, float], ...]  # (fraction of an even spread, probability), fraction ascending
    rounds: int = 1  # sets of files read one after the other (a sequential pass through each thread's files)

    def quantile(self, q: float) -> float:
        """The fraction at or below which a share ``q`` of runs read."""
        total = 0.0
        for fraction, p in self.levels:
            total += p
            if total >= q - 1e-12:
                return fraction
        return self.levels[-1][0]

    def describe(self) -> str:
        """One phrase: the levels with their shares of runs, or the central 90% range and median."""
        what = f"{_files(self.files)} on {self.bricks} bricks"
        if self.rounds > 1:
            what += f", {self.rounds} such sets one after the other,"
        if len(self.levels) <= MAX_LEVELS:
            rates = [f"{f:.0%}" for f, _ in self.levels]
            shares = [f"{p:.0%}" for _, p in self.levels]
            return f"{what} read at {_series(rates)} of an even spread (in {_series(shares, 'and')} of runs)"
        return (f"{what} read at {self.quantile(0.05):.0%}-{self.quantile(0.95):.0%} of an even spread in 90% of "
                f"runs (median {self.quantile(0.5):.0%})")


def _files(n: int) -> str:
    return "1 file" if n == 1 else f"{n} files"


def _series(items: list[str], last: str = "or") -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def read_spread(files: int, bricks: int, rounds: int = 1, draws: int = DRAWS, seed: int = 0) -> ReadSpread:
    """The distribution of a read's rate over the placements of ``files`` equally read files on ``bricks``
    copies, each file's copy drawn uniformly (a seeded draw: the same answer every time).

    Parameters
    ----------
    files : int
        Files read at once, each as much as the others (a thread's file, or the files its records spread over).
    bricks : int
        Bricks a file's reading copy is drawn from: the replica count, or every brick when the distribute
        hash spreads files over several replica sets as uniformly.
    rounds : int
        Sets of ``files`` read one after the other, each placed anew (threads passing through their files in
        order, taken as keeping step): a run's time is the sum of each set's busiest brick's.
    """
    if files < 1 or bricks < 1 or rounds < 1:
        raise ValueError("files, bricks and rounds are at least 1")
    if bricks == 1:
        return ReadSpread(files, 1, ((1.0, 1.0),), rounds)
    rng = np.random.default_rng(seed)
    busiest = np.zeros(draws, dtype=np.int64)
    for _ in range(rounds):
        busiest += rng.multinomial(files, [1.0 / bricks] * bricks, size=draws).max(axis=1)
    values, freq = np.unique(busiest, return_counts=True)
    levels = sorted((files * rounds / (bricks * int(m)), float(n) / draws) for m, n in zip(values, freq))
    return ReadSpread(files, bricks, tuple(levels), rounds)

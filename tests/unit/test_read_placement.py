"""A replicated read's placement draw (gluster/read_placement.py) against an exact count of every placement, and
the read-policy note that carries it into an answer."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest

from gluster_model.gluster.read_placement import read_spread
from gluster_model.predict.whatif import read_policy_note


def _exact(files: int, bricks: int, rounds: int = 1) -> dict[Fraction, Fraction]:
    """Every assignment of each round's files to bricks, equally likely: the rate each gives over an even
    spread's (each round's time its busiest brick's)."""
    tally: Counter[Fraction] = Counter()
    for placed in itertools.product(range(bricks), repeat=files * rounds):
        busiest = sum(max(Counter(placed[r * files:(r + 1) * files]).values()) for r in range(rounds))
        tally[Fraction(files * rounds, bricks * busiest)] += 1
    total = bricks ** (files * rounds)
    return {f: Fraction(n, total) for f, n in tally.items()}


@pytest.mark.parametrize(("files", "bricks", "rounds"),
                         [(4, 2, 1), (3, 3, 1), (6, 2, 1), (5, 3, 1), (8, 2, 1), (4, 4, 1), (2, 2, 3), (3, 2, 2)])
def test_the_draw_matches_an_exact_count_of_every_placement(files: int, bricks: int, rounds: int) -> None:
    spread = read_spread(files, bricks, rounds)
    exact = _exact(files, bricks, rounds)
    assert [f for f, _ in spread.levels] == pytest.approx(sorted(float(f) for f in exact))
    for f, p in spread.levels:
        want = next(float(q) for g, q in exact.items() if abs(float(g) - f) < 1e-9)
        assert p == pytest.approx(want, abs=0.005), (files, bricks, rounds, f)
    assert sum(p for _, p in spread.levels) == pytest.approx(1.0)


def test_four_files_on_two_copies_read_at_half_two_thirds_or_all_of_an_even_spread() -> None:
    # the lab's iops_disk_300 reads (300 IOPS a brick): 300, 405-413 and 598-617 IOPS, these three levels
    spread = read_spread(4, 2)
    assert [round(f, 3) for f, _ in spread.levels] == [0.5, 0.667, 1.0]
    assert [round(p, 2) for _, p in spread.levels] == [0.12, 0.5, 0.38]
    assert spread.describe() == ("4 files on 2 bricks read at 50%, 67% or 100% of an even spread "
                                 "(in 12%, 50% and 38% of runs)")
    assert spread.quantile(0.1) == 0.5 and spread.quantile(0.5) == pytest.approx(2 / 3)


def test_more_files_narrow_the_draw_and_one_brick_has_none() -> None:
    four, many = read_spread(4, 2), read_spread(64, 2)
    assert many.quantile(0.05) > 0.75 > four.quantile(0.05)
    assert "in 90% of runs" in many.describe() and many.quantile(0.95) == 1.0
    assert read_spread(1, 2).describe() == "1 file on 2 bricks read at 50% of an even spread (in 100% of runs)"
    assert read_spread(7, 1).levels == ((1.0, 1.0),)
    with pytest.raises(ValueError):
        read_spread(0, 2)


def test_the_note_names_the_draw_of_the_files_a_run_reads() -> None:
    base = {"replica": 2.0, "servers": 2.0, "threads": 4.0}
    assert "4 files on 2 bricks read at 50%, 67% or 100%" in read_policy_note(base, "random_read")
    spread = read_policy_note({**base, "large_files": 16.0}, "random_read")
    assert "64 files on 2 bricks" in spread and "in 90% of runs" in spread
    # a sequential pass reads each thread's files one after another: sets of four, each placed anew
    assert "4 files on 2 bricks, 16 such sets one after the other, read at" in read_policy_note(
        {**base, "large_files": 16.0}, "read")
    # every client reading one file reads it from one copy; two replica sets spread files over four bricks
    assert "1 file on 2 bricks" in read_policy_note({**base, "shared_read": True}, "read")
    assert "4 files on 4 bricks" in read_policy_note({**base, "servers": 4.0}, "read")
    # no draw: writes, one copy, a policy that reads the least busy copy
    assert read_policy_note(base, "random_write") == ""
    assert read_policy_note({**base, "replica": 1.0}, "read") == ""
    assert read_policy_note({**base, "read_hash_mode": 3.0}, "read") == ""
    # a configuration that does not say how many threads read keeps the note without figures
    bare = read_policy_note({"replica": 2.0}, "read")
    assert "placement draw its interval holds" in bare and "bricks read at" not in bare


def test_the_lab_s_reads_fell_at_the_draw_s_levels() -> None:
    """The published levels against the lab: iops_disk_300's 8 KiB random reads (4 threads, one file each,
    replica 2 on two bricks of 300 IOPS), wherever the disks bound them, at the three rates the draw allows."""
    import pandas as pd

    frame = pd.read_csv(Path(__file__).resolve().parents[2] / "data" / "stages_proof" / "iops_disk_300.csv")
    bound = frame[(frame["setting_disk_iops"].astype(str) == "300") & frame["setting_cpu"].isin(["10%", "20%"])]
    iops = bound["random_read"] * 1024 / 8  # MB/s of 8 KiB records
    even = 2 * 300
    levels = [even * f for f, _ in read_spread(4, 2).levels]
    near = [min(abs(x / level - 1) for level in levels) for x in iops]
    assert len(near) >= 20 and sum(d <= 0.05 for d in near) >= 0.9 * len(near), sorted(iops)
    for level in levels:  # each level drawn at least once
        assert any(abs(x / level - 1) <= 0.05 for x in iops), level

"""Design strategies (gluster_model.model.choose): nested, seeded, and better than random where they should be."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from gluster_model.design.committee import adaptive_order
from gluster_model.design.dopt import dopt_order
from gluster_model.design.iopt import iopt_order
from gluster_model.design.lhs import lhs_design
from gluster_model.design.matrix import with_intercept
from gluster_model.design.uniform import random_order

GRID = np.array(list(itertools.product(*[np.linspace(0, 1, 4)] * 5)))  # 1024 configurations, 5 inputs


def test_sequences_are_seeded_distinct_and_nested() -> None:
    for order in (lambda r: dopt_order(GRID, 20, r), lambda r: iopt_order(GRID, 20, r),
                  lambda r: random_order(len(GRID), 20, r)):
        a, b = order(np.random.default_rng(3)), order(np.random.default_rng(3))
        assert a == b and len(set(a)) == 20
    assert len(set(lhs_design(GRID, 16, np.random.default_rng(0)))) == 16
    # D-optimal for main effects on a cube puts its runs on the corners (every input at 0 or 1).
    corners = GRID[dopt_order(GRID, 12, np.random.default_rng(0))[1:]]
    assert np.isin(corners, [0.0, 1.0]).mean() > 0.9


def _interaction_error(strategy: str, n: int, seed: int) -> float:
    """Relative error of the x1·x2 coefficient, fitted with main effects plus that one interaction."""
    rng = np.random.default_rng(seed)
    noise = np.random.default_rng(1).normal(0, 0.2, len(GRID))
    y = 1 + GRID @ np.array([1, 0.5, 0.3, 0.2, 0.1]) + 2 * GRID[:, 0] * GRID[:, 1] + noise
    chosen = random_order(len(GRID), n, rng) if strategy == "random" else \
        adaptive_order(GRID, lambda idx: y[idx], n, rng, batch=2)
    z = with_intercept(GRID)
    zi = np.column_stack([z, z[:, 1] * z[:, 2]])
    coef, *_ = np.linalg.lstsq(zi[chosen], y[chosen], rcond=None)
    return float(abs(coef[-1] - 2) / 2)


def test_adaptive_finds_an_interaction_with_fewer_runs_than_random() -> None:
    # One interaction matters (2·x1·x2 among five inputs, noise sd 0.2). Runs needed: the smallest n from which
    # the median error of its coefficient over 20 seeds is at most 15% at every larger n tried.
    sizes = (10, 12, 16, 20, 24, 32)
    needed = {}
    for strategy in ("random", "adaptive"):
        errors = {n: float(np.median([_interaction_error(strategy, n, s) for s in range(20)])) for n in sizes}
        ok = [n for n in sizes if all(errors[m] <= 0.15 for m in sizes if m >= n)]
        needed[strategy] = min(ok) if ok else None
    # Measured: adaptive 12, random 20.
    assert needed["adaptive"] is not None and needed["random"] is not None
    assert needed["adaptive"] <= 12 < needed["random"], needed


def test_design_size_cli_compares_strategies_side_by_side(tmp_path: Path) -> None:
    data = Path(__file__).parent.parent.parent / "data" / "hardware_grid.csv"
    proc = subprocess.run([sys.executable, "-m", "gluster_model.cli", "design-size", "--data", str(data), "--metric",
                           "read", "--sizes", "12,24,48", "--subsets", "5", "--strategy", "random", "--strategy",
                           "dopt", "--json", "--figure", str(tmp_path / "curves.png")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    results = json.loads(proc.stdout)["results"]
    assert [(r["metric"], r["strategy"]) for r in results] == [("read", "random"), ("read", "dopt")]
    assert all("runs_needed" in r for r in results)
    by = {r["strategy"]: {p["n"]: p["r2_median"] for p in r["points"]} for r in results}
    assert by["dopt"][12] > by["random"][12] + 0.2  # a D-optimal 12-run design predicts far better
    assert (tmp_path / "curves.png").stat().st_size > 10_000
    bad = subprocess.run([sys.executable, "-m", "gluster_model.cli", "design-size", "--data", str(data),
                          "--strategy", "best"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--strategy" in bad.stderr


def test_every_registered_strategy_gives_distinct_candidates_and_the_cli_offers_exactly_them() -> None:
    import click

    from gluster_model.cli import cli
    from gluster_model.design.registry import STRATEGIES, order

    x = GRID[:200]
    for name in STRATEGIES:
        picks = order(name, x, 24, np.random.default_rng(3), lambda idx: x[idx].sum(axis=1))
        assert len(picks) == 24 and len(set(picks)) == 24 and all(0 <= i < len(x) for i in picks), name
    option = next(p for p in cli.commands["design-size"].params if p.name == "strategies")
    assert isinstance(option.type, click.Choice) and tuple(option.type.choices) == STRATEGIES

"""Designs over factor levels (a plan's factors): the grid, fractions of it, and space-filling draws mapped onto it.

- ``grid``: the full factorial.
- ``fractional``: for two-level factors a regular 2^(k-p) fraction whose added factors are products of at least
  two base factors (resolution III or better: main effects are not aliased with each other); for mixed levels
  a D-optimal subset of the grid for the main-effects model (Fedorov exchange), which keeps every main effect
  estimable with far fewer runs.
- ``space_filling``: ``lhs`` / ``sobol`` points in the unit cube (scipy.stats.qmc), seeded, mapped onto the
  levels by equal-width bins, so with n >= the number of levels every level appears; ``low_correlation``
  keeps the least-correlated of many seeded draws.

The registry (``registry``) names them beside the strategies over candidate rows, behind one signature.

References
----------
Box, Hunter & Hunter, *Statistics for Experimenters*, 2nd ed., ch. 6 (fractional factorials).
Atkinson, Donev & Tobias, *Optimum Experimental Designs, with SAS*, ch. 12 (exchange algorithms).
McKay, Beckman & Conover (1979), Technometrics 21(2) (Latin hypercube sampling).
Owen (1994), "Controlling correlations in Latin hypercube samples", JASA 89(428) (why low correlation is chosen).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from .dopt import fedorov, wynn
from .lhs import lhs_unit

if TYPE_CHECKING:
    import numpy as np

Level = int | str | bool
Levels = dict[str, list[Level]]
MAX_GRID = 100_000  # points; a grid is expanded in memory, and no campaign runs this many


def grid(levels: Levels) -> list[dict[str, Level]]:
    names = list(levels)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*(levels[n] for n in names))]


def grid_size(levels: Levels) -> int:
    return math.prod(len(v) for v in levels.values())


def main_effects_matrix(points: Sequence[dict[str, Level]], levels: Levels) -> np.ndarray:
    """Intercept plus sum-to-zero (effect) coding of every varied factor: the main-effects model matrix."""
    import numpy as np

    cols: list[np.ndarray] = [np.ones(len(points))]
    for name, lv in levels.items():
        if len(lv) < 2:
            continue
        index = np.array([lv.index(p[name]) for p in points])
        for j in range(len(lv) - 1):
            col = np.where(index == j, 1.0, 0.0) - np.where(index == len(lv) - 1, 1.0, 0.0)
            cols.append(col)
    return np.column_stack(cols)


def n_main_effect_parameters(levels: Levels) -> int:
    return 1 + sum(len(v) - 1 for v in levels.values() if len(v) > 1)


def fractional(levels: Levels, n: int | None = None, seed: int = 0) -> list[dict[str, Level]]:
    """A fraction of the grid in which every main effect stays estimable (see module doc)."""
    varied = {k: v for k, v in levels.items() if len(v) > 1}
    fixed = {k: v[0] for k, v in levels.items() if len(v) == 1}
    if not varied:
        return [dict(fixed)]
    if n is None and all(len(v) == 2 for v in varied.values()) and len(varied) >= 3:
        pts = _two_level_fraction(varied)
    else:
        pts = _d_optimal(varied, n, seed)
    return [{**fixed, **p} for p in pts]


def _two_level_fraction(levels: Levels) -> list[dict[str, Level]]:
    names = list(levels)
    k = len(names)
    base = max(2, math.ceil(math.log2(k + 1)))  # 2^base runs hold k main effects plus the mean
    base = min(base, k)
    interactions = [c for r in range(2, base + 1) for c in itertools.combinations(range(base), r)]
    # Prefer high-order generators: an added factor aliased with a 3-way interaction disturbs main effects less.
    interactions.sort(key=lambda c: -len(c))
    added = interactions[: k - base]
    runs = []
    for signs in itertools.product((-1, 1), repeat=base):
        row = list(signs) + [math.prod(signs[i] for i in combo) for combo in added]
        runs.append({names[j]: levels[names[j]][0 if row[j] < 0 else 1] for j in range(k)})
    return runs


def _d_optimal(levels: Levels, n: int | None, seed: int) -> list[dict[str, Level]]:
    import numpy as np

    candidates = grid(levels)
    p = n_main_effect_parameters(levels)
    size = n if n is not None else min(len(candidates), p + max(2, p // 2))
    if size < p:
        raise ValueError(f"{size} runs cannot estimate {p} main-effect parameters; use n >= {p}")
    if size >= len(candidates):
        return candidates
    z = main_effects_matrix(candidates, levels)
    # Wynn's sequential design as the start, then Fedorov exchange until det(Z'Z) stops growing.
    chosen, best = fedorov(z, wynn(z, size, np.random.default_rng(seed)))
    if best == -math.inf:
        raise ValueError("no subset of that size keeps every main effect estimable")
    return [candidates[i] for i in sorted(chosen)]


def space_filling(levels: Levels, kind: Literal["lhs", "sobol"], n: int, seed: int) -> list[dict[str, Level]]:
    """n points of a seeded LHS or scrambled Sobol' sequence, each coordinate binned onto a factor's levels."""
    from scipy.stats import qmc

    names = list(levels)
    d = len(names)
    if d == 0:
        return [{}]
    u = lhs_unit(d, n, seed) if kind == "lhs" else qmc.Sobol(d=d, scramble=True, seed=seed).random(n)
    pts = []
    for row in u:
        pts.append({names[j]: levels[names[j]][min(int(row[j] * len(levels[names[j]])), len(levels[names[j]]) - 1)]
                    for j in range(d)})
    return pts


def level_codes(points: Sequence[dict[str, Level]], levels: Levels) -> np.ndarray:
    """Each varied factor's level index per point, scaled to 0..1 (the columns whose correlations count)."""
    import numpy as np

    names = [n for n, lv in levels.items() if len(lv) > 1]
    if not names:
        return np.zeros((len(points), 0))
    return np.array([[levels[n].index(p[n]) / (len(levels[n]) - 1) for n in names] for p in points], dtype=float)


def max_correlation(points: Sequence[dict[str, Level]], levels: Levels) -> float:
    """The largest |Pearson correlation| between two varied factors' level codes (0 with fewer than two)."""
    import numpy as np

    x = level_codes(points, levels)
    if x.shape[1] < 2 or len(points) < 3:
        return 0.0
    sd = x.std(axis=0)
    if np.any(sd == 0):
        return 1.0  # a factor that never moves in the design cannot be separated from the intercept
    r = np.corrcoef(x, rowvar=False)
    return float(np.max(np.abs(r[np.triu_indices_from(r, k=1)])))


def low_correlation(levels: Levels, kind: Literal["lhs", "sobol"], n: int, seed: int,
                    tries: int = 400) -> list[dict[str, Level]]:
    """The space-filling draw (of ``tries`` seeds from ``seed``) whose factors are least correlated.

    A plain LHS keeps each factor balanced but lets two factors drift together by chance (with 12 points and 4
    levels, |r| > 0.4 is common); picking the best of many draws is the simple form of Owen's (1994) correlation
    control, and deterministic for a given seed.
    """
    best: list[dict[str, Level]] = []
    best_r = math.inf
    for k in range(tries):
        pts = space_filling(levels, kind, n, seed + k)
        distinct = len({tuple(sorted(p.items(), key=str)) for p in pts})
        r = max_correlation(pts, levels) + (n - distinct)  # a repeated setting is a setting lost
        if r < best_r - 1e-12:
            best, best_r = pts, r
        if best_r <= 0.05:
            break
    return best



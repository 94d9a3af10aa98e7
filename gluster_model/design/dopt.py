"""``dopt``: D-optimal designs, which maximise det(X'X) — the volume of the parameters' confidence region.

``wynn`` grows a design one run at a time, always the candidate of largest leverage ``x'(X'X)^-1 x`` (the point
the design knows least about, the one that most increases det(X'X)); ``fedorov`` improves a design of fixed size
by exchanging runs while the determinant grows. ``dopt_order`` is the strategy (Wynn over the scaled inputs);
a plan's mixed-level fraction is Wynn over the main-effects coding, polished by Fedorov exchange.

References
----------
Wynn, H. P. (1970), The sequential generation of D-optimum experimental designs, *Ann. Math. Stat.* 41(5).
Fedorov, V. V. (1972), *Theory of Optimal Experiments*, Academic Press.
Atkinson, A. C., Donev, A. N., Tobias, R. D. (2007), *Optimum Experimental Designs, with SAS*, Oxford, ch. 12.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .matrix import leverage, with_intercept

if TYPE_CHECKING:
    import numpy as np


def wynn(z: np.ndarray, size: int, rng: np.random.Generator, start: list[int] | None = None) -> list[int]:
    """Rows of the model matrix ``z`` in Wynn's order: from a random start (or ``start``), always the row of
    largest leverage under the design so far; ties (common on a grid) broken at random, seeded."""
    import numpy as np

    chosen = list(start) if start else [int(rng.integers(len(z)))]
    while len(chosen) < size:
        lev = leverage(z, chosen)
        lev[chosen] = -np.inf
        best = np.flatnonzero(lev >= lev.max() - 1e-12)
        chosen.append(int(rng.choice(best)))
    return chosen[:size]


def log_det(z: np.ndarray, rows: list[int]) -> float:
    import numpy as np

    sign, val = np.linalg.slogdet(z[rows].T @ z[rows])
    return float(val) if sign > 0 else -math.inf


def fedorov(z: np.ndarray, chosen: list[int]) -> tuple[list[int], float]:
    """Exchange a chosen row for another while log det(Z'Z) grows; the improved rows and their log det."""
    best = log_det(z, chosen)
    improved = True
    while improved:
        improved = False
        for i in range(len(chosen)):
            for c in range(len(z)):
                if c in chosen:
                    continue
                trial = chosen[:i] + [c] + chosen[i + 1:]
                value = log_det(z, trial)
                if value > best + 1e-9:
                    chosen, best, improved = trial, value, True
    return chosen, best


def dopt_order(x: np.ndarray, size: int, rng: np.random.Generator, start: list[int] | None = None) -> list[int]:
    """Wynn's sequential D-optimal design over the candidates' scaled inputs (main effects and intercept)."""
    return wynn(with_intercept(x), size, rng, start)

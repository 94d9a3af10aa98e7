"""``lhs``: Latin hypercube sampling (McKay, Beckman & Conover 1979), the one sampler glmodel uses.

Plans map its unit-cube points onto factor levels by equal-width bins (``plan.design.space_filling``); as a
strategy over candidates, each point takes the nearest unused candidate in the min-max scaled inputs.

References
----------
McKay, M. D., Beckman, R. J., Conover, W. J. (1979), A comparison of three methods for selecting values of input
variables in the analysis of output from a computer code, *Technometrics* 21(2).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .matrix import with_intercept

if TYPE_CHECKING:
    import numpy as np


def lhs_unit(d: int, n: int, seed: int | np.random.Generator) -> np.ndarray:
    """``n`` points of a seeded Latin hypercube in [0, 1)^d: each coordinate hits each of n equal strata once."""
    from scipy.stats import qmc

    out: np.ndarray = qmc.LatinHypercube(d=d, seed=seed).random(n)
    return out


def lhs_design(x: np.ndarray, size: int, rng: np.random.Generator) -> list[int]:
    """``size`` distinct candidates nearest to the points of one Latin hypercube sample (McKay et al. 1979)."""
    import numpy as np
    z = with_intercept(x)[:, 1:]
    target = lhs_unit(z.shape[1], size, rng)
    free = np.ones(len(z), dtype=bool)
    chosen: list[int] = []
    for t in target:
        d = np.where(free, ((z - t) ** 2).sum(axis=1), np.inf)
        j = int(np.argmin(d))
        chosen.append(j)
        free[j] = False
    return chosen


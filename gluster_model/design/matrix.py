"""The algebra the optimal designs share: the scaled model matrix, leverage, the I-optimal gain, ridge fits.

References
----------
Atkinson, A. C., Donev, A. N., Tobias, R. D. (2007), *Optimum Experimental Designs, with SAS*, Oxford, ch. 10-12.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

RIDGE = 1e-8  # keeps X'X invertible while the design is still smaller than the model


def with_intercept(x: np.ndarray) -> np.ndarray:
    """Columns scaled to [0, 1] (so leverage and distances weigh every input alike), plus an intercept."""
    import numpy as np

    span = np.ptp(x, axis=0)
    scaled = (x - x.min(axis=0)) / np.where(span > 0, span, 1.0)
    return np.column_stack([np.ones(len(x)), scaled])


def leverage(z: np.ndarray, chosen: list[int]) -> np.ndarray:
    import numpy as np

    m = z[chosen].T @ z[chosen] + RIDGE * np.eye(z.shape[1])
    inv = np.linalg.inv(m)
    out: np.ndarray = np.einsum("ij,jk,ik->i", z, inv, z)
    return out


def iopt_gain(z: np.ndarray, chosen: list[int]) -> np.ndarray:
    """How much adding each candidate lowers the summed prediction variance over all candidates (Sherman-
    Morrison: ||Z M^-1 x||^2 / (1 + x' M^-1 x)), the I-optimality criterion (Atkinson et al. 2007, ch. 10.6)."""
    import numpy as np

    m = z[chosen].T @ z[chosen] + RIDGE * np.eye(z.shape[1])
    a = z @ np.linalg.inv(m)  # N x p
    h = a @ z.T  # N x N: column i is Z M^-1 x_i
    out: np.ndarray = (h ** 2).sum(axis=0) / (1.0 + np.einsum("ij,ij->i", a, z))
    return out


def with_pairs(z: np.ndarray) -> np.ndarray:
    """The intercept-plus-inputs matrix with every pairwise product added: the challenger that can bend."""
    import numpy as np

    k = z.shape[1]
    prods = [z[:, i] * z[:, j] for i in range(1, k) for j in range(i + 1, k)]
    return np.column_stack([z, *prods]) if prods else z


def ridge(a: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray:
    import numpy as np

    out: np.ndarray = np.linalg.solve(a.T @ a + lam * np.eye(a.shape[1]), a.T @ b)
    return out


"""``iopt``: I-optimal designs, which minimise the average prediction variance over every candidate — the
questions a model used for what-if answers will be asked (rather than D-optimality's parameter volume).

References
----------
Atkinson, A. C., Donev, A. N., Tobias, R. D. (2007), *Optimum Experimental Designs, with SAS*, Oxford, ch. 10.6.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .matrix import iopt_gain, with_intercept

if TYPE_CHECKING:
    import numpy as np


def iopt_order(x: np.ndarray, size: int, rng: np.random.Generator, start: list[int] | None = None) -> list[int]:
    """Sequential I-optimal design: always the candidate that most lowers the average prediction variance over
    every candidate, the questions the model will be asked (rather than D-optimality's parameter volume)."""
    import numpy as np

    z = with_intercept(x)
    chosen = list(start) if start else [int(rng.integers(len(z)))]
    while len(chosen) < size:
        gain = iopt_gain(z, chosen)
        gain[chosen] = -np.inf
        best = np.flatnonzero(gain >= gain.max() * (1 - 1e-9))
        chosen.append(int(rng.choice(best)))
    return chosen[:size]


"""The design strategies by name: what ``design-size --strategy`` and the CLI offer, and how each is called.

Each entry has one signature, ``(x, size, rng, oracle) -> indices in run order``; only ``adaptive`` reads the
oracle (``oracle(indices)`` measures candidates: a finished grid looked up offline, or nothing for the others).
An adaptive campaign on a cluster runs the same committee round by round (``campaign.adaptive``), with the
store as its oracle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

Strategy = Literal["random", "lhs", "dopt", "iopt", "adaptive"]
STRATEGIES: tuple[Strategy, ...] = ("random", "lhs", "dopt", "iopt", "adaptive")  # the CLI's choices, cheaply
Oracle = Callable[[list[int]], "np.ndarray"]


def order(strategy: Strategy, x: np.ndarray, size: int, rng: np.random.Generator, oracle: Oracle | None = None,
          *, batch: int = 4) -> list[int]:
    """The first ``size`` candidates of ``x`` in the order ``strategy`` would run them."""
    if strategy == "random":
        from .uniform import random_order

        return random_order(len(x), size, rng)
    if strategy == "lhs":
        from .lhs import lhs_design

        return lhs_design(x, size, rng)
    if strategy == "dopt":
        from .dopt import dopt_order

        return dopt_order(x, size, rng)
    if strategy == "iopt":
        from .iopt import iopt_order

        return iopt_order(x, size, rng)
    if strategy == "adaptive":
        if oracle is None:
            raise ValueError("the adaptive strategy needs measurements (an oracle)")
        from .committee import adaptive_order

        return adaptive_order(x, oracle, size, rng, batch=batch)
    raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")

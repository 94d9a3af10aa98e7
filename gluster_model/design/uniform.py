"""``random``: a seeded permutation of the candidates, the baseline every other strategy must beat."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

def random_order(n_candidates: int, size: int, rng: np.random.Generator) -> list[int]:
    return [int(i) for i in rng.permutation(n_candidates)[:size]]


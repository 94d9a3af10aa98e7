"""Groups of rows that every split keeps together: the trials of one configuration (or, for held-out
hardware, of one hardware setting) are never on both sides of a train/test split."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np
    import pandas as pd

GROUP = "config_hash"  # trials of one configuration form a group in every split

def n_groups(frame: pd.DataFrame) -> int:
    return int(frame[GROUP].nunique()) if GROUP in frame else len(frame)


def group_folds(groups: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Fold number per row: whole groups (configurations) dealt to k folds in a seeded random order."""
    import numpy as np
    import pandas as pd

    codes, uniq = pd.factorize(groups)
    fold_of_group = np.empty(len(uniq), dtype=int)
    fold_of_group[np.random.default_rng(seed).permutation(len(uniq))] = np.arange(len(uniq)) % k
    return fold_of_group[codes]  # type: ignore[no-any-return]


def group_resamples(groups: np.ndarray, rounds: int, seed: int) -> Iterator[np.ndarray]:
    """Row indices of ``rounds`` bootstrap resamples that draw whole groups (configurations) with replacement,
    so a configuration's repeated trials are drawn together (Efron and Tibshirani 1993, §8.5)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    codes, uniq = pd.factorize(groups)
    order = np.argsort(codes, kind="stable")
    members = np.split(order, np.cumsum(np.bincount(codes, minlength=len(uniq)))[:-1])
    for _ in range(rounds):
        yield np.concatenate([members[g] for g in rng.integers(0, len(uniq), size=len(uniq))])

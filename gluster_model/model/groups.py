"""Groups of rows that every split keeps together: the trials of one configuration (or, for held-out
hardware, of one hardware setting) are never on both sides of a train/test split."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
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

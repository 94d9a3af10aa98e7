"""Groups of rows that every split keeps together: the trials of one configuration (or, for held-out
hardware, of one hardware setting) are never on both sides of a train/test split."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .features import HARDWARE_INPUTS

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


def cv_groups(frame: pd.DataFrame) -> tuple[np.ndarray, str]:
    """What cross-validation should hold out whole: the hardware setting when the data hold 3 or more (a
    hardware question asks about a setting the model has not seen, so a fold must not have seen it either:
    with configurations as groups, every setting sits on both sides of every split and the figure is kinder
    than the question), else the configuration."""
    import numpy as np
    import pandas as pd


    varied = [c for c in HARDWARE_INPUTS if c in frame and frame[c].notna().all() and frame[c].nunique() > 1]
    if varied:
        codes = pd.MultiIndex.from_frame(frame[varied].astype(str)).factorize()[0]
        if GROUP in frame:
            codes = _joined(codes, frame[GROUP].to_numpy())
        if len(np.unique(codes)) >= 3:
            return np.asarray(codes), "hardware setting"
    return (frame[GROUP].to_numpy() if GROUP in frame else np.arange(len(frame))), "configuration"


def _joined(codes: np.ndarray, configs: np.ndarray) -> np.ndarray:
    """Setting codes merged wherever one configuration appears under two: a setting measured again (replicate
    runs) has its own baselines, so its measured figures differ a little, but it is the same setting and must
    sit on one side of a split with its first measurement."""
    import numpy as np
    import pandas as pd

    parent = list(range(int(codes.max()) + 1))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for members in pd.Series(codes).groupby(configs).unique():
        first = find(int(members[0]))
        for other in members[1:]:
            parent[find(int(other))] = first
    return np.asarray(pd.factorize(np.array([find(int(c)) for c in codes]))[0])

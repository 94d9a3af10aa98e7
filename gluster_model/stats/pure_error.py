"""Pure error: the spread of repeated measurements around each group's mean (a configuration measured in
several runs, or a run's trials), pooled over the groups.

References
----------
Montgomery, D. C., Peck, E. A., Vining, G. G. (2012), *Introduction to Linear Regression Analysis*, 5th ed.,
Wiley, §4.5 (pure error from replicates).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class PureError:
    """Within-configuration spread: sum of squares around each replicated configuration's mean."""

    ss: float
    df: int  # Σ (runs − 1) over replicated configurations
    configurations: int  # measured more than once
    runs: int  # rows in those configurations

    @property
    def ms(self) -> float:
        return self.ss / self.df if self.df else float("nan")


def pure_error(values: np.ndarray, groups: np.ndarray) -> PureError:
    """Pure error of ``values`` within ``groups`` (config hashes, or runs); groups seen once contribute nothing."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    _, code = np.unique(np.asarray(groups), return_inverse=True)
    code = np.ravel(code)
    n = np.bincount(code)
    dev = v - (np.bincount(code, weights=v) / n)[code]
    rep = n[code] > 1
    configs = int(np.sum(n > 1))
    return PureError(float(np.sum(dev[rep] ** 2)), int(np.sum(rep)) - configs, configs, int(np.sum(rep)))

"""Statistics of the methodology studies: 3-sigma bounds, modes of a read-time distribution, where a curve
plateaus, and overhead against a reference. Pure functions on plain numbers.

References
----------
Schwarz, G. (1978), "Estimating the dimension of a model", *Annals of Statistics* 6(2), 461-464 (BIC).
McLachlan, G. and Peel, D. (2000), *Finite Mixture Models*, Wiley, ch. 6 (choosing the number of components).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Summary:
    """Mean, sample standard deviation and the 3-sigma acceptance band of a set of trials."""

    n: int
    mean: float
    sd: float

    @property
    def low(self) -> float:
        return self.mean - 3 * self.sd

    @property
    def high(self) -> float:
        return self.mean + 3 * self.sd


def summarize(values: Sequence[float]) -> Summary:
    """Mean and sample standard deviation (0 for a single value) of measured trials."""
    xs = [float(v) for v in values]
    if not xs:
        raise ValueError("no values to summarize")
    return Summary(len(xs), statistics.fmean(xs), statistics.stdev(xs) if len(xs) > 1 else 0.0)


@dataclass(frozen=True)
class Mode:
    """One component of a Gaussian mixture: its centre, spread and share of the sample."""

    mean: float
    sd: float
    weight: float


def detect_modes(values: Sequence[float], max_modes: int = 5, seed: int = 0,
                 min_weight: float = 0.02) -> list[Mode]:
    """The modes of a sample: a Gaussian mixture with the number of components chosen by BIC.

    Mixtures of 1..``max_modes`` components are fitted (EM, several starts) and the one with the lowest BIC kept;
    components holding less than ``min_weight`` of the sample are dropped and the rest renormalized (a
    component that small is an outlier cluster, not a mode). At most n/5 components are tried, so each has
    some points to stand on. Modes are returned in increasing order of their mean.

    Parameters
    ----------
    values : sequence of float
        The sample, e.g. per-reader read times in seconds.
    max_modes : int
        The largest number of components tried.
    seed : int
        Seed of the EM initialization, for reproducible answers.
    min_weight : float
        Components with a smaller weight are left out.
    """
    import numpy as np
    from sklearn.mixture import GaussianMixture

    x = np.asarray([float(v) for v in values], dtype=float).reshape(-1, 1)
    if len(x) == 0:
        raise ValueError("no values to look for modes in")
    if len(x) < 10 or float(x.std()) == 0.0:
        return [Mode(float(x.mean()), float(x.std()), 1.0)]
    best, best_bic = None, math.inf
    for k in range(1, max(1, min(max_modes, len(x) // 5)) + 1):
        gm = GaussianMixture(n_components=k, n_init=3, random_state=seed, reg_covar=1e-6 * float(x.var()) + 1e-12)
        gm.fit(x)
        bic = float(gm.bic(x))
        if bic < best_bic:
            best, best_bic = gm, bic
    assert best is not None
    means = best.means_.ravel()
    sds = np.sqrt(best.covariances_.ravel())
    weights = best.weights_.ravel()
    keep = [i for i in range(len(weights)) if weights[i] >= min_weight]
    total = float(sum(weights[i] for i in keep))
    return sorted((Mode(float(means[i]), float(sds[i]), float(weights[i]) / total) for i in keep),
                  key=lambda m: m.mean)


def plateau(points: Sequence[tuple[float, float]], gain: float = 0.05) -> float | None:
    """The first block size from which every further doubling gains less than ``gain`` in throughput.

    ``points``: (block size, throughput) pairs. Steps between successive sizes are normalized to a doubling
    (a step of ×4 must gain less than (1+gain)² - 1). None when the curve is still climbing at its largest size.
    """
    pts = sorted((float(b), float(v)) for b, v in points)
    if len(pts) < 2:
        return None
    flat_from: float | None = None
    for (b0, v0), (b1, v1) in zip(pts, pts[1:]):
        doublings = math.log2(b1 / b0) if b1 > b0 else 0.0
        if doublings <= 0 or v0 <= 0:
            continue
        per_doubling = (v1 / v0) ** (1 / doublings) - 1
        if per_doubling < gain:
            flat_from = b0 if flat_from is None else flat_from
        else:
            flat_from = None
    return flat_from


def overhead_percent(value: float, reference: float) -> float:
    """How much larger ``value`` is than ``reference``, in percent (times: >0 is slower)."""
    if reference == 0:
        raise ValueError("the reference is zero")
    return (value / reference - 1.0) * 100.0

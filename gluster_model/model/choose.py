"""Which configurations to run: four ways to pick n of a set of candidate configurations.

Each strategy returns candidate indices in the order it would run them, so that the first k of a sequence are
the design of size k (every strategy here is nested, which lets one sequence be judged at every size):

* ``random`` — a seeded permutation: the baseline every other strategy must beat.
* ``lhs`` — space filling: the candidates nearest to a Latin hypercube sample of the (min-max scaled) inputs,
  re-drawn at each size so each size is a proper LHS design.
* ``dopt`` — D-optimal for the main-effects model: from a random start, greedily the candidate of largest
  leverage ``x'(X'X)^-1 x`` (Wynn's sequential algorithm), which is the point whose prediction the current
  design knows least about, and so the one that most increases det(X'X).
* ``iopt`` — I-optimal: greedily the candidate that most lowers the average prediction variance over all
  candidates, which is what a model used for what-if questions over the grid should minimise.
* ``adaptive`` — query by committee over the challengers: after an I-optimal start, fit the additive model and
  an interaction model on bootstrap resamples of the runs so far, and run next the batch where they disagree
  most, weighted by I-optimal gain. Unlike the others it looks at the measurements: where the additive model
  misfits (an interaction, a curve), the committee disagrees and runs go there.

References
----------
Wynn, H. P. (1970), The sequential generation of D-optimum experimental designs, *Ann. Math. Stat.* 41(5).
Atkinson, A. C., Donev, A. N., Tobias, R. D. (2007), *Optimum Experimental Designs, with SAS*, Oxford — ch. 11-12.
McKay, M. D., Beckman, R. J., Conover, W. J. (1979), A comparison of three methods for selecting values of input
variables in the analysis of output from a computer code, *Technometrics* 21(2).
Seung, H. S., Opper, M., Sompolinsky, H. (1992), Query by committee, *Proc. COLT '92*.
Burbidge, R., Rowland, J. J., King, R. D. (2007), Active learning for regression based on query by committee,
*IDEAL 2007*, LNCS 4881.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

Strategy = Literal["random", "lhs", "dopt", "iopt", "adaptive"]
STRATEGIES: tuple[Strategy, ...] = ("random", "lhs", "dopt", "iopt", "adaptive")
RIDGE = 1e-8  # keeps X'X invertible while the design is still smaller than the model


def with_intercept(x: np.ndarray) -> np.ndarray:
    """Columns scaled to [0, 1] (so leverage and distances weigh every input alike), plus an intercept."""
    import numpy as np

    span = np.ptp(x, axis=0)
    scaled = (x - x.min(axis=0)) / np.where(span > 0, span, 1.0)
    return np.column_stack([np.ones(len(x)), scaled])


def random_order(n_candidates: int, size: int, rng: np.random.Generator) -> list[int]:
    return [int(i) for i in rng.permutation(n_candidates)[:size]]


def lhs_design(x: np.ndarray, size: int, rng: np.random.Generator) -> list[int]:
    """``size`` distinct candidates nearest to the points of one Latin hypercube sample (McKay et al. 1979)."""
    import numpy as np
    from scipy.stats import qmc

    z = with_intercept(x)[:, 1:]
    target = qmc.LatinHypercube(d=z.shape[1], seed=rng).random(size)
    free = np.ones(len(z), dtype=bool)
    chosen: list[int] = []
    for t in target:
        d = np.where(free, ((z - t) ** 2).sum(axis=1), np.inf)
        j = int(np.argmin(d))
        chosen.append(j)
        free[j] = False
    return chosen


def _leverage(z: np.ndarray, chosen: list[int]) -> np.ndarray:
    import numpy as np

    m = z[chosen].T @ z[chosen] + RIDGE * np.eye(z.shape[1])
    inv = np.linalg.inv(m)
    out: np.ndarray = np.einsum("ij,jk,ik->i", z, inv, z)
    return out


def _iopt_gain(z: np.ndarray, chosen: list[int]) -> np.ndarray:
    """How much adding each candidate lowers the summed prediction variance over all candidates (Sherman-
    Morrison: ||Z M^-1 x||^2 / (1 + x' M^-1 x)), the I-optimality criterion (Atkinson et al. 2007, ch. 10.6)."""
    import numpy as np

    m = z[chosen].T @ z[chosen] + RIDGE * np.eye(z.shape[1])
    a = z @ np.linalg.inv(m)  # N x p
    h = a @ z.T  # N x N: column i is Z M^-1 x_i
    out: np.ndarray = (h ** 2).sum(axis=0) / (1.0 + np.einsum("ij,ij->i", a, z))
    return out


def iopt_order(x: np.ndarray, size: int, rng: np.random.Generator, start: list[int] | None = None) -> list[int]:
    """Sequential I-optimal design: always the candidate that most lowers the average prediction variance over
    every candidate, the questions the model will be asked (rather than D-optimality's parameter volume)."""
    import numpy as np

    z = with_intercept(x)
    chosen = list(start) if start else [int(rng.integers(len(z)))]
    while len(chosen) < size:
        gain = _iopt_gain(z, chosen)
        gain[chosen] = -np.inf
        best = np.flatnonzero(gain >= gain.max() * (1 - 1e-9))
        chosen.append(int(rng.choice(best)))
    return chosen[:size]


def dopt_order(x: np.ndarray, size: int, rng: np.random.Generator, start: list[int] | None = None) -> list[int]:
    """Wynn's sequential D-optimal design: from a random start (or ``start``), always the candidate of largest
    leverage under the design so far."""
    import numpy as np

    z = with_intercept(x)
    chosen = list(start) if start else [int(rng.integers(len(z)))]
    while len(chosen) < size:
        lev = _leverage(z, chosen)
        lev[chosen] = -np.inf
        best = np.flatnonzero(lev >= lev.max() - 1e-12)
        chosen.append(int(rng.choice(best)))  # ties (common on a grid) broken at random, seeded
    return chosen[:size]


def with_pairs(z: np.ndarray) -> np.ndarray:
    """The intercept-plus-inputs matrix with every pairwise product added: the challenger that can bend."""
    import numpy as np

    k = z.shape[1]
    prods = [z[:, i] * z[:, j] for i in range(1, k) for j in range(i + 1, k)]
    return np.column_stack([z, *prods]) if prods else z


def _ridge(a: np.ndarray, b: np.ndarray, lam: float) -> np.ndarray:
    import numpy as np

    out: np.ndarray = np.linalg.solve(a.T @ a + lam * np.eye(a.shape[1]), a.T @ b)
    return out


def next_batch(x: np.ndarray, chosen: list[int], measured: Sequence[float], batch: int, rng: np.random.Generator,
               committee: int = 8) -> tuple[list[int], list[dict[str, float]]]:
    """The next ``batch`` candidates by query by committee over the challengers, with why each was picked.

    The committee is ``committee`` bootstrap resamples of the runs so far (``chosen`` with their ``measured``
    values), each fitted twice: the additive main-effects model (the study's MLR) and a ridge fit that adds every
    pairwise interaction. Where they disagree (the variance of all their predictions), the additive model is
    unsure or wrong — an interaction or a curve. A candidate's score is that disagreement times its I-optimal
    gain (a run should also inform the rest of the grid), discounted by the share of its leverage that earlier
    picks of the batch already took, so a batch does not pile up in one corner.
    """
    import numpy as np

    z = with_intercept(x)
    zp = with_pairs(z)
    yy = np.asarray(measured, dtype=float)
    scale = float(np.std(yy)) or 1.0
    rows = np.arange(len(chosen))
    preds = []
    for _ in range(committee):
        pick = rng.choice(rows, size=len(rows))
        idx, target = np.asarray(chosen)[pick], yy[pick] / scale
        preds.append(z @ _ridge(z[idx], target, RIDGE))
        preds.append(zp @ _ridge(zp[idx], target, 1e-2 * len(idx)))
    disagreement = np.var(np.array(preds), axis=0)
    gain = _iopt_gain(z, chosen)
    score = disagreement / (disagreement.max() or 1.0) * gain / (gain.max() or 1.0)
    before = _leverage(z, chosen)
    picks: list[int] = []
    why: list[dict[str, float]] = []
    open_ = len(x) - len(chosen)
    for _ in range(min(batch, open_)):
        s = score * (_leverage(z, chosen + picks) / np.maximum(before, 1e-12) if picks else 1.0)
        s[chosen + picks] = -np.inf
        j = int(np.argmax(s))
        picks.append(j)
        why.append({"disagreement": float(disagreement[j] / (disagreement.max() or 1.0)),
                    "gain": float(gain[j] / (gain.max() or 1.0)), "score": float(s[j])})
    return picks, why


def adaptive_order(x: np.ndarray, y: Callable[[list[int]], np.ndarray], size: int, rng: np.random.Generator, *,
                   initial: int | None = None, batch: int = 4, committee: int = 8) -> list[int]:
    """Query by committee (``next_batch``) after an I-optimal start of ``initial`` runs (default: the
    main-effects model's parameters + 2); ``y(indices)`` measures candidates (offline: looks them up in a
    finished grid)."""
    chosen = iopt_order(x, min(size, initial or x.shape[1] + 3), rng)
    measured = list(y(chosen))
    while len(chosen) < size:
        picks, _ = next_batch(x, chosen, measured, min(batch, size - len(chosen)), rng, committee)
        measured.extend(y(picks))
        chosen.extend(picks)
    return chosen[:size]

"""``adaptive``: query by committee over the challengers. After an I-optimal start, the additive model and an
interaction model are fitted on bootstrap resamples of the runs so far, and the next batch goes where they
disagree most, weighted by I-optimal gain. Unlike the other strategies it looks at the measurements: where the
additive model misfits (an interaction, a curve), the committee disagrees and runs go there.

References
----------
Seung, H. S., Opper, M., Sompolinsky, H. (1992), Query by committee, *Proc. COLT '92*.
Burbidge, R., Rowland, J. J., King, R. D. (2007), Active learning for regression based on query by committee,
*IDEAL 2007*, LNCS 4881.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .iopt import iopt_order
from .matrix import RIDGE, iopt_gain, leverage, ridge, with_intercept, with_pairs

if TYPE_CHECKING:
    import numpy as np


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
        preds.append(z @ ridge(z[idx], target, RIDGE))
        preds.append(zp @ ridge(zp[idx], target, 1e-2 * len(idx)))
    disagreement = np.var(np.array(preds), axis=0)
    gain = iopt_gain(z, chosen)
    score = disagreement / (disagreement.max() or 1.0) * gain / (gain.max() or 1.0)
    before = leverage(z, chosen)
    picks: list[int] = []
    why: list[dict[str, float]] = []
    open_ = len(x) - len(chosen)
    for _ in range(min(batch, open_)):
        s = score * (leverage(z, chosen + picks) / np.maximum(before, 1e-12) if picks else 1.0)
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


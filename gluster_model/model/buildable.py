"""Which combinations of model inputs describe a volume that can be built.

Sampling each input independently from its measured marginal (as variance-based importance does) mixes values
that never go together: replica 3 on 2 servers, a distributed volume with 2 copies. ``buildable`` says which
rows are possible; ``allowed`` gives, for one input, the levels compatible with the inputs fixed before it, so a
sampler can draw the dependent inputs from their measured levels *conditional* on the others (every sample
buildable by construction, see ``importance.from_unit``).

Rules (a brick per server, as the plans build volumes):

- ``replica`` and ``disperse`` copies need at least as many servers;
- ``layout`` and the copy counts agree: distribute has one copy and no disperse set, replicate 2 or more
  copies, disperse a set of 3 or more bricks.

References
----------
Mara, T. A., Tarantola, S. (2012), "Variance-based sensitivity indices for models with dependent inputs",
*Reliab. Eng. Syst. Saf.* 107, 115–121 (sampling dependent inputs through conditional distributions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

# Inputs drawn conditionally on those before them, in this order; every other input is independent.
DEPENDENT = ("layout", "replica", "disperse")


def _number(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v == v else None


def row_ok(row: Mapping[str, Any]) -> bool:
    """Whether one configuration (inputs absent from ``row`` are unconstrained) can be built."""
    servers, replica, disperse = (_number(row.get(k)) for k in ("servers", "replica", "disperse"))
    layout = row.get("layout")
    if servers is not None and any(c is not None and c > servers for c in (replica, disperse)):
        return False
    if layout == "distribute" and ((replica is not None and replica > 1) or (disperse is not None and disperse > 0)):
        return False
    if layout == "replicate" and replica is not None and replica < 2:
        return False
    if layout == "disperse" and disperse is not None and disperse < 3:
        return False
    return True


def buildable(frame: pd.DataFrame) -> np.ndarray:
    """One boolean per row: can this configuration be built?"""
    import numpy as np

    columns = [c for c in ("servers", "replica", "disperse", "layout") if c in frame]
    return np.array([row_ok(dict(zip(columns, values))) for values in frame[columns].itertuples(index=False)],
                    dtype=bool)


def allowed(feature: str, levels: Any, fixed: Mapping[str, Any], later: Mapping[str, Any]) -> np.ndarray:
    """Mask over ``levels`` of ``feature``: those that make a buildable row with the inputs ``fixed`` so far,
    for at least one choice of the dependent inputs still to draw (``later``: their measured levels)."""
    import itertools

    import numpy as np

    names = list(later)
    combos = list(itertools.product(*[list(dict.fromkeys(later[n])) for n in names]))  # [()] when none is left
    out = []
    for level in levels:
        row = {**fixed, feature: level}
        out.append(any(row_ok({**row, **dict(zip(names, combo))}) for combo in combos))
    return np.asarray(out, dtype=bool)

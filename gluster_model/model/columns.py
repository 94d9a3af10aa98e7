"""Column access for DataFrames and plain mappings alike: fitting passes DataFrames, `glmodel predict` passes a
dict of equal-length lists so it never imports pandas."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

Columns = Any  # a DataFrame, or a mapping of column name -> equal-length sequence


def n_rows(frame: Columns) -> int:
    shape = getattr(frame, "shape", None)
    if shape is not None:
        return int(shape[0])
    return len(next(iter(frame.values()))) if len(frame) else 0


def numbers(frame: Columns, name: str) -> np.ndarray:
    """A column as float (NaN for missing)."""
    import numpy as np

    col = frame[name]
    if hasattr(col, "to_numpy"):
        out: np.ndarray = col.to_numpy(dtype=float, na_value=np.nan)
        return out
    return np.asarray(col, dtype=float)


def strings(frame: Columns, name: str) -> np.ndarray:
    """A column as str objects; pandas columns go through factorize, which is fast for categorical/arrow data."""
    import numpy as np

    col = frame[name]
    if hasattr(col, "factorize"):
        codes, uniques = col.factorize()
        names = np.array([str(u) for u in uniques] + [""], dtype=object)
        out: np.ndarray = names[codes]  # code -1 (missing) picks the trailing ""
        return out
    return np.asarray([str(v) for v in col], dtype=object)

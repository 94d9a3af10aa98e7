"""Which features a model uses, their types and measured ranges, and how a frame becomes a design matrix.

Everything here is numpy/pandas-free at import time and cheap, because ``glmodel predict`` uses it to encode
scenarios from a saved model without loading the modelling stack.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

Kind = Literal["numeric", "bool", "categorical"]
SIZE_FEATURES = frozenset({"file_size", "record_size", "cache_size", "shard_block_size"})
CATEGORICAL_FEATURES = frozenset({"layout", "sync", "base_filesystem", "regime"})
BOOL_FEATURES = frozenset({"shard", "write_behind", "read_ahead", "io_cache", "quick_read", "md_cache"})
WRITE_METRICS = frozenset({"write", "rewrite", "random_write"})


@dataclass(frozen=True)
class Feature:
    """One model input: its kind, and what was measured (levels, or range and distinct values)."""

    name: str
    kind: Kind
    levels: tuple[str, ...] = ()  # categorical: measured levels, the first is the reference
    low: float | None = None  # numeric/bool: measured range
    high: float | None = None
    values: tuple[float, ...] = ()  # numeric/bool: the distinct measured values

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "levels": list(self.levels), "low": self.low,
                "high": self.high, "values": list(self.values)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Feature:
        low, high = d.get("low"), d.get("high")
        return cls(d["name"], d["kind"], tuple(d.get("levels", ())), None if low is None else float(low),
                   None if high is None else float(high), tuple(float(v) for v in d.get("values", ())))


@dataclass(frozen=True)
class Schema:
    """The features of one metric's models, and the candidates left out with the reason."""

    metric: str
    features: tuple[Feature, ...]
    dropped: tuple[tuple[str, str], ...] = field(default=())

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.features]

    def feature(self, name: str) -> Feature:
        for f in self.features:
            if f.name == name:
                return f
        raise KeyError(name)

    def to_json(self) -> dict[str, Any]:
        return {"metric": self.metric, "features": [f.to_json() for f in self.features],
                "dropped": [list(d) for d in self.dropped]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Schema:
        return cls(d["metric"], tuple(Feature.from_json(f) for f in d["features"]),
                   tuple((a, b) for a, b in d.get("dropped", ())))


def kind_of(name: str) -> Kind:
    if name in CATEGORICAL_FEATURES:
        return "categorical"
    if name in BOOL_FEATURES:
        return "bool"
    return "numeric"


def schema_from_frame(frame: pd.DataFrame, candidates: Sequence[str], metric: str) -> Schema:
    """Keep the candidates that vary in the rows with this metric; say why the others are out."""
    rows = frame[frame[metric].notna()] if metric in frame else frame.iloc[0:0]
    kept: list[Feature] = []
    dropped: list[tuple[str, str]] = []
    for name in candidates:
        if name not in rows or rows[name].isna().all():
            dropped.append((name, "not in the data"))
            continue
        col = rows[name]
        if col.isna().any():
            dropped.append((name, f"missing in {int(col.isna().sum())} row(s)"))
            continue
        kind = kind_of(name)
        if kind == "categorical":
            counts = col.astype(str).value_counts()
            if len(counts) < 2:
                dropped.append((name, f"constant ({counts.index[0]})"))
                continue
            # The most frequent level is the reference, so dummies compare against the best-measured case.
            levels = tuple(sorted(counts.index, key=lambda lv: (-counts[lv], lv)))
            kept.append(Feature(name, kind, levels=levels))
        else:
            values = sorted({float(v) for v in col.astype(float)})
            if len(values) < 2:
                dropped.append((name, f"constant ({values[0]:g})"))
                continue
            kept.append(Feature(name, kind, low=values[0], high=values[-1], values=tuple(values)))
        twin = next((f.name for f in kept[:-1] if _one_to_one(rows[f.name], col)), None)
        if twin is not None:
            kept.pop()
            dropped.append((name, f"identical to {twin} in these data"))
    return Schema(metric, tuple(kept), tuple(dropped))


def _one_to_one(a: pd.Series, b: pd.Series) -> bool:
    """Each value of ``a`` goes with one value of ``b`` and back: the two features carry the same information."""
    import numpy as np
    import pandas as pd

    ca, ua = pd.factorize(a)
    cb, ub = pd.factorize(b)
    pairs = np.unique(ca.astype(np.int64) * (len(ub) + 1) + cb)
    return len(pairs) == len(ua) == len(ub)


# -- derived, physically motivated features -------------------------------------------------------------------

def write_amplification(frame: pd.DataFrame) -> pd.Series:
    """Bytes sent to servers per byte written: replica copies, or disperse/(disperse-redundancy)."""
    import numpy as np
    import pandas as pd

    amp = frame["replica"].astype(float) if "replica" in frame else 1.0
    if "disperse" in frame and "redundancy" in frame:
        d = frame["disperse"].astype(float)
        r = frame["redundancy"].astype(float)
        amp = np.where(d > 0, d / (d - r).where(d - r > 0, 1), amp)
    return pd.Series(amp, index=frame.index, dtype=float)


def bottleneck_mbps(frame: pd.DataFrame, metric: str) -> pd.Series:
    """The slowest stage a byte crosses, in MB/s: client links, server links, or server disks.

    Writes: client links carry every copy (÷ amplification), disks store every copy; reads come from one copy.
    NaN where a measured network or disk figure is missing.
    """
    import numpy as np

    write = metric in WRITE_METRICS
    net = frame["network_gbps"].astype(float) * 1000 / 8 if "network_gbps" in frame else np.nan
    disk_col = "disk_write_mbps" if write else "disk_read_mbps"
    disk = frame[disk_col].astype(float) if disk_col in frame else np.nan
    servers = frame["servers"].astype(float)
    clients = frame["clients"].astype(float)
    amp = write_amplification(frame) if write else 1.0
    stages = np.vstack([np.broadcast_to(x, len(frame)).astype(float) for x in
                        (net * clients / amp, net * servers, disk * servers / amp)])
    import pandas as pd

    return pd.Series(np.min(stages, axis=0), index=frame.index)


def cache_ratio(frame: pd.DataFrame) -> pd.Series:
    """Data each client touches over its RAM: below 1 the page cache can hold it (cached regime)."""
    per_client = frame["file_size"].astype(float) * frame["threads"].astype(float) / frame["clients"].astype(float)
    return per_client / (frame["client_ram_gb"].astype(float) * 2**30)


def _cache_ratio(frame: pd.DataFrame, metric: str) -> pd.Series:
    return cache_ratio(frame)


DERIVED: dict[str, Callable[[pd.DataFrame, str], pd.Series]] = {"bottleneck_mbps": bottleneck_mbps,
                                                                  "cache_ratio": _cache_ratio}


def with_derived(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The frame plus every derived feature its columns allow (a missing input leaves the feature out)."""
    out = frame.copy()
    for name, fn in DERIVED.items():
        try:
            out[name] = fn(frame, metric)
        except KeyError:
            continue
    return out


# -- encoding -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Term:
    """One design-matrix column: a feature (optionally log2), a categorical level's dummy, or a product."""

    kind: Literal["num", "log2", "dummy", "product"]
    feature: str = ""
    level: str = ""
    of: tuple[int, int] = (0, 0)  # product: indices of two earlier terms

    def label(self, terms: Sequence[Term]) -> str:
        if self.kind == "num":
            return self.feature
        if self.kind == "log2":
            return f"log2({self.feature})"
        if self.kind == "dummy":
            return f"{self.feature}[{self.level}]"
        return f"{terms[self.of[0]].label(terms)}×{terms[self.of[1]].label(terms)}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "feature": self.feature, "level": self.level, "of": list(self.of)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Term:
        return cls(d["kind"], d.get("feature", ""), d.get("level", ""), tuple(d.get("of", (0, 0))))


def main_effect_terms(schema: Schema, log_sizes: bool = False) -> list[Term]:
    """One column per numeric/bool feature, dummies for categories. ``log_sizes``: log2 of every positive
    numeric feature (sizes, speeds, counts), so products are power laws and stay well conditioned."""
    terms: list[Term] = []
    for f in schema.features:
        if f.kind == "categorical":
            terms.extend(Term("dummy", f.name, level=lv) for lv in f.levels[1:])
        elif log_sizes and f.kind == "numeric" and (f.low or 0) > 0:
            terms.append(Term("log2", f.name))
        else:
            terms.append(Term("num", f.name))
    return terms


def design_matrix(frame: pd.DataFrame, terms: Sequence[Term]) -> np.ndarray:
    """Rows × terms, float; no intercept column (learners add it)."""
    import numpy as np

    cols: list[np.ndarray] = []
    for t in terms:
        if t.kind == "num":
            cols.append(frame[t.feature].astype(float).to_numpy())
        elif t.kind == "log2":
            cols.append(np.log2(frame[t.feature].astype(float).to_numpy()))
        elif t.kind == "dummy":
            cols.append((np.asarray(frame[t.feature], dtype=object).astype(str) == t.level).astype(float))
        else:
            cols.append(cols[t.of[0]] * cols[t.of[1]])
    return np.column_stack(cols) if cols else np.empty((len(frame), 0))

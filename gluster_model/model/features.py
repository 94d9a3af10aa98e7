"""Which features a model uses, their types and measured ranges, and how a frame becomes a design matrix.

Gluster's physics (stages, copies, placement) is in physics.py, column access in columns.py. Everything here is
numpy/pandas-free at import time and cheap, because ``glmodel predict`` uses it to encode
scenarios from a saved model without loading the modelling stack.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from .columns import Columns as Columns, n_rows as n_rows, numbers as numbers, strings as strings
from .physics import bottleneck_mbps
from ..hardware.settings import MEASURED_INPUTS, moved_by
from ..store.identity import SETTING_PREFIX, setting_from_columns
from ..gluster.tunables import ADMIN_TUNABLES, TUNABLE_LIST

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

C = TypeVar("C")

Kind = Literal["numeric", "bool", "categorical"]
# One model input's value (a translator on or off, a size in bytes, a count, a measured capacity, a level's
# name) and a configuration as the models are asked it: input name -> value.
InputValue = bool | int | float | str
Inputs = dict[str, InputValue]
SIZE_FEATURES = frozenset({"file_size", "record_size", "cache_size", "shard_block_size",
                           *(t.name for t in TUNABLE_LIST if t.kind == "size")})
CATEGORICAL_FEATURES = frozenset({"layout", "sync", "base_filesystem", "regime",
                                  *(t.name for t in TUNABLE_LIST if t.kind == "choice")})
BOOL_FEATURES = frozenset({"shard", *(t.name for t in TUNABLE_LIST if t.kind in ("bool", "group"))})
MAX_LEVEL_CHARS = 200  # a category (a layout, a filesystem) is a word, not a document
# Inputs a cluster *has* rather than is given: its hardware, measured once per campaign (host facts and
# baselines), so constant within a campaign. A question about them is judged against the hardware settings
# actually measured, as points (model/domain.py), not input by input.
HARDWARE_INPUTS = (*MEASURED_INPUTS, "base_filesystem")
# The hardware setting names that move each measured input (``hardware.settings.KNOB_LIST``: a brick's backing
# and an IOPS limit move the disk figures as a rate limit does).
SET_BY: dict[str, tuple[str, ...]] = {m: moved_by(m) for m in HARDWARE_INPUTS if moved_by(m)}

# What a person reads for each input (terminal and report); JSON and CSV keep the raw names.
LABELS: dict[str, str] = {
    "network_gbps": "network link (Gbit/s)", "network_rtt_ms": "network round trip (ms)",
    "disk_read_mbps": "disk read (MB/s)",
    "disk_write_mbps": "disk write (MB/s)", "disk_randread_iops": "disk random read (IOPS)",
    "disk_randwrite_iops": "disk random write (IOPS)", "client_ram_gb": "client RAM (GB)", "cpu_score": "CPU score (SHA-256 MB/s)",
    "base_filesystem": "brick filesystem", "servers": "servers", "clients": "clients", "replica": "replicas",
    "disperse": "disperse bricks", "redundancy": "redundancy bricks", "shard": "sharding",
    "shard_block_size": "shard block size", "file_size": "file size", "record_size": "record size",
    "cache_size": "io-cache size", "threads": "threads per client", "layout": "volume layout", "sync": "sync mode",
    "write_behind": "write-behind", "read_ahead": "read-ahead", "io_cache": "io-cache", "quick_read": "quick-read",
    "md_cache": "md-cache", "regime": "cache regime", "bottleneck_mbps": "slowest stage (MB/s)",
    **{t.name: t.option if t.kind != "group" else f"{t.option} group" for t in ADMIN_TUNABLES},
}


def label(name: str) -> str:
    """An input's name for people, with its unit; an unknown name as it is."""
    return LABELS.get(name, name)


def show_value(name: str, v: Any) -> str:
    """An input's value as people read it: on/off, sizes in KB/MB/GB, four significant digits."""
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, (int, float)) and name in SIZE_FEATURES and v >= 1024:
        for unit, mult in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
            if v >= mult:
                return f"{v / mult:g}{unit}"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def readable(text: str, prose: bool = False) -> str:
    """A model term with every input name in it replaced by its label (``log2(network_gbps)`` →
    ``log2(network link (Gbit/s))``); in ``prose`` only names no sentence uses as words (those with ``_``)."""
    import re

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        return LABELS.get(word, word) if not prose or "_" in word else word
    return re.sub(r"[a-z][a-z0-9_]*", swap, text)


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
        if d["kind"] not in ("numeric", "bool", "categorical"):
            raise ValueError(f"feature {str(d['name'])[:40]!r} has kind {str(d['kind'])[:40]!r} "
                             "(numeric, bool or categorical)")
        if any(len(str(level)) > MAX_LEVEL_CHARS for level in d.get("levels", ())):
            raise ValueError(f"feature {str(d['name'])[:40]!r} has a level longer than {MAX_LEVEL_CHARS} characters")
        low, high = d.get("low"), d.get("high")
        return cls(d["name"], d["kind"], tuple(d.get("levels", ())), None if low is None else float(low),
                   None if high is None else float(high), tuple(float(v) for v in d.get("values", ())))


# How a dropped input the plan's settings held (its spread only the cluster's noise) is marked in
# ``Schema.dropped``: verify never builds such an input (verify.build.targets).
HELD_BY_SETTINGS = "held at"


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


def held_by_design(rows: pd.DataFrame) -> dict[str, str]:
    """Measured hardware inputs that the design never moved, with the value every setting held them at: where
    the rows come from two or more hardware settings (the ``setting_*`` columns the store gives each row,
    ``store.identity``) of one cluster and no setting names a value of its own for the input (a bottleneck plan that varies links
    and disks leaves the CPU as it is). Such an input still varies from campaign to campaign, by measurement noise alone
    (a CPU score measured on a busy machine: 191-342 at one CPU): left in, its slope is fitted to the noise and
    moves every prediction whose own measurement differs, so it is left out."""
    if "campaign" not in rows or rows.empty:
        return {}
    if "cluster" in rows and rows["cluster"].astype(str).nunique() > 1:
        return {}  # campaigns of two clusters: their hardware differs whatever the settings say
    columns = [c for c in rows.columns if str(c).startswith(SETTING_PREFIX)]
    per_campaign = rows.drop_duplicates("campaign")[columns].to_dict("records")
    settings = [setting_from_columns(r) for r in per_campaign]
    if len({tuple(sorted(s.items())) for s in settings}) < 2:
        return {}
    out: dict[str, str] = {}
    for name, keys in SET_BY.items():
        held = {tuple(s.get(k) for k in keys) for s in settings}
        if len(held) == 1:
            given = [v for v in next(iter(held)) if v]
            out[name] = given[0] if given else "the cluster's own"
    return out


def schema_from_frame(frame: pd.DataFrame, candidates: Sequence[str], metric: str) -> Schema:
    """Keep the candidates that vary in the rows with this metric; say why the others are out (constant,
    missing, held fixed by the design, a combination of the others)."""
    import numpy as np

    rows = frame[frame[metric].notna()] if metric in frame else frame.iloc[0:0]
    fixed = held_by_design(rows)
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
            values = sorted(set(np.unique(col.to_numpy(dtype=float)).tolist()))
            if len(values) < 2:
                dropped.append((name, f"constant ({show_value(name, values[0])})"))
                continue
            if name in fixed:
                dropped.append((name, f"{HELD_BY_SETTINGS} {fixed[name]} by every hardware setting: its spread "
                                      f"({values[0]:.3g}-{values[-1]:.3g}) is measurement noise"))
                continue
            kept.append(Feature(name, kind, low=values[0], high=values[-1], values=tuple(values)))
    independent, aliased = _independent(rows, kept)
    return Schema(metric, tuple(independent), tuple(dropped + aliased))


# A column whose centred, unit-length form is reproduced by earlier columns to within this residual norm is a
# linear combination of them: exactly below 1e-8 (rounding leaves ~1e-15), and to within measurement noise below
# 0.03, where at least 99.9% of its variance is the combination (a VIF above 1000: its coefficient's standard
# error over 30 times what it would be alone) and no fit can tell its effect from theirs; kept, such a pair gets
# large opposing coefficients, and importance sampled input by input turns them into spurious shares. E.g. disk
# read and write rates set by one throttle and measured by fio 0.1% apart (239.5 and 239.3 MB/s) leave 0.0013,
# 3% apart on a host whose fio writes slower (239 and 232) 0.022; Longley's data, the classic near-collinear
# test (condition number ~10^7 before centring), leave 0.036 at least and stay.
DEPENDENCE_TOL = 1e-8
NEAR_DEPENDENCE_TOL = 0.03


def _independent(rows: pd.DataFrame, features: list[Feature]) -> tuple[list[Feature], list[tuple[str, str]]]:
    """Keep features in order while each adds to the rank of the centred design; say how the others depend.

    A feature is dropped only when its columns (a numeric or on/off column, or a categorical's dummies) are a
    linear combination of the kept ones, exactly or to within measurement noise (see NEAR_DEPENDENCE_TOL), e.g.
    a disk speed that the design always varied in step with the network. Collinear features short of that stay
    (their VIF is in the diagnostics). Tests the residual of a least-squares projection rather than each pair's
    values, so continuous inputs whose values are all distinct are never mistaken for copies of each other.
    """
    import numpy as np

    kept: list[Feature] = []
    basis: list[np.ndarray] = []  # orthonormal columns spanning the kept features' centred columns
    names_of: list[str] = []  # the feature each raw kept column belongs to
    raw: list[np.ndarray] = []
    dropped: list[tuple[str, str]] = []
    for feature in features:
        cols = _centred_columns(rows, feature)
        new_basis = list(basis)
        dependent = False
        exact = True
        for col in cols:
            v = col / np.linalg.norm(col)
            for q in new_basis:  # Gram-Schmidt, twice for stability
                v = v - (q @ v) * q
            for q in new_basis:
                v = v - (q @ v) * q
            norm = float(np.linalg.norm(v))
            if norm < NEAR_DEPENDENCE_TOL:
                dependent, exact = True, norm < DEPENDENCE_TOL
                break
            new_basis.append(v / norm)
        if dependent:
            dropped.append((feature.name, _combination(feature, cols, raw, names_of, exact)))
            continue
        kept.append(feature)
        basis = new_basis
        raw += cols
        names_of += [feature.name] * len(cols)
    return kept, dropped


def _centred_columns(rows: pd.DataFrame, feature: Feature) -> list[np.ndarray]:
    import numpy as np

    if feature.kind == "categorical":
        text = rows[feature.name].astype(str).to_numpy()
        cols = [(text == level).astype(float) for level in feature.levels[1:]]
    else:
        cols = [rows[feature.name].to_numpy(dtype=float)]
    return [c - c.mean() for c in cols if np.ptp(c) > 0]


def _combination(feature: Feature, cols: list[np.ndarray], raw: list[np.ndarray], names_of: list[str],
                 exact: bool = True) -> str:
    """'varied together with X, Y in these data (name = 2·X − 0.5·Y + c)', in words a user can check; '≈' and
    'to within measurement noise' when the combination is not exact."""
    import numpy as np

    if not raw:
        return "constant in these data"
    design = np.column_stack(raw)
    coef, *_ = np.linalg.lstsq(design, cols[0], rcond=None)
    scale = np.abs(coef) * np.linalg.norm(design, axis=0) / max(float(np.linalg.norm(cols[0])), 1e-300)
    terms = [(names_of[i], coef[i]) for i in range(len(coef)) if scale[i] > 1e-6]
    partners = ", ".join(dict.fromkeys(n for n, _ in terms))
    if feature.kind == "categorical" or len(set(names_of)) != len(names_of):
        return (f"varied together with {partners} in these data"
                f"{'' if exact else ', to within measurement noise'} (a linear combination of them)")
    formula = " ".join(f"{'+' if c >= 0 else '-'} {abs(c):.4g}·{n}" for n, c in terms).lstrip("+ ")
    if exact:
        return f"varied together with {partners} in these data ({feature.name} = {formula} + c)"
    return (f"varied together with {partners} in these data, to within measurement noise ({feature.name} ≈ "
            f"{formula} + c)")


# -- derived, physically motivated features (the physics itself: physics.py) -------------------------------

# The physical model's input besides the raw features. The placement loss acts through it only: as a term
# of its own it took the sign that undid it inside the bottleneck, explaining nothing.
DERIVED: dict[str, Callable[[Columns, str], np.ndarray]] = {"bottleneck_mbps": bottleneck_mbps}
# The raw columns the derived features read (so a model file keeps their measured values for `predict`).
DERIVED_INPUTS = ("network_gbps", "disk_read_mbps", "disk_write_mbps", "servers", "clients", "replica",
                  "disperse", "redundancy", "threads", "read_hash_mode", "record_size", "disk_randread_iops",
                  "disk_randwrite_iops")


def with_derived(frame: C, metric: str) -> C:
    """The frame plus every derived feature its columns allow (a missing input leaves the feature out).

    A DataFrame comes back as a new DataFrame, a mapping as a new dict.
    """
    extra: dict[str, np.ndarray] = {}
    for name, fn in DERIVED.items():
        try:
            extra[name] = fn(frame, metric)
        except KeyError:
            continue
    if hasattr(frame, "assign"):
        return frame.assign(**extra)  # type: ignore[no-any-return]
    return {**frame, **extra}  # type: ignore[return-value,dict-item]


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


def design_matrix(frame: Columns, terms: Sequence[Term]) -> np.ndarray:
    """Rows × terms, float; no intercept column (learners add it)."""
    import numpy as np

    out = np.empty((n_rows(frame), len(terms)))
    text: dict[str, np.ndarray] = {}  # each categorical converted once, whatever its number of dummies
    for j, t in enumerate(terms):
        if t.kind == "num":
            out[:, j] = numbers(frame, t.feature)
        elif t.kind == "log2":
            out[:, j] = np.log2(numbers(frame, t.feature))
        elif t.kind == "dummy":
            if t.feature not in text:
                text[t.feature] = strings(frame, t.feature)
            out[:, j] = text[t.feature] == t.level
        else:
            out[:, j] = out[:, t.of[0]] * out[:, t.of[1]]
    return out

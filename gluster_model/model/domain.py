"""What a model has seen: each input's measured range or levels, the measured configurations, and how far a new
configuration lies from them.

A point can sit inside every per-feature range and still be far from the data (two factors that were only ever
varied together, or corners a design never visited): *hidden extrapolation*. So besides the ranges, a new
configuration is placed against the measured ones in two parts.

Its hardware (``HARDWARE_INPUTS``: link, disks, RAM, CPU, brick filesystem) is constant within a campaign, so a
dataset holds only a handful of hardware *settings*, however many runs it has. Ranges per input are far too
kind to so few points (12 settings in 4 dimensions leave most of their bounding box empty), so the hardware is
judged as a point: inside the convex hull of the measured settings (within ``HULL_TOL``), i.e. a mix of
hardware that was measured, or outside it.

Its workload and volume inputs (servers, clients, replicas, file size, ...) vary within every campaign and are
judged by three checks against the measured configurations:

1. the span: a move in a direction the measured configurations never moved in (inputs always varied together);
2. the ellipsoid: its Mahalanobis distance from the measured configurations' centre against the largest among
   the measured configurations themselves (the regressor-variable hull of Montgomery et al.);
3. the nearest measured configuration: its distance against the largest nearest-neighbour distance among the
   measured configurations (the design's widest gap), which catches holes inside the ellipsoid.

So a measured hardware setting asked with any workload inside the workload region is not an extrapolation, and
a combination of fast link and fast disks that no setting had is one.

Distances use unit-free coordinates: a numeric input on log2 scale when it is positive (sizes, speeds and counts
act multiplicatively) divided by its measured span, a switch as 0/1, a category as a one-hot vector scaled so
two different levels are 1 apart. Building a domain needs pandas; using one needs numpy only, so
`glmodel predict` stays light.

References
----------
Montgomery, D. C., Peck, E. A., Vining, G. G. (2012), *Introduction to Linear Regression Analysis*, 5th ed.,
Wiley, §3.8 (hidden extrapolation in multiple regression).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from .features import HARDWARE_INPUTS, Columns, Feature, Inputs, kind_of, label, n_rows, numbers, strings

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

EXACT = 1e-9  # a distance this small is the measured configuration itself
SPAN_TOL = 1e-6  # an off-span part this small is rounding
# Hardware within 2% of each input's measured (log) span of a mix of measured settings is among them: a setting
# is measured again each campaign, so a nominal 1 Gbit/s asked as 0.99 is the 0.998 that was measured.
HULL_TOL = 0.02


@dataclass(frozen=True)
class Domain:
    """The measured region of one metric's data."""

    inputs: tuple[Feature, ...]  # every raw input a model of the metric reads; constant ones have one value
    reference: Inputs  # a measured configuration near the middle of the data (all inputs)
    configs: dict[str, list[Any]]  # measured configurations over the varied inputs, column-wise
    trials: list[int]  # trials behind each configuration
    means: list[float]  # the metric's mean over each configuration's trials (MB/s)
    radius: float  # largest nearest-neighbour distance between measured workloads (or configurations)
    # The distinct hardware settings measured, column-wise over the varied hardware inputs ({} when the
    # hardware never varied, or for a model file written before settings were kept).
    settings: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def varied(self) -> list[Feature]:
        return [f for f in self.inputs if _varies(f)]

    @property
    def hardware(self) -> list[Feature]:
        """Varied inputs judged as hardware settings (against the hull of the measured ones)."""
        return [f for f in self.varied if f.name in self.settings]

    @property
    def workload(self) -> list[Feature]:
        """Varied inputs judged by span, ellipsoid and nearest neighbour."""
        return [f for f in self.varied if f.name not in self.settings]

    @property
    def n_settings(self) -> int:
        return len(next(iter(self.settings.values()), []))

    def input(self, name: str) -> Feature | None:
        return next((f for f in self.inputs if f.name == name), None)

    def to_json(self) -> dict[str, Any]:
        return {"inputs": [f.to_json() for f in self.inputs], "reference": self.reference,
                "configs": self.configs, "trials": self.trials, "means": self.means, "radius": self.radius,
                "settings": self.settings}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Domain:
        settings = {str(k): list(v) for k, v in d.get("settings", {}).items()}
        if len({len(v) for v in settings.values()}) > 1:
            raise ValueError("hardware settings of unequal length")
        return cls(tuple(Feature.from_json(f) for f in d["inputs"]), dict(d["reference"]),
                   {k: list(v) for k, v in d["configs"].items()}, [int(t) for t in d["trials"]],
                   [float(m) for m in d["means"]], float(d["radius"]), settings)

    @cached_property
    def _coords(self) -> np.ndarray:
        return encode(self.configs, self.varied)

    @cached_property
    def _workloads(self) -> np.ndarray:
        """The distinct measured workloads, in unit-free coordinates."""
        import numpy as np

        return np.unique(encode(self.configs, self.workload), axis=0) if self.workload else np.zeros((1, 0))

    @cached_property
    def _settings(self) -> np.ndarray:
        return encode(self.settings, self.hardware)

    @cached_property
    def _hull(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Centre, principal directions the workloads span, their variances, the largest Mahalanobis distance²."""
        import numpy as np

        x = self._workloads
        centre = x.mean(axis=0)
        _, sv, vt = np.linalg.svd(x - centre, full_matrices=False)
        var = sv**2 / max(len(x), 1)
        keep = var > 1e-9 * max(float(var.max(initial=0.0)), 1e-12)
        basis, var = vt[keep], var[keep]
        h = (((x - centre) @ basis.T) ** 2 / var).sum(axis=1)
        return centre, basis, var, float(h.max(initial=0.0))

    def place(self, frame: Columns) -> Placement:
        """Where each row of ``frame`` lies against the measured configurations (see the module docstring)."""
        import numpy as np

        n = n_rows(frame)
        varied = self.varied
        if not varied or len(self.trials) < 2:
            zero = np.zeros(n)
            return Placement(zero, zero, zero, np.zeros(n, dtype=int), np.ones(n, dtype=bool),
                             [[] for _ in range(n)], zero, zero)
        x = encode(frame, varied)
        finite = np.all(np.isfinite(x), axis=1)
        dist, index = _nearest(np.where(np.isfinite(x), x, 0.0), self._coords)
        wl = self.workload
        if wl:
            w = encode(frame, wl)
            w = np.where(np.isfinite(w), w, 0.0)
            centre, basis, var, _ = self._hull
            dev = w - centre
            proj = dev @ basis.T
            off = dev - proj @ basis
            names = coordinate_names(wl)
            involved = []
            for row in off:
                big = np.abs(row) > 0.2 * np.abs(row).max() if np.abs(row).max() > 1e-6 else np.zeros(len(row), bool)
                involved.append(list(dict.fromkeys(nm for nm, b in zip(names, big) if b)))
            off_span, h = np.linalg.norm(off, axis=1), (proj**2 / var).sum(axis=1)
            wdist = _nearest(w, self._workloads)[0]
        else:
            off_span, h, wdist, involved = np.zeros(n), np.zeros(n), np.zeros(n), [[] for _ in range(n)]
        gap = np.zeros(n)
        if self.hardware:
            hw = encode(frame, self.hardware)
            gap = hull_gap(np.where(np.isfinite(hw), hw, 0.0), self._settings)
        return Placement(off_span, h, dist, index, finite, involved, wdist, gap)

    @property
    def _h_max(self) -> float:
        return self._hull[3] if self.workload and len(self.trials) >= 2 else 0.0

    def outside(self, frame: Columns) -> list[list[str]]:
        """Per row, why it lies outside the measured region (span, ellipsoid, nearest neighbour); [] if inside."""
        return self.reasons(self.place(frame))

    def reasons(self, at: Placement) -> list[list[str]]:
        """``outside`` for rows already placed."""
        h_max = self._h_max
        out: list[list[str]] = []
        for i in range(len(at.dist)):
            why: list[str] = []
            if not at.finite[i]:
                out.append(["a value that cannot be placed among the measured ones (zero or negative)"])
                continue
            if at.gap[i] > HULL_TOL:  # the hardware part, and then the workload part: either, both or neither
                why.append(f"hardware never measured: neither one of the {self.n_settings} measured hardware "
                           f"settings nor a mix of them (distance {at.gap[i]:.2f})")
            if at.off_span[i] > SPAN_TOL:
                why.append(f"moves {', '.join(label(n) for n in at.involved[i])} in a way the data never did "
                           "(they were never varied independently)")
            elif at.h[i] > h_max * (1 + 1e-6) + 1e-9:
                why.append(f"a workload outside the region the measured ones span (Mahalanobis h = {at.h[i]:.2f}; "
                           f"measured ones reach {h_max:.2f})")
            elif at.wdist[i] > self.radius + EXACT:
                why.append(f"a workload far from every measured one (distance {at.wdist[i]:.2f}; measured ones "
                           f"are at most {self.radius:.2f} apart)")
            out.append(why)
        return out

    def further_out(self, frame: Columns, than: int = 0) -> list[bool]:
        """Rows lying further outside the measured region than row ``than`` does, by any of the three checks
        (for a row ``than`` inside the region: rows outside it)."""
        at = self.place(frame)
        h_lim = max(self._h_max, float(at.h[than])) * (1 + 1e-6) + 1e-9
        d_lim = max(self.radius, float(at.wdist[than])) + EXACT
        s_lim = max(SPAN_TOL, float(at.off_span[than]) + SPAN_TOL)
        g_lim = max(HULL_TOL, float(at.gap[than]) + 1e-9)
        return [bool(not at.finite[i] or at.off_span[i] > s_lim or at.h[i] > h_lim or at.wdist[i] > d_lim
                     or at.gap[i] > g_lim) for i in range(len(at.dist))]


@dataclass(frozen=True)
class Placement:
    off_span: np.ndarray  # length of the part of each row's workload offset the measured ones never moved in
    h: np.ndarray  # Mahalanobis distance² of the workload from the measured ones' centre, within their span
    dist: np.ndarray  # to the nearest measured configuration (every varied input)
    index: np.ndarray  # which one
    finite: np.ndarray  # False where a value cannot be placed (log of zero)
    involved: list[list[str]]  # inputs carrying the off-span part
    wdist: np.ndarray  # workload part: to the nearest measured workload
    gap: np.ndarray  # hardware part: L∞ distance to the convex hull of the measured settings (0 inside)


def _varies(f: Feature) -> bool:
    return len(f.levels) > 1 if f.kind == "categorical" else len(f.values) > 1


def encode(frame: Columns, features: Sequence[Feature]) -> np.ndarray:
    """Unit-free coordinates of each row (see the module docstring); NaN where a value cannot be placed."""
    import numpy as np

    cols: list[np.ndarray] = []
    for f in features:
        if f.kind == "categorical":
            text = strings(frame, f.name)
            cols.extend((text == lv).astype(float) / math.sqrt(2) for lv in f.levels)
            continue
        x = numbers(frame, f.name)
        lo, hi = float(f.low if f.low is not None else 0.0), float(f.high if f.high is not None else 1.0)
        if f.kind == "numeric" and lo > 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                x, lo, hi = np.log2(x), math.log2(lo), math.log2(hi)
        cols.append((x - lo) / (hi - lo) if hi > lo else np.zeros_like(x))
    return np.column_stack(cols)


def coordinate_names(features: Sequence[Feature]) -> list[str]:
    """The feature behind each column of ``encode``."""
    return [f.name for f in features for _ in (f.levels if f.kind == "categorical" else (0,))]


def hull_gap(points: np.ndarray, vertices: np.ndarray) -> np.ndarray:
    """L∞ distance of each point to the convex hull of ``vertices`` (0 inside), one linear programme each:
    minimise t over λ ≥ 0, Σλ = 1, |V'λ − p| ≤ t coordinate-wise (HiGHS). A point equal to a vertex is 0
    without solving."""
    import numpy as np

    out = np.zeros(len(points))
    if vertices.shape[1] == 0 or len(points) == 0:
        return out
    k, d = vertices.shape
    todo = [i for i, p in enumerate(points) if not np.any(np.all(np.abs(vertices - p) <= 1e-12, axis=1))]
    if not todo:
        return out
    from scipy.optimize import linprog

    # Variables (λ_1..λ_k, t); rows: V'λ − t ≤ p and −V'λ − t ≤ −p.
    a_ub = np.block([[vertices.T, -np.ones((d, 1))], [-vertices.T, -np.ones((d, 1))]])
    a_eq = np.concatenate([np.ones(k), [0.0]])[None, :]
    cost = np.concatenate([np.zeros(k), [1.0]])
    for i in todo:
        p = points[i]
        res = linprog(cost, A_ub=a_ub, b_ub=np.concatenate([p, -p]), A_eq=a_eq, b_eq=[1.0],
                      bounds=[(0, None)] * (k + 1), method="highs")
        out[i] = float(res.x[-1]) if res.status == 0 else math.inf
    return out


def _nearest(points: np.ndarray, data: np.ndarray, chunk: int = 1024,
             exclude_self: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Euclidean nearest neighbour of each point among ``data`` rows, in chunks (|a|²+|b|²−2ab)."""
    import numpy as np

    dn = np.einsum("ij,ij->i", data, data)
    dist = np.empty(len(points))
    index = np.empty(len(points), dtype=int)
    for start in range(0, len(points), chunk):
        p = points[start:start + chunk]
        d2 = np.einsum("ij,ij->i", p, p)[:, None] + dn[None, :] - 2 * p @ data.T
        if exclude_self:
            d2[np.arange(len(p)), np.arange(start, start + len(p))] = np.inf
        j = np.argmin(d2, axis=1)
        index[start:start + chunk] = j
        dist[start:start + chunk] = np.sqrt(np.maximum(d2[np.arange(len(p)), j], 0.0))
    return dist, index


def build_domain(rows: pd.DataFrame, names: Sequence[str], metric: str, *, max_configs: int = 5000,
                 seed: int = 0) -> Domain:
    """The domain of ``metric`` over the inputs ``names`` that the rows carry (missing ones are skipped).

    At most ``max_configs`` measured configurations are kept (a seeded sample beyond that).
    """
    import numpy as np
    import pandas as pd

    inputs: list[Feature] = []
    for name in dict.fromkeys(names):
        if name not in rows or rows[name].isna().any():
            continue
        kind = kind_of(name)
        if kind == "categorical":
            counts = pd.Series(strings(rows, name)).value_counts()
            inputs.append(Feature(name, kind, levels=tuple(sorted(counts.index, key=lambda v: (-counts[v], v)))))
        else:
            values = np.unique(numbers(rows, name)).tolist()
            inputs.append(Feature(name, kind, low=values[0], high=values[-1], values=tuple(values)))
    varied = [f for f in inputs if _varies(f)]
    table = pd.DataFrame({f.name: (strings(rows, f.name) if f.kind == "categorical" else numbers(rows, f.name))
                          for f in varied})
    table["_y"] = numbers(rows, metric)
    if varied:
        agg = table.groupby([f.name for f in varied], sort=True)["_y"].agg(["size", "mean"]).reset_index()
    else:
        agg = pd.DataFrame({"size": [len(table)], "mean": [float(table["_y"].mean())]})
    if len(agg) > max_configs:
        agg = agg.sample(max_configs, random_state=seed).reset_index(drop=True)
    configs = {f.name: [_plain(v, f) for v in agg[f.name]] for f in varied}
    hardware = [f for f in varied if f.name in HARDWARE_INPUTS]
    workload = [f for f in varied if f.name not in HARDWARE_INPUTS]
    settings: dict[str, list[Any]] = {}
    if hardware:
        unique = agg[[f.name for f in hardware]].drop_duplicates()
        settings = {f.name: [_plain(v, f) for v in unique[f.name]] for f in hardware}
    radius, pick = 0.0, 0
    if varied and len(agg) > 1:
        coords = encode(configs, varied)
        if workload:
            wl = np.unique(encode(configs, workload), axis=0)
            radius = float(_nearest(wl, wl, exclude_self=True)[0].max()) if len(wl) > 1 else 0.0
        centre = coords.mean(axis=0)
        gap = np.linalg.norm(coords - centre, axis=1)
        # The measured configuration nearest the middle; among equals, the one with more trials.
        pick = int(np.lexsort((-agg["size"].to_numpy(), np.round(gap, 9)))[0])
    reference = {f.name: configs[f.name][pick] if f in varied else _plain(f.values[0] if f.values else f.levels[0], f)
                 for f in inputs}
    return Domain(tuple(inputs), reference, configs, [int(s) for s in agg["size"]],
                  [float(m) for m in agg["mean"]], radius, settings)


def _plain(value: Any, f: Feature) -> Any:
    """A JSON-able Python value of the feature's kind."""
    if f.kind == "categorical":
        return str(value)
    if f.kind == "bool":
        return bool(float(value))
    v = float(value)
    return int(v) if v.is_integer() and abs(v) < 2**53 else v

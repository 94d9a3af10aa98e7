"""A plan's design: which points of its factor levels to run, and, for plans over lab hardware, a design of the
hardware settings with an inner design within each.

Every design comes from the one registry (``design.registry``: grid, fractional, lhs, sobol, random, dopt, iopt,
adaptive); what is the plan's own is ``nested``: a design over the slow-to-change factors (lab hardware) whose
columns are as uncorrelated as the levels allow (the least-correlated of many seeded LHS draws), and within each
of its settings an inner design over the rest, re-seeded per setting so the inner points differ from setting
to setting.

References
----------
Goos & Jones, *Optimal Design of Experiments*, ch. 10 (split-plot designs: hard-to-change factors as whole plots).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from ..design.levels import (MAX_GRID, Level, Levels, fractional, grid, grid_size, low_correlation,
                             main_effects_matrix, max_correlation, n_main_effect_parameters, space_filling)
from ..design.registry import NEEDS_N, points

__all__ = ["MAX_GRID", "NEEDS_N", "DesignType", "Levels", "fractional", "grid", "grid_size", "low_correlation",
           "main_effects_matrix", "make_design", "max_correlation", "n_main_effect_parameters", "nested",
           "space_filling"]

DesignType = str  # a name in ``design.registry.DESIGNS`` (a plan's design type is checked against it)


def nested(outer: Levels, inner: Levels, outer_kind: DesignType | Literal["list"], outer_n: int | None, outer_seed: int,
           inner_kind: DesignType, inner_n: int | None, inner_seed: int,
           identity: Callable[[dict[str, Level]], str | None] | None = None,
           settings: list[dict[str, Level]] | None = None) -> list[dict[str, Level]]:
    """Outer settings (hardware; ``settings`` as given for ``outer_kind`` "list"), and within each an inner
    design re-seeded by the setting's index.

    With ``identity`` (the run a point becomes, None if it cannot be built), a space-filling inner design is
    topped up from further seeded draws until it has n distinct buildable runs, so no setting ends up with
    fewer runs than asked.
    """
    if outer_kind == "list":
        settings = list(settings or [])
    elif outer_kind in ("lhs", "sobol"):
        if outer_n is None:
            raise ValueError(f"the hardware design {outer_kind} needs n (the number of hardware settings)")
        filling: Literal["lhs", "sobol"] = "lhs" if outer_kind == "lhs" else "sobol"
        settings = low_correlation(outer, filling, outer_n, outer_seed)
    else:
        settings = make_design(outer, outer_kind, outer_n, outer_seed)
    points: list[dict[str, Level]] = []
    for i, setting in enumerate(dict.fromkeys(tuple(sorted(s.items(), key=str)) for s in settings)):
        seed = inner_seed + 1000 * i
        drawn = [{**dict(setting), **p} for p in make_design(inner, inner_kind, inner_n, seed)]
        if identity is None or inner_kind not in ("lhs", "sobol") or inner_n is None:
            points.extend(drawn)
            continue
        chosen: dict[str, dict[str, Level]] = {}
        for extra in range(50):
            if extra:
                drawn = [{**dict(setting), **p} for p in make_design(inner, inner_kind, inner_n, seed + extra)]
            for q in drawn:
                key = identity(q)
                if key is not None and key not in chosen and len(chosen) < inner_n:
                    chosen[key] = q
            if len(chosen) >= inner_n:
                break
        points.extend(chosen.values())
    return points


def make_design(levels: Levels, kind: DesignType, n: int | None = None, seed: int = 0) -> list[dict[str, Level]]:
    """The design's points (the registry's ``points``); a grid, or a candidate grid, above MAX_GRID is refused."""
    return points(kind, levels, n, seed)

"""Every experimental design by name, behind one signature: which candidates to run, in run order.

A design is called as ``choose(name, space, n, seed, oracle)``. The ``Space`` is what it chooses from: a plan's
factor levels (its candidates are their grid, enumerated only where a design needs every candidate), or the rows
of a candidate matrix (``design-size``: a measured grid's configurations; an adaptive campaign: its plan's grid).
It returns indices into the space's candidates (``Space.point`` turns one into a plan's point), so the first k
of a sequence are the design of size k where the design is sequential. ``n`` is how many (None where the design
decides: a grid, a regular fraction); ``seed`` an integer or a ``numpy.random.Generator``; ``oracle`` measures
candidates (``oracle(indices)``), read by ``adaptive`` only: without one, ``adaptive`` offers every candidate, as a
plan's adaptive campaign chooses among them as it runs (``campaign.adaptive``).

==========  =====================================================================  ==========================
name        what                                                                   module
==========  =====================================================================  ==========================
grid        every candidate                                                        levels
fractional  a regular 2^(k-p) fraction, or a D-optimal subset for mixed levels     levels (dopt)
lhs         a Latin hypercube: binned onto levels, or nearest candidate rows        lhs
sobol       a scrambled Sobol' sequence binned onto levels                         levels
random      a seeded permutation of the candidates (the baseline)                  uniform
dopt        Wynn's D-optimal sequence over the candidates' model matrix            dopt
iopt        an I-optimal sequence (least average prediction variance)              iopt
adaptive    a committee of models' disagreement, measured round by round           committee
search      the first level of every factor, then each single change from it       (here)
            (one factor at a time: a search's screening; later rounds as it runs)
==========  =====================================================================  ==========================

A new design is a module with its function and one ``DesignSpec`` in ``DESIGNS``: what it is asked by name
elsewhere (whether it needs n, whether it orders candidate rows for ``design-size``, whether its campaign
chooses runs as it measures) is on its entry, and the lists the rest of the code reads are derived from them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import numpy as np

    from .levels import Level, Levels

Strategy = str  # a design that orders candidate rows (``DesignSpec.strategy``): design-size's and the CLI's
Oracle = Callable[[list[int]], "np.ndarray"]


@dataclass(frozen=True)
class Space:
    """What a design chooses from: a plan's factor ``levels`` (the candidates are their grid, the last factor
    varying fastest), or candidate rows ``x`` (one row per candidate, its inputs as numbers)."""

    levels: Levels = field(default_factory=dict)
    x: np.ndarray | None = None

    @classmethod
    def of_rows(cls, x: np.ndarray) -> Space:
        return cls({}, x)

    @property
    def size(self) -> int:
        return len(self.x) if self.x is not None else math.prod(len(v) for v in self.levels.values())

    def point(self, index: int) -> dict[str, Level]:
        """The grid point at ``index`` (levels only)."""
        out: dict[str, Level] = {}
        for name in reversed(list(self.levels)):
            index, j = divmod(index, len(self.levels[name]))
            out[name] = self.levels[name][j]
        return {name: out[name] for name in self.levels}

    def index(self, point: dict[str, Level]) -> int:
        """The grid index of a point (levels only; inverse of ``point``)."""
        i = 0
        for name, levels in self.levels.items():
            i = i * len(levels) + levels.index(point[name])
        return i

    def matrix(self) -> np.ndarray:
        """The candidates' inputs: the rows given, or the grid's main-effects coding (refused above MAX_GRID)."""
        from .levels import grid, main_effects_matrix

        if self.x is not None:
            return self.x
        self._enumerable()
        return main_effects_matrix(grid(self.levels), self.levels)

    def _enumerable(self) -> None:
        from .levels import MAX_GRID

        if self.x is None and self.size > MAX_GRID:
            raise ValueError(f"the full grid of these factors has {self.size:,} points (at most {MAX_GRID:,}); "
                             f"use a space-filling design (type: lhs or sobol, with n) or fewer levels")


Design = Callable[[Space, "int | None", "int | np.random.Generator", "Oracle | None", int], list[int]]


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    import numpy as np

    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _int_seed(seed: int | np.random.Generator, name: str) -> int:
    if not isinstance(seed, int):
        raise ValueError(f"the {name} design over factor levels takes an integer seed")
    return seed


def _needs(n: int | None, name: str) -> int:
    if n is None:
        raise ValueError(f"design {name} needs n (the number of points)")
    return n


def _grid(space: Space, n: int | None, seed: int | np.random.Generator, oracle: Oracle | None,
          batch: int) -> list[int]:
    space._enumerable()
    return list(range(space.size))


def _fractional(space: Space, n: int | None, seed: int | np.random.Generator, oracle: Oracle | None,
                batch: int) -> list[int]:
    from .levels import fractional

    space._enumerable()
    return [space.index(p) for p in fractional(space.levels, n, _int_seed(seed, "fractional"))]


def _space_filling(kind: Literal["lhs", "sobol"]) -> Design:
    def choose(space: Space, n: int | None, seed: int | np.random.Generator, oracle: Oracle | None,
               batch: int) -> list[int]:
        from .levels import space_filling

        if space.x is not None:
            if kind == "sobol":
                raise ValueError("the sobol design draws over factor levels, not candidate rows (use lhs)")
            from .lhs import lhs_design

            return lhs_design(space.x, _needs(n, kind), _rng(seed))
        return [space.index(p) for p in space_filling(space.levels, kind, _needs(n, kind), _int_seed(seed, kind))]
    return choose


def _random(space: Space, n: int | None, seed: int | np.random.Generator, oracle: Oracle | None,
            batch: int) -> list[int]:
    from .uniform import random_order

    return random_order(space.size, _needs(n, "random"), _rng(seed))


def _dopt(space: Space, n: int | None, seed: int | np.random.Generator, oracle: Oracle | None,
          batch: int) -> list[int]:
    from .dopt import dopt_order

    return dopt_order(space.matrix(), _needs(n, "dopt"), _rng(seed))


def _iopt(space: Space, n: int | None, seed: int | np.random.Generator, oracle: Oracle | None,
          batch: int) -> list[int]:
    from .iopt import iopt_order

    return iopt_order(space.matrix(), _needs(n, "iopt"), _rng(seed))


def _adaptive(space: Space, n: int | None, seed: int | np.random.Generator, oracle: Oracle | None,
              batch: int) -> list[int]:
    if oracle is None:  # a plan's candidates: its campaign chooses among them round by round
        return _grid(space, n, seed, oracle, batch)
    from .committee import adaptive_order

    return adaptive_order(space.matrix(), oracle, _needs(n, "adaptive"), _rng(seed), batch=batch)


def _one_at_a_time(space: Space, n: int | None, seed: int | np.random.Generator, oracle: Oracle | None,
                   batch: int) -> list[int]:
    """The first level of every factor, then each single change from it, in factor and level order."""
    if space.x is not None:
        raise ValueError("the search design changes one factor level at a time; it has no candidate rows to order")
    base = {name: levels[0] for name, levels in space.levels.items()}
    changes = [{**base, name: level} for name, levels in space.levels.items() for level in levels[1:]]
    return [space.index(p) for p in (base, *changes)]


@dataclass(frozen=True)
class DesignSpec:
    """One design, with what the rest of the code asks of it by name."""

    name: str
    choose: Design
    needs_n: bool = False   # told how many points (a plan must give ``n``)
    strategy: bool = False  # orders candidate rows: one of design-size's strategies
    rounds: bool = False    # its campaign chooses runs as it measures (one campaign, no fixed set of runs to
    # sample, nest in a hardware design or interleave); its campaign runner is ``campaign.plan_run.ROUNDS``
    needs_budget: bool = False  # told the most runs it may spend


DESIGNS: dict[str, DesignSpec] = {d.name: d for d in (
    DesignSpec("grid", _grid),
    DesignSpec("fractional", _fractional),
    DesignSpec("random", _random, needs_n=True, strategy=True),  # the strategies' baseline, listed first
    DesignSpec("lhs", _space_filling("lhs"), needs_n=True, strategy=True),
    DesignSpec("sobol", _space_filling("sobol"), needs_n=True),
    DesignSpec("dopt", _dopt, needs_n=True, strategy=True),
    DesignSpec("iopt", _iopt, needs_n=True, strategy=True),
    DesignSpec("adaptive", _adaptive, strategy=True, rounds=True, needs_budget=True),
    DesignSpec("search", _one_at_a_time, rounds=True),
)}
STRATEGIES: tuple[Strategy, ...] = tuple(d.name for d in DESIGNS.values() if d.strategy)  # over candidate rows
PLAN_DESIGNS: tuple[str, ...] = tuple(DESIGNS)  # over a plan's factor levels: every design
NEEDS_N: tuple[str, ...] = tuple(d.name for d in DESIGNS.values() if d.needs_n)


def spec(name: str) -> DesignSpec:
    """The design ``name``'s entry; ValueError naming the designs there are."""
    found = DESIGNS.get(name)
    if found is None:
        raise ValueError(f"unknown design {name!r}; choose from {', '.join(DESIGNS)}")
    return found


def choose(name: str, space: Space, n: int | None, seed: int | np.random.Generator = 0,
           oracle: Oracle | None = None, *, batch: int = 4) -> list[int]:
    """Indices into ``space``'s candidates, in the order design ``name`` would run them (module docstring)."""
    return spec(name).choose(space, n, seed, oracle, batch)


def points(name: str, levels: Levels, n: int | None = None, seed: int = 0) -> list[dict[str, Level]]:
    """A plan's design over its factor levels, as points (factor -> level)."""
    space = Space(levels)
    return [space.point(i) for i in choose(name, space, n, seed)]


def order(strategy: Strategy, x: np.ndarray, size: int, rng: np.random.Generator, oracle: Oracle | None = None,
          *, batch: int = 4) -> list[int]:
    """The first ``size`` candidate rows of ``x`` in the order ``strategy`` would run them (``choose`` over rows)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    if strategy == "adaptive" and oracle is None:
        raise ValueError("the adaptive strategy needs measurements (an oracle)")
    return choose(strategy, Space.of_rows(x), size, rng, oracle, batch=batch)

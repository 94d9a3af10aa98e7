"""A search plan's shape (design type ``search``): the volume options it varies, each with Gluster's default first,
its first round (the defaults and each single change from them), and what such a plan may ask for. The rounds
after the first are chosen as it runs (``campaign.search``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..design.registry import points
from ..errors import ConfigError
from ..gluster.tunables import TUNABLES
from .factors import FACTORS, Level, normalize_level

MAX_BUDGET = 40


def searched(factors: Mapping[str, Sequence[Level]]) -> dict[str, list[Level]]:
    """The options a search plan varies, each with Gluster's default first (added where the plan left it out)."""
    out: dict[str, list[Level]] = {}
    for name, levels in factors.items():
        if len(levels) < 2:
            continue
        default = normalize_level(FACTORS[name], TUNABLES[name].default)
        out[name] = [default, *(v for v in levels if v != default)]
    return out


def check_search_plan(factors: Mapping[str, Sequence[Level]], repetitions: int, budget: int | None,
                      source: str = "plan") -> None:
    """A search varies volume options only, within its budget, with at least 3 trials a candidate."""
    varied = [n for n, v in factors.items() if len(v) > 1]
    other = [n for n in varied if n not in TUNABLES]
    if other:
        raise ConfigError(source, f"factors.{other[0]}", "a search varies volume options only (gluster "
                          f"tunables: {', '.join(TUNABLES)}); give this factor one level")
    if not varied:
        raise ConfigError(source, "factors", "a search needs at least one volume option with several levels")
    if repetitions < 3:
        raise ConfigError(source, "protocol.repetitions", "a search measures each candidate at least 3 times")
    budget = budget or MAX_BUDGET
    screening = 1 + sum(len(v) - 1 for v in searched(factors).values())
    if budget > MAX_BUDGET or screening + 3 > budget:
        raise ConfigError(source, "design.budget", f"the screening is {screening} run(s), the defaults' more "
                          f"trials 1 and the confirmation 2; allowed budgets: {screening + 3} to {MAX_BUDGET}")


def screening_points(factors: Mapping[str, Sequence[Level]]) -> list[dict[str, Level]]:
    """The defaults, then each single change from them (one option at one other level): the registry's search
    design over the factors with each option's default first."""
    options = searched(factors)
    return points("search", {n: options.get(n, list(v[:1])) for n, v in factors.items()})



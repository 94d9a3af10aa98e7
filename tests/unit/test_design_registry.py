"""The one design registry: plans, design-size and adaptive campaigns call every design the same way."""

from __future__ import annotations

import numpy as np
import pytest

from gluster_model.design.levels import grid
from gluster_model.design.registry import DESIGNS, STRATEGIES, Space, choose, order, points
from gluster_model.plan.file import PlanFile

LEVELS = {"a": [1, 2, 3], "b": ["x", "y"], "c": [True, False]}


def test_a_grid_index_and_its_point_are_one_another() -> None:
    space = Space(LEVELS)
    assert space.size == 12 and [space.point(i) for i in range(12)] == grid(LEVELS)
    assert all(space.index(space.point(i)) == i for i in range(12))


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_every_design_chooses_distinct_candidates_over_levels(name: str) -> None:
    chosen = choose(name, Space(LEVELS), 6, 3)
    assert all(0 <= i < 12 for i in chosen)
    if name in ("random", "dopt", "iopt"):  # sequential designs: exactly n, each once
        assert len(chosen) == 6 and len(set(chosen)) == 6
    assert choose(name, Space(LEVELS), 6, 3) == chosen  # seeded


def test_the_strategies_over_rows_are_the_registrys() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    y = x @ np.array([1.0, -2.0, 0.5])
    for s in STRATEGIES:
        got = order(s, x, 10, np.random.default_rng(4), lambda idx: y[idx])
        assert got == choose(s, Space.of_rows(x), 10, np.random.default_rng(4), lambda idx: y[idx])
        assert len(set(got)) == 10
    with pytest.raises(ValueError, match="sobol design draws over factor levels"):
        choose("sobol", Space.of_rows(x), 5, 0)
    with pytest.raises(ValueError, match="unknown design 'taguchi'"):
        choose("taguchi", Space(LEVELS), 5, 0)


def test_a_plan_can_ask_for_an_optimal_design_and_must_say_how_many() -> None:
    plan = PlanFile.model_validate({"name": "d", "factors": {"record_size": ["4KB", "64KB", "1MB"],
                                                             "threads": [1, 2, 4], "sync": ["none", "osync"]},
                                    "design": {"type": "dopt", "n": 6, "seed": 1}})
    assert plan.design.type == "dopt"
    pts = points("dopt", {"record_size": [4096, 65536, 1 << 20], "threads": [1, 2, 4], "sync": ["none", "osync"]},
                 6, 1)
    assert len({tuple(p.values()) for p in pts}) == 6
    with pytest.raises(ValueError, match="design iopt needs n"):
        PlanFile.model_validate({"name": "d", "factors": {"threads": [1, 2]}, "design": {"type": "iopt"}})


def test_what_the_code_asks_of_a_design_is_on_its_entry() -> None:
    """The lists the rest of the code reads are derived from the entries; every design whose campaign chooses
    as it measures has a runner; a search's screening is the registry's one-at-a-time design."""
    from gluster_model.campaign.plan_run import ROUNDS
    from gluster_model.design.registry import NEEDS_N, PLAN_DESIGNS
    from gluster_model.plan.search import screening_points

    assert STRATEGIES == ("random", "lhs", "dopt", "iopt", "adaptive")
    assert set(NEEDS_N) == {"lhs", "sobol", "random", "dopt", "iopt"} and set(PLAN_DESIGNS) == set(DESIGNS)
    assert set(ROUNDS) == {"adaptive", "search"} == {n for n, d in DESIGNS.items() if d.rounds}
    factors = {"threads": [4], "write_behind": [False, True], "io_thread_count": [32, 16, 64]}
    assert screening_points(factors) == [
        {"threads": 4, "write_behind": True, "io_thread_count": 16},  # Gluster's defaults first
        {"threads": 4, "write_behind": False, "io_thread_count": 16},
        {"threads": 4, "write_behind": True, "io_thread_count": 32},
        {"threads": 4, "write_behind": True, "io_thread_count": 64}]
    with pytest.raises(ValueError, match="'taguchi' is not a design"):
        PlanFile.model_validate({"name": "d", "factors": {"threads": [1, 2]}, "design": {"type": "taguchi"}})
    with pytest.raises(ValueError, match="a search design chooses its runs as it goes"):
        PlanFile.model_validate({"name": "d", "factors": {"write_behind": [True, False]},
                                 "design": {"type": "search", "subset": 2}})

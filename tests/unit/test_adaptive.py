"""Adaptive campaigns, the pure parts: candidates as numbers, the round's figures, the stopping rule, and the
replay of a design log that lets an interrupted campaign resume its sequence."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gluster_model.campaign.adaptive import _replay, candidate_matrix, round_figures, stop_reason
from gluster_model.store.identity import StoredDecision
from gluster_model.config.cluster import cluster_from_data
from gluster_model.plan.file import PlanFile, expand

CLUSTER = cluster_from_data({"name": "c", "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]}
                                                       for i in (1, 2, 3)]}, "c.yaml", Path("."))


def _plan(**design: object) -> PlanFile:
    return PlanFile.model_validate({
        "name": "a", "factors": {"layout": ["distribute", "replicate"], "replica": 3, "record_size": ["4KB", "1MB"],
                                 "threads": [1, 2, 3]},
        "design": {"type": "adaptive", "budget": 8, **design}})


def test_candidates_are_the_grid_as_numbers() -> None:
    plan = _plan()
    runs = expand(plan, CLUSTER).runs
    x, names = candidate_matrix(runs, plan.factors)
    assert len(runs) == 12 and x.shape == (12, 3)
    assert names == ["layout=replicate", "record_size", "threads"]
    assert sorted(set(x[:, 1])) == [12.0, 20.0]  # log2 of 4 KiB and 1 MiB


def test_an_adaptive_design_needs_a_budget_and_fixed_lab_hardware() -> None:
    with pytest.raises(ValueError, match="needs a budget"):
        PlanFile.model_validate({"name": "a", "factors": {"threads": [1, 2]}, "design": {"type": "adaptive"}})
    with pytest.raises(ValueError, match="more than the budget"):
        _plan(initial=9)


def test_round_figures_and_the_stopping_rule() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (40, 3))
    y = 5 + 3 * x[:, 0] + 1 * x[:, 1] + rng.normal(0, 0.01, 40)
    first = round_figures(x, ["a", "b", "c"], list(range(10)), list(y[:10]), None)
    assert first["ranking"] == ["a", "b", "c"] and first["change"] is None and first["loo_r2"] > 0.99
    second = round_figures(x, ["a", "b", "c"], list(range(14)), list(y[:14]), first["predictions"])
    assert second["change"] < 0.01
    assert stop_reason([first], 0.02, 1) is None
    assert "no longer change" in str(stop_reason([first, second], 0.02, 1))
    assert stop_reason([first, second], 0.02, 2) is None  # patience: two steady rounds needed
    moved = {**second, "change": 0.2}
    assert stop_reason([first, moved], 0.02, 1) is None
    flipped = {**second, "ranking": ["b", "a", "c"]}
    assert stop_reason([first, flipped], 0.02, 1) is None


def test_replay_rebuilds_the_sequence_and_the_stop() -> None:
    index = {"h1": 0, "h2": 5, "h3": 7}
    log = [StoredDecision(0, "h1", "initial", {}), StoredDecision(0, "h2", "initial", {}),
           StoredDecision(1, None, "round 1 ...", {"runs": 2, "stopped": False}),
           StoredDecision(1, "h3", "committee", {}),
           StoredDecision(2, None, "predictions steady", {"runs": 3, "stopped": True})]
    state = _replay(log, index)
    assert state.chosen == [0, 5, 7] and len(state.summaries) == 2 and state.stopped == "predictions steady"

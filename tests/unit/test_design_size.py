"""Runs a design needs, by subsampling a full grid: on synthetic grids whose truth is known."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from gluster_model.cli import cli
from gluster_model.model.design_size import SizePoint, default_sizes, design_size, runs_needed
from gluster_model.model.fit import FitError


def _grid(signal: float = 1.0, noise: float = 40.0, seed: int = 0) -> pd.DataFrame:
    """A full grid of 144 hardware configurations, one trial each; the network dominates when signal = 1."""
    rng = np.random.default_rng(seed)
    rows = []
    levels = itertools.product((1.0, 4.0, 10.0), (1, 2, 3, 4), (1, 2, 3), (False, True), (32 << 20, 128 << 20))
    for i, (net, servers, replica, shard, size) in enumerate(levels):
        y = 400 + signal * (30 * net + 8 * servers - 20 * replica + 5 * shard) + rng.normal(0, noise)
        rows.append({"config_hash": f"c{i}", "run_id": i + 1, "campaign": "grid", "network_gbps": net, "servers": servers,
                     "replica": replica, "shard": shard, "file_size": size, "write": y})
    return pd.DataFrame(rows)


def test_a_dominant_network_is_found_by_small_designs_and_accuracy_grows_with_n() -> None:
    frame = _grid()
    d = design_size(frame, "write", "hardware", subsets=30, seed=1)
    assert d.configs == 144 and d.top == "network_gbps"
    assert 0.85 < d.full_cv_r2 < 0.95  # noise sd 40 against the network's spread
    first, last = d.points[0], d.points[-1]
    assert first.n == 8 and last.n == 108  # parameters + 2 up to three quarters of the grid
    assert last.r2_median > 0.85 and last.top_share == 1.0 and last.rank_corr > 0.85
    # Judged on what it left out: an 8-configuration fit of 6 parameters must do clearly worse than the grid's CV.
    assert first.r2_median < d.full_cv_r2 - 0.05
    assert first.rank_corr < last.rank_corr
    assert d.needed is not None and d.needed <= 40, d.points


def test_no_size_suffices_when_the_response_is_noise() -> None:
    d = design_size(_grid(signal=0.0), "write", "hardware", sizes=[16, 32, 64], subsets=30, seed=2)
    # Whatever ranks first on the whole grid is chance, so random subsets rarely agree with it.
    assert d.needed is None
    assert all(p.top_share < 0.9 for p in d.points)


def test_held_out_r2_uses_the_whole_grids_variance() -> None:
    frame = _grid()
    d = design_size(frame, "write", "hardware", sizes=[100], subsets=5, seed=3)
    # A near-perfect model leaves an error variance of about noise² = 1600 against the grid's variance.
    expected = 1 - 1600 / float(np.var(frame["write"]))
    assert d.points[0].r2_median == pytest.approx(expected, abs=0.02)


def _point(n: int, r2: float, top: float, fitted: int = 50) -> SizePoint:
    return SizePoint(n, 50, fitted, r2, r2 - 0.1, top, 0.9)


def test_runs_needed_requires_every_larger_size_to_pass() -> None:
    good = [_point(10, 0.5, 0.5), _point(20, 0.78, 0.95), _point(40, 0.8, 1.0), _point(80, 0.81, 1.0)]
    assert runs_needed(good, 0.8, 0.05, 0.9) == 20
    dip = [*good[:3], _point(80, 0.7, 1.0)]  # a larger size that fails undoes the smaller ones
    assert runs_needed(dip, 0.8, 0.05, 0.9) is None
    unfittable = [good[0], _point(20, 0.9, 1.0, fitted=30), *good[2:]]  # 30 of 50 subsets could not be fitted
    assert runs_needed(unfittable, 0.8, 0.05, 0.9) == 40


def test_default_sizes_grow_geometrically() -> None:
    sizes = default_sizes(192, 8)
    assert sizes[0] == 10 and sizes[-1] == 144
    assert all(1.2 < b / a < 1.6 for a, b in zip(sizes[:-2], sizes[1:-1]))


def test_sizes_outside_the_grid_are_refused_with_the_option_named() -> None:
    with pytest.raises(FitError, match=r"--sizes: 1, 144 out of range; the data have 144 configuration\(s\)"):
        design_size(_grid(), "write", "hardware", sizes=[1, 16, 144])


def test_cli_prints_the_curve_and_refuses_bad_sizes_in_one_line(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "grid.csv"
    _grid().to_csv(path, index=False)
    out = tmp_path / "curve.csv"
    res = CliRunner().invoke(cli, ["design-size", "--data", str(path), "--sizes", "12,48", "--subsets", "10",
                                   "--csv", str(out)])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())  # rich wraps long lines
    assert "network_gbps ranks first" in text or "no size tried" in text
    curve = pd.read_csv(out)
    assert list(curve["n"]) == [12, 48] * 5 and (curve["metric"] == "write").all()
    assert list(dict.fromkeys(curve["strategy"])) == ["random", "lhs", "dopt", "iopt", "adaptive"]
    bad = CliRunner().invoke(cli, ["design-size", "--data", str(path), "--sizes", "12,x"])
    assert bad.exit_code == 2 and "--sizes" in bad.output and "Traceback" not in bad.output
    far = CliRunner().invoke(cli, ["design-size", "--data", str(path), "--sizes", "500"])
    assert far.exit_code != 0 and "--sizes: 500 out of range" in far.output


@pytest.mark.parametrize("text", ["", "16,x", "16,-4", "1.5", ", ,"])
def test_sizes_text_other_than_whole_numbers_is_refused(text: str) -> None:
    from gluster_model.units import parse_ints

    with pytest.raises(ValueError, match="comma-separated list of whole numbers"):
        parse_ints(text)


def test_sizes_text_is_read_with_spaces_and_a_trailing_comma() -> None:
    from gluster_model.units import parse_ints

    assert parse_ints(" 12, 16,24,") == [12, 16, 24]

"""Run-to-run noise from repeated configurations, and the lack-of-fit test that uses it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gluster_model.model.fit import fit_metric
from gluster_model.model.replicates import lack_of_fit, noise_cv, pure_error
from gluster_model.model.groups import cv_groups


def test_pure_error_is_the_spread_around_each_repeated_configuration() -> None:
    pe = pure_error(np.array([10.0, 12.0, 5.0, 7.0, 9.0, 100.0]), np.array(["a", "a", "b", "b", "b", "c"]))
    assert (pe.ss, pe.df, pe.configurations, pe.runs) == (2.0 + 8.0, 1 + 2, 2, 5)
    assert pe.ms == pytest.approx(10 / 3)


def test_noise_cv_recovers_the_run_to_run_spread() -> None:
    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(400), 2)
    y = np.exp(rng.normal(5, 1, 400))[groups] * np.exp(rng.normal(0, 0.05, 800))
    assert noise_cv(y, groups) == pytest.approx(5.0, abs=0.4)
    assert noise_cv(y[::2], groups[::2]) is None  # nothing measured twice


def _curved(seed: int, n: int = 60) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.repeat(np.linspace(1, 10, n), 2)
    groups = np.repeat(np.arange(n), 2)
    return x, groups, 3 + 0.5 * x**2 + rng.normal(0, 1.0, 2 * n)


def _line_residuals(x: np.ndarray, y: np.ndarray, degree: int) -> tuple[np.ndarray, int]:
    coef = np.polyfit(x, y, degree)
    return y - np.polyval(coef, x), len(y) - degree - 1


def test_lack_of_fit_is_found_in_a_straight_line_through_a_curve_and_not_in_the_curve() -> None:
    x, groups, y = _curved(1)
    resid, df = _line_residuals(x, y, 1)
    wrong = lack_of_fit("line", "MB/s", resid, df, groups, y)
    resid, df = _line_residuals(x, y, 2)
    right = lack_of_fit("quadratic", "MB/s", resid, df, groups, y)
    assert wrong is not None and right is not None and wrong.p is not None and right.p is not None
    assert wrong.p < 1e-6 and right.p > 0.01
    assert right.pure_share > 0.3 and wrong.pure_share < 0.1  # the noise is about half of df, so of SS too


def test_a_setting_measured_again_is_one_group_with_its_first_measurement() -> None:
    rows = []
    for s, (net, disk) in enumerate([(0.2, 30.0), (0.4, 60.0), (0.7, 120.0), (1.0, 240.0)]):
        for c in range(3):
            rows.append({"network_gbps": net, "disk_read_mbps": disk, "config_hash": f"{s}-{c}"})
    # setting 1 measured again: its own baselines read a little differently
    rows += [{"network_gbps": 0.398, "disk_read_mbps": 59.7, "config_hash": f"1-{c}"} for c in range(3)]
    groups, by = cv_groups(pd.DataFrame(rows))
    assert by == "hardware setting" and len(set(groups)) == 4
    assert len(set(groups[3:6]) | set(groups[12:])) == 1


def test_fit_reports_noise_and_lack_of_fit_when_runs_repeat() -> None:
    rng = np.random.default_rng(2)
    servers = np.repeat(rng.integers(1, 5, 40).astype(float), 2)
    net = np.repeat(rng.uniform(0.2, 1.0, 40), 2)
    frame = pd.DataFrame({"servers": servers, "network_gbps": net, "config_hash": np.repeat(np.arange(40), 2),
                          "write": 50 * net * servers**0.5 * np.exp(rng.normal(0, 0.04, 80))})
    fit = fit_metric(frame, "write", "hardware", models=["physical"], bootstrap=0, importance_n=64, cv_repeats=1)
    rep = fit.replication
    assert rep is not None and (rep.configurations, rep.runs) == (40, 80)
    assert rep.cv_percent == pytest.approx(4.0, abs=1.5)
    assert {t.model for t in rep.tests} == {"mlr", "physical"}
    assert next(t for t in rep.tests if t.model == "physical").scale == "log MB/s"
    assert fit_metric(frame.iloc[::2], "write", "hardware", models=[], bootstrap=0, importance_n=64,
                      cv_repeats=1).replication is None

"""The ratio statistics checked against references that share no code with them (scipy's Welch test,
statsmodels' Holm adjustment and TOST), and their intervals' coverage simulated with known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from gluster_model.stats.accuracy import coverage, mape, percent_error
from gluster_model.stats.ratios import holm, holm_adjusted, run_ratio


def test_holm_matches_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(1)
    for _ in range(50):
        p = rng.uniform(0, 0.2, rng.integers(1, 12)).tolist()
        want = multipletests(p, alpha=0.05, method="holm")
        assert holm_adjusted(p) == pytest.approx(list(want[1]))
        assert holm({str(i): v for i, v in enumerate(p)}, 0.05) == {str(i) for i, r in enumerate(want[0]) if r}


def test_runs_as_units_match_welch_and_tost_on_the_run_means() -> None:
    from statsmodels.stats.weightstats import ttost_ind

    rng = np.random.default_rng(2)
    a = [rng.lognormal(np.log(100), 0.02, 3) * rng.lognormal(0, 0.03) for _ in range(4)]
    b = [rng.lognormal(np.log(97), 0.02, 3) * rng.lognormal(0, 0.03) for _ in range(5)]
    r = run_ratio(a, b, 0.95)
    ma, mb = [np.log(x).mean() for x in a], [np.log(x).mean() for x in b]
    assert r.basis == "runs" and r.runs == (4, 5) and r.trials == (12, 15)
    assert math.log(r.ratio) == pytest.approx(np.mean(mb) - np.mean(ma))
    assert r.p_changed() == pytest.approx(stats.ttest_ind(mb, ma, equal_var=False).pvalue, rel=1e-6)
    p_tost, _, _ = ttost_ind(mb, ma, math.log(0.95), math.log(1.05), usevar="unequal")
    assert r.p_equivalent(0.05) == pytest.approx(p_tost, rel=1e-6)
    low, high = r.interval(0.9)
    assert low < r.ratio < high and (high - low) < (r.high - r.low)


def test_one_run_per_side_adds_the_between_run_term() -> None:
    trials_a, trials_b = [100.0, 101.0, 99.0], [100.5, 101.5, 99.5]
    without = run_ratio([trials_a], [trials_b], 0.95, 0.0)
    with_term = run_ratio([trials_a], [trials_b], 0.95, 0.02)
    assert without.basis == with_term.basis == "trials + between"
    within = np.var(np.log(trials_a), ddof=1) / 3 + np.var(np.log(trials_b), ddof=1) / 3
    assert without.se == pytest.approx(math.sqrt(within), rel=1e-6)
    assert with_term.se == pytest.approx(math.sqrt(within + 2 * 0.02**2), rel=1e-6)
    with pytest.raises(ValueError, match="no spread"):
        run_ratio([[100.0]], [[90.0]])


@pytest.mark.parametrize("runs,between", [(3, 0.0), (1, 0.03)])
def test_the_ratio_interval_covers_the_true_ratio_at_its_level(runs: int, between: float) -> None:
    """Known truth, fixed seed: B is 0.9 times A; each run shifts by an SD of 3% (known to the estimator where a
    side has one run), each trial by 2%. 95% intervals hold the truth 93-97% of 1,000 times (a two-sided band:
    an interval too wide fails as a too narrow one does)."""
    rng = np.random.default_rng(3)
    held = 0
    n = 1000
    for _ in range(n):
        sides = [[rng.lognormal(np.log(m) + rng.normal(0, 0.03), 0.02, 3) for _ in range(runs)] for m in (100, 90)]
        r = run_ratio(sides[0], sides[1], 0.95, between)
        held += r.low <= 0.9 <= r.high
    assert 0.93 <= held / n <= 0.97, held / n


def test_accuracy_figures() -> None:
    assert percent_error(110, 100) == pytest.approx(10) and math.isnan(percent_error(1, 0))
    assert mape([10, -20, math.nan]) == pytest.approx(15) and mape([]) is None
    assert coverage([True, False, True, True]) == 0.75 and coverage([]) is None

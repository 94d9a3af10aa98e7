"""The session's drift (``stats.drift``): the between-run component against statsmodels' REML fit where the two
must agree, and the interval that counts it covering a known ratio at its level, two-sided, where trials taken as
independent draws do not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gluster_model.stats.drift import drift_ratio, session_drift
from gluster_model.stats.ratios import welch_ratio


@pytest.mark.filterwarnings("ignore:The MLE may be on the boundary")
def test_the_between_run_component_is_reml_s_on_a_balanced_design() -> None:
    """Balanced one-way data: the ANOVA estimator and REML agree whenever the estimate is positive (Searle et al.
    1992, §4.7), so statsmodels' MixedLM is an independent reference."""
    import pandas as pd
    import statsmodels.formula.api as smf

    rng = np.random.default_rng(7)
    runs = [rng.lognormal(math.log(100) + rng.normal(0, 0.08), 0.05, 4) for _ in range(6)]
    drift = session_drift([runs])
    frame = pd.DataFrame([(r, float(np.log(v))) for r, values in enumerate(runs) for v in values],
                         columns=["run", "y"])
    fit = smf.mixedlm("y ~ 1", frame, groups=frame["run"]).fit(reml=True)
    assert drift.var > 0 and drift.df == 5 and drift.runs == 6
    assert drift.var == pytest.approx(float(fit.cov_re.iloc[0, 0]), rel=1e-3)


def test_runs_that_agree_as_their_trials_do_give_no_drift_and_the_floor_stands_in() -> None:
    same = [[100.0, 102.0, 98.0], [101.0, 99.0, 100.0]]
    drift = session_drift([same], floor=0.01)
    assert drift.var == 0 and drift.sd == 0.01
    assert session_drift([[[100.0, 101.0]]]).df == 0  # one run: nothing to say


def _simulate(rng: np.random.Generator, true: float, between: float, within: float) -> tuple[list[list[float]], ...]:
    """A search's shape: the defaults in four runs (screening, more, two looks), a candidate in two screening-like
    runs and its confirmation look, every run shifted by its own draw."""
    def run(mu: float, n: int) -> list[float]:
        return list(rng.lognormal(mu + rng.normal(0, between), within, n))

    base, cand = math.log(100), math.log(100) + true
    defaults_other = [run(base, 3), run(base, 6)]
    defaults_look, cand_look = [run(base, 6)], [run(cand, 6)]
    cand_other = [run(cand, 3), run(cand, 6)]
    return defaults_other, defaults_look, cand_other, cand_look


def test_the_drift_interval_covers_a_known_ratio_at_its_level_and_trials_alone_do_not() -> None:
    rng = np.random.default_rng(2026)
    true = math.log(1.10)
    inside = welch_inside = 0
    n = 400
    for _ in range(n):
        d_other, d_look, c_other, c_look = _simulate(rng, true, between=0.06, within=0.04)
        drift = session_drift([d_other + d_look, c_other + c_look])
        r = drift_ratio(d_look, c_look, drift, 0.90)
        inside += r.low <= math.exp(true) <= r.high
        w = welch_ratio(d_look[0], c_look[0], 0.90)
        welch_inside += w.low <= math.exp(true) <= w.high
    # two-sided: an interval too wide (always inside) fails as surely as one too narrow
    assert 0.84 <= inside / n <= 0.97, inside / n
    assert welch_inside / n < 0.70, welch_inside / n  # the trials cannot see their run's shift


def test_without_drift_the_interval_is_the_trials_and_an_arm_without_spread_is_refused() -> None:
    rng = np.random.default_rng(3)
    inside = 0
    for _ in range(300):
        a, b = [list(rng.lognormal(0, 0.05, 6))], [list(rng.lognormal(0.05, 0.05, 6))]
        r = drift_ratio(a, b, session_drift([]), 0.90)
        inside += r.low <= math.exp(0.05) <= r.high
    assert 0.85 <= inside / 300 <= 0.95
    with pytest.raises(ValueError, match="arm B"):
        drift_ratio([[1.0, 2.0]], [[1.0]], session_drift([]))

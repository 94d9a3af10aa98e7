"""Trial protocol on fixed numbers: repetitions, 3-sigma rule, RSD gate, adaptive stopping."""

from __future__ import annotations

import pytest

from gluster_model.plan.protocol import Protocol, half_width_fraction, next_step, rsd, three_sigma_outliers


def _v(*xs: float) -> list[dict[str, float]]:
    return [{"write": x} for x in xs]


def test_repetitions_then_stop() -> None:
    p = Protocol(repetitions=3, outlier_rule="none")
    assert next_step(_v(100, 101), 0, p).more
    assert not next_step(_v(100, 101, 99), 0, p).more


def test_three_sigma_rule() -> None:
    base = [100.0, 101, 99, 100, 102, 98, 100, 101, 99, 100, 101, 100]
    assert three_sigma_outliers(_v(*base)) == []
    assert three_sigma_outliers(_v(*base, 160)) == [12]
    # With n values none can lie beyond (n-1)/sqrt(n) sd: a wild value among 3 is never caught.
    assert three_sigma_outliers(_v(100, 100, 1000)) == []
    p = Protocol(repetitions=13, outlier_rule="three_sigma", max_reruns=2)
    step = next_step(_v(*base, 160), 0, p)
    assert step.more and step.flag == [12] and "3-sigma" in step.reason
    done = next_step(_v(*base, 160), 2, p)  # re-runs used up: flagged, stop, unstable
    assert not done.more and done.flag == [12] and done.unstable


def test_rsd_gate_replaces_the_furthest_trial_then_gives_up() -> None:
    p = Protocol(repetitions=3, outlier_rule="rsd", rsd_max=0.05, max_reruns=1)
    assert rsd([100, 100, 130]) == pytest.approx(17.3205 / 110, rel=1e-4)
    step = next_step(_v(100, 130, 101), 0, p)
    assert step.more and step.flag == [1]
    assert not next_step(_v(100, 101, 99), 1, p).more
    final = next_step(_v(100, 101, 140), 1, p)
    assert not final.more and final.unstable and "RSD" in final.reason


def test_adaptive_stop_on_confidence_half_width() -> None:
    # mean 100, sd 1, n 4: t(0.975, 3) = 3.182 -> half width 1.59 % of the mean
    xs = [99.0, 101, 99, 101]
    assert half_width_fraction(xs) == pytest.approx(3.182446 * 1.1547 / 2 / 100, rel=1e-3)
    p = Protocol(repetitions=3, max_repetitions=8, adaptive=True, ci_fraction=0.02, outlier_rule="none")
    assert next_step(_v(90, 110, 100), 0, p).more          # 3 noisy values: keep going
    assert not next_step(_v(*xs), 0, p).more               # under 2 %: stop
    wide = next_step(_v(90, 110, 95, 105, 92, 108, 97, 103), 0, p)
    assert not wide.more  # the cap (8) ends it even though the interval is still wide
    with pytest.raises(ValueError, match="max_repetitions must be at least repetitions"):
        Protocol(repetitions=5, max_repetitions=2)

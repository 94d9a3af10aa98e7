"""Pure parts of the collector: cache-regime sizing, data-phase time, the duration estimate and its calibration."""

from __future__ import annotations

import pytest

from gluster_model.bench.workload import Workload
from gluster_model.bench.iozone import IOZONE_NEXT_TEST_S
from gluster_model.campaign.estimate import TrialCost, estimate_seconds, fit_trial_cost
from gluster_model.campaign.sizing import io_seconds, regime, size_past_ram
from gluster_model.units import parse_size
from gluster_model.plan.file import Expanded
from gluster_model.plan.protocol import Protocol

GiB = 1 << 30


def _w(**kw: object) -> Workload:
    base: dict[str, object] = {"tests": ["write", "read"], "file_size": "64m", "record_size": "128k", "threads": 4}
    base.update(kw)
    return Workload.model_validate(base)


def test_size_past_ram_grows_each_clients_share_past_its_ram() -> None:
    # 4 threads on 2 clients: 2 files per client must together exceed 1.25 x 8 GiB.
    w = size_past_ram(_w(), 8 * GiB, clients_used=2)
    per_file = parse_size(w.file_size)
    assert 2 * per_file >= 1.25 * 8 * GiB
    assert 2 * per_file < 1.25 * 8 * GiB + 2 * 1024 * 1024  # no more than needed (kB rounding)
    assert regime(w, 8 * GiB, 2) == "uncached"
    assert regime(_w(), 8 * GiB, 2) == "cached"


def test_size_past_ram_leaves_large_files_and_odirect_alone() -> None:
    big = _w(file_size="20g")
    assert size_past_ram(big, 8 * GiB, 4) is big
    direct = _w(sync="odirect")
    assert size_past_ram(direct, 8 * GiB, 1) is direct
    assert regime(direct, 8 * GiB, 1) == "direct"


def test_io_seconds_counts_every_test_pass() -> None:
    # 4 threads x 64 MiB = 256 MiB; write at 128 MiB/s (2 s) and read at 256 MiB/s (1 s).
    assert io_seconds({"write": 128 * 1024, "read": 256 * 1024}, 64 << 20, 4) == pytest.approx(3.0)
    assert io_seconds({"write": 0.0}, 64 << 20, 4) == 0.0


def test_fit_trial_cost_recovers_startup_and_rate() -> None:
    rate = 200 * 2**20
    samples = [(b, 7.5 + b / rate) for b in (16 << 20, 64 << 20, 256 << 20, 1 << 30)]
    cost = fit_trial_cost(samples)
    assert cost is not None
    assert cost.startup_s == pytest.approx(7.5)
    assert cost.bytes_per_s == pytest.approx(rate)
    assert "4 stored trial" in cost.source


def test_fit_trial_cost_needs_distinct_sizes_and_falls_back_when_unphysical() -> None:
    assert fit_trial_cost([(1 << 20, 9.0)] * 5) is None
    assert fit_trial_cost([(1 << 20, 9.0), (2 << 20, 9.5)]) is None
    odd = fit_trial_cost([(1 << 20, 12.0), (2 << 20, 10.0), (4 << 20, 9.0)])  # bigger files faster: noise
    assert odd is not None and odd.startup_s == pytest.approx(10.0) and "start-up only" in odd.source


def test_estimate_uses_the_cost_model() -> None:
    from gluster_model.plan.factors import realize

    run = realize({"layout": "distribute", "file_size": 100 << 20, "threads": 2},
                  {"tests": ["write", "read"], "record_size": "128k"}, {})
    ex = Expanded(runs=[run])
    p = Protocol(warmups=1, repetitions=3)
    cost = TrialCost(startup_s=5, bytes_per_s=100 * 2**20, volume_s=10)
    # per trial: 5 s + iozone's pause before its second test + 2 passes x 200 MiB at 100 MiB/s = 13.5 s;
    # 4 trials; one volume; no baselines.
    assert estimate_seconds(ex, p, baselines=False, cost=cost) == pytest.approx(4 * (9 + IOZONE_NEXT_TEST_S) + 10)
    slow = TrialCost(startup_s=5, bytes_per_s=50 * 2**20, volume_s=10)
    assert estimate_seconds(ex, p, baselines=False, cost=slow) == pytest.approx(4 * (13 + IOZONE_NEXT_TEST_S) + 10)

"""Pure parts of the collector: cache-regime sizing, data-phase time, the duration estimate and its calibration."""

from __future__ import annotations

import pytest

from gluster_model.bench.workload import FixedWorkload, Workload
from gluster_model.bench.iozone import IOZONE_NEXT_TEST_S
from gluster_model.campaign.estimate import TrialCost, estimate_seconds, fit_trial_cost
from gluster_model.campaign.sizing import io_seconds, regime, size_past_ram, sizing_step
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

    run = realize({"layout": "distribute", "file_size": 100 << 20, "record_size": 128 << 10, "threads": 2},
                  FixedWorkload(tests=["write", "read"]), {})
    ex = Expanded(runs=[run])
    p = Protocol(warmups=1, repetitions=3)
    cost = TrialCost(startup_s=5, bytes_per_s=100 * 2**20, volume_s=10)
    # per trial: 5 s + iozone's pause before its second test + 2 passes x 200 MiB at 100 MiB/s = 13.5 s;
    # 4 trials; one volume; no baselines.
    assert estimate_seconds(ex, p, baselines=None, cost=cost) == pytest.approx(4 * (9 + IOZONE_NEXT_TEST_S) + 10)
    slow = TrialCost(startup_s=5, bytes_per_s=50 * 2**20, volume_s=10)
    assert estimate_seconds(ex, p, baselines=None, cost=slow) == pytest.approx(4 * (13 + IOZONE_NEXT_TEST_S) + 10)


def test_sizing_step_jumps_by_the_power_of_two_the_rate_asks_for() -> None:
    MiB = 1 << 20
    assert sizing_step(4 * MiB, 0.3, 0.25, 256 * MiB) == 1  # the target is met: this size stays
    assert sizing_step(4 * MiB, 0.2, 0.25, 256 * MiB) == 2  # 1.25x short: at least a doubling
    assert sizing_step(4 * MiB, 0.05, 0.25, 256 * MiB) == 8  # 5x short: the next power of two
    assert sizing_step(4 * MiB, 0.0625, 0.25, 256 * MiB) == 4  # exactly 4x short: 4, not 8
    assert sizing_step(4 * MiB, 0.001, 0.25, 256 * MiB) == 16  # never more than 16x a step
    assert sizing_step(4 * MiB, 0.0, 0.25, 256 * MiB) == 16  # no time measured: the largest step
    assert sizing_step(64 * MiB, 0.01, 0.25, 256 * MiB) == 4  # kept under the cap
    assert sizing_step(200 * MiB, 0.01, 0.25, 256 * MiB) == 1  # not even a doubling fits under the cap
    assert sizing_step(4 * MiB, 0.01, 0.25, 256 * MiB, fits=lambda n: n <= 20 * MiB) == 4  # what the bricks hold
    assert sizing_step(4 * MiB, 0.01, 0.25, 256 * MiB, fits=lambda n: n < 8 * MiB) == 1


def test_sizing_steps_reach_the_target_in_few_trials_where_doubling_took_a_dozen() -> None:
    # dd at 1 byte a block on the lab moves ~20 kB/s whatever the file; from 4 KB to half a second is 10 KB
    rate, size, sizes = 20e3, 4096, [4096]
    while (step := sizing_step(size, size / rate, 0.5, 256 << 20)) > 1:
        size *= step
        sizes.append(size)
    assert 0.5 <= size / rate < 1.0  # past the target, by less than the power of two it rounds up to
    assert len(sizes) == 2
    rate, size, sizes = 800e6, 16 << 20, [16 << 20]  # 16 MB blocks at 800 MB/s: 400 MB needed, capped 256 MB
    while (step := sizing_step(size, size / rate, 0.5, 256 << 20)) > 1:
        size *= step
        sizes.append(size)
    assert sizes == [16 << 20, 256 << 20]


def _run(lab: tuple[tuple[str, str], ...] = (), **point: object):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from gluster_model.plan.factors import realize

    base: dict[str, object] = {"layout": "replicate", "replica": 2, "servers": 2, "clients": 2,
                               "file_size": 64 << 20, "threads": 4}
    return replace(realize({**base, "record_size": 1 << 20, **point}, FixedWorkload(tests=["write", "read"]), {}),
                   lab=lab)


def test_a_throttled_link_or_disk_of_the_setting_caps_the_estimates_rate() -> None:
    """The rate a pass is estimated at is never faster than the setting's slowest stage allows: a replica-2 write
    over 100 Mbit/s client links sends both copies, 2 x 12.5 MB/s / 2; a read takes one copy, 2 x 12.5."""
    from gluster_model.campaign.estimate import STAGE_EFFICIENCY, stage_rate

    mb = 2**20
    link = _run((("link", "100mbit"),))
    assert stage_rate(link, "write") == pytest.approx(2 * 100e6 / 8 / mb / 2 * mb * STAGE_EFFICIENCY)
    assert stage_rate(link, "read") == pytest.approx(2 * 100e6 / 8 / mb * mb * STAGE_EFFICIENCY, rel=0.35)
    disk = _run((("disk", "10MB/s"),))  # two servers each write every copy: 2 x 10 MB/s / 2
    assert stage_rate(disk, "write") == pytest.approx(10 * 10**6 * STAGE_EFFICIENCY, rel=1e-6)
    assert stage_rate(_run(), "write") is None and stage_rate(_run((("link", "50%"),)), "write") is None
    # the estimate: two passes of 256 MiB, each at min(default rate, the stage's)
    p = Protocol(warmups=0, repetitions=1)
    cost = TrialCost(startup_s=0, bytes_per_s=100 * 2**20, volume_s=0)
    io = estimate_seconds(Expanded([link]), p, baselines=None, cost=cost) - IOZONE_NEXT_TEST_S
    assert io == pytest.approx(256 * mb / stage_rate(link, "write") + 256 * mb / stage_rate(link, "read"))


def test_a_run_measured_before_is_estimated_at_what_its_trials_took() -> None:
    """The store's own history: a run of the same identity and hardware setting on the cluster takes what its
    kept trials took (each trial once, whatever its metrics; failed ones, warm-ups and other clusters left out)."""
    from gluster_model.campaign.estimate import measured_trial_seconds, run_key

    run = _run((("link", "1gbit"),))
    rows = [{"cluster": "c", "trial_status": "ok", "trial_id": t, "config_hash": run.config_hash,
             "setting": {"link": "1gbit"}, "seconds": s, "metric": m}
            for t, s in ((1, 30.0), (2, 40.0)) for m in ("write", "read")]
    rows += [{**rows[0], "trial_id": 3, "trial_status": "failed", "seconds": 500.0},
             {**rows[0], "trial_id": 6, "warmup": True, "seconds": 3.0},  # a sizing step: a smaller file
             {**rows[0], "trial_id": 4, "cluster": "other", "seconds": 900.0},
             {**rows[0], "trial_id": 5, "setting": {"link": "100mbit"}, "seconds": 90.0}]
    measured = measured_trial_seconds(rows, "c")
    assert measured[run_key(run.config_hash, run.lab)] == pytest.approx(35.0)
    p = Protocol(warmups=1, repetitions=3)
    assert estimate_seconds(Expanded([run]), p, baselines=None, cost=TrialCost(volume_s=0),
                            measured=measured) == pytest.approx(4 * 35.0)
    slower = replace_lab(run, (("link", "100mbit"),))
    assert estimate_seconds(Expanded([slower]), p, baselines=None, cost=TrialCost(volume_s=0),
                            measured=measured) == pytest.approx(4 * 90.0)


def replace_lab(run, lab):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    return replace(run, lab=lab)


def test_the_shipped_campaigns_took_what_the_dry_run_estimates_within_30_percent() -> None:
    """benchmarks/estimate_accuracy.py: each shipped plan's estimate on an empty store against the seconds its
    trials took (31 tables: the configuration and hardware studies and the upgrade proofs)."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "benchmarks" / "estimate_accuracy.py"), "--json"], check=True,
                         capture_output=True, text=True, cwd=root)
    rows = json.loads(out.stdout)
    assert len(rows) == 31 and all(r["trials"] >= 12 for r in rows)
    # recomputed from the table, not taken from the script: the recorded minutes are the trials' own seconds
    import pandas as pd

    g = pd.read_csv(root / "data" / "gluster_config.csv")
    g = g[g["campaign"].str.startswith("gluster_config@")]
    assert rows[0]["table"] == "gluster_config" and rows[0]["recorded_min"] == pytest.approx(g["seconds"].sum() / 60)
    outside = [(r["table"], round(r["ratio"], 2)) for r in rows if not 0.7 <= r["ratio"] <= 1.3]
    assert not outside


def test_a_plan_pays_each_baseline_once_per_value_of_the_knobs_that_move_it() -> None:
    """Settings in plan order: today measures both; the link alone the network's; the disks alone the disks';
    back to today's link with the new disks nothing (both measured under those knobs already); the CPU moves
    both. Without keep every setting pays both; a baseline the plan does not want is never paid."""
    from gluster_model.campaign.estimate import SETTING_S, setting_seconds
    from gluster_model.plan.file import Baselines

    settings = [(("link", "1gbit"), ("disk", "100MB/s")), (("link", "500mbit"), ("disk", "100MB/s")),
                (("link", "500mbit"), ("disk", "40MB/s")), (("link", "1gbit"), ("disk", "40MB/s")),
                (("link", "1gbit"), ("disk", "40MB/s"), ("cpu", "0.5"))]
    # the default specs: iperf3 5 s + 1 s left out, fio two tests of 5 s, each with its fixed part
    net, disk = 5 + 1 + 1.5, 2 * 5 + 1.0
    assert setting_seconds(settings, Baselines()) == pytest.approx(5 * SETTING_S + (net + disk) + net + disk + 0
                                                                    + (net + disk))
    assert setting_seconds(settings, Baselines(keep=False)) == pytest.approx(5 * (SETTING_S + net + disk))
    assert setting_seconds(settings, Baselines(network=False)) == pytest.approx(5 * SETTING_S + 3 * disk)
    assert setting_seconds([()], Baselines()) == pytest.approx(SETTING_S + net + disk)
    # the plan's specs, not constants: a shorter pass and fewer fio tests cost less
    short = Baselines.model_validate({"iperf": {"seconds": 2, "omit": 1}, "fio": {"runtime": 2, "tests": ["seq_read"]}})
    assert setting_seconds([()], short) == pytest.approx(SETTING_S + (2 + 1 + 1.5) + (2 + 1.0))

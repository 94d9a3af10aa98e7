"""The power statement of `collect --dry-run` (stats/power.py) against the comparison it speaks for, simulated
with known truth and a fixed seed: two campaigns of one plan, one run of each configuration a side, the first
configuration slower by the change stated, the others unchanged; `compare`'s own rule (run_ratio, Holm, the 5%
margin) calls it slower in about the stated 80% of repeats, and 60% of that change in well under half."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gluster_model.stats.power import BETWEEN_RUN_SD, detectable_change
from gluster_model.stats.ratios import holm_adjusted, run_ratio


def _called(change: float, trials: int, within: float, rows: int, repeats: int, rng: np.random.Generator) -> float:
    hits = 0
    for _ in range(repeats):
        ps, ratios = [], []
        for k in range(rows):
            true = math.log(1 - change) if k == 0 else 0.0
            a = [rng.lognormal(math.log(100) + rng.normal(0, BETWEEN_RUN_SD), within, trials)]
            b = [rng.lognormal(math.log(100) + true + rng.normal(0, BETWEEN_RUN_SD), within, trials)]
            r = run_ratio(a, b, 0.95, BETWEEN_RUN_SD)
            ps.append(r.p_changed())
            ratios.append(r.ratio)
        hits += holm_adjusted(ps)[0] <= 0.05 and ratios[0] < 0.95
    return hits / repeats


@pytest.mark.parametrize("trials,within,rows", [(3, 0.02, 4), (5, 0.03, 6)])
def test_the_change_stated_is_called_at_the_stated_power(trials: int, within: float, rows: int) -> None:
    rng = np.random.default_rng(5)
    d = detectable_change(trials, within, BETWEEN_RUN_SD, rows)
    at = _called(d.change, trials, within, rows, 400, rng)
    assert 0.74 <= at <= 0.92, at  # measured 0.80 and 0.85 (a lower bound by construction)
    assert _called(0.6 * d.change, trials, within, rows, 400, rng) < 0.5


def test_more_trials_and_fewer_rows_detect_less_and_noise_more() -> None:
    base = detectable_change(3, 0.03, BETWEEN_RUN_SD, 8).change
    assert detectable_change(6, 0.03, BETWEEN_RUN_SD, 8).change < base
    assert detectable_change(3, 0.03, BETWEEN_RUN_SD, 2).change < base
    assert detectable_change(3, 0.06, BETWEEN_RUN_SD, 8).change > base
    # never below the margin: a change under 5% is never called slower, however quiet the cluster
    assert detectable_change(50, 0.001, 0.0, 1).change >= 0.05
    with pytest.raises(ValueError, match="no spread"):
        detectable_change(1, 0.03, BETWEEN_RUN_SD, 2)


def test_the_dry_run_states_it_with_the_noise_the_store_has_seen(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`collect --dry-run` says how large a slowdown two campaigns of the plan will tell; with the store's trials
    of the cluster their spread inside a run, else the assumed one, named as such."""
    from pathlib import Path

    from click.testing import CliRunner

    from gluster_model.campaign.preview import within_run_sd
    from gluster_model.cli import cli
    from gluster_model.stats.power import ASSUMED_WITHIN_SD

    data = Path(__file__).resolve().parents[1] / "data"
    plan = tmp_path / "p.yaml"
    plan.write_text("name: p\nfactors: {layout: distribute, file_size: [1MB, 4MB], threads: 3}\n"
                    "workload: {tests: [write, read]}\nprotocol: {repetitions: 3}\n")
    out = CliRunner().invoke(cli, ["collect", "--cluster", str(data / "clusters" / "gluster_ansible_hc.yml"),
                                   "--plan", str(plan), "--dry-run", "--store", str(tmp_path / "none.db")])
    assert out.exit_code == 0, out.output
    text = " ".join(out.output.split())
    # two runs, two tests of two metrics each: 8 rows; three trials a side
    d = detectable_change(3, ASSUMED_WITHIN_SD, BETWEEN_RUN_SD, 8)
    assert (f"write: {d.change * 100:.1f}% slower, from an assumed 3% within a run: the store has no write trials "
            "of this cluster") in text, text
    # the store's spread: pooled over runs of two trials or more, kept trials only, by metric
    rows = [{"cluster": "c", "trial_status": "ok", "warmup": False, "outlier": False, "metric": "write",
             "run_id": run, "value": v} for run, vs in ((1, (100.0, 110.0)), (2, (50.0, 55.0, 60.5))) for v in vs]
    rows += [{**rows[0], "warmup": True, "value": 1.0}, {**rows[0], "cluster": "other", "value": 1.0}]
    (sd, dof), = within_run_sd(rows, "c").values()
    logs = [np.log([100.0, 110.0]), np.log([50.0, 55.0, 60.5])]
    pooled = sum(((x - x.mean()) ** 2).sum() for x in logs) / 3
    assert dof == 3 and sd == pytest.approx(math.sqrt(pooled))

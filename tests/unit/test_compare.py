"""compare's verdicts on sides with known truth: null comparisons rarely alarm (at most the stated level, over
every row at once), injected slowdowns are found with their ratio inside the interval, "the same" only where the
trials show it, and inputs that cannot be compared get one line and exit 2."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gluster_model.compare import MismatchError, Side, compare
from gluster_model.compare.verdicts import judge

ROOT = Path(__file__).resolve().parents[2]
V4 = ROOT / "tests" / "data" / "stores" / "v4_store.db"


def side(rng: np.random.Generator, means: dict[str, float], *, runs: int = 2, trials: int = 3, run_sd: float = 0.02,
         trial_sd: float = 0.02, store: str = "s", plan: str = "p", metric: str = "write") -> Side:
    rows = []
    run_id = 0
    for config, mean in means.items():
        for _ in range(runs):
            run_id += 1
            shift = rng.normal(0, run_sd)
            for t in range(trials):
                rows.append({"store": store, "run_id": run_id, "config_hash": config, "layout": "replicate",
                             "record_size": int(config[1:]) if config[1:].isdigit() else 0,
                             metric: mean * float(np.exp(shift + rng.normal(0, trial_sd))), "trial": t})
    return Side(store, [f"{plan}@c"], plan, "c", pd.DataFrame(rows), 5, {"network_gbps": 1.0})


CONFIGS = {f"r{k}": 100.0 * k for k in (4, 64, 1024, 4096)}


def test_null_comparisons_alarm_at_most_at_the_stated_level() -> None:
    """400 comparisons of unchanged sides (4 configurations, 2 runs of 3 trials, run and trial noise of 2%):
    the share with any row called slower is at most 5% (Holm over the rows); benchmarks/compare_power.py runs
    the full simulation on the measured noise."""
    rng = np.random.default_rng(4)
    alarms = sum(judge(side(rng, CONFIGS), side(rng, CONFIGS)).exit_status for _ in range(400))
    assert alarms / 400 <= 0.05, alarms


def test_a_slowdown_is_found_with_its_ratio_inside_the_interval() -> None:
    rng = np.random.default_rng(5)
    for drop in (0.10, 0.20):
        after = {k: v * (1 - drop) for k, v in CONFIGS.items()}
        c = judge(side(rng, CONFIGS, runs=3, run_sd=0.01), side(rng, after, runs=3, run_sd=0.01))
        assert c.exit_status == 1 and len(c.slower) == 4, [r.verdict for r in c.rows]
        held = sum(r.ratio.low <= 1 - drop <= r.ratio.high for r in c.rows)
        assert held >= 3  # 95% intervals: all four, or one out by chance


def test_the_same_is_said_only_where_the_trials_show_it() -> None:
    rng = np.random.default_rng(6)
    tight = judge(side(rng, CONFIGS, runs=4, run_sd=0.005, trial_sd=0.005),
                  side(rng, CONFIGS, runs=4, run_sd=0.005, trial_sd=0.005))
    assert {r.verdict for r in tight.rows} == {"same"} and tight.exit_status == 0
    noisy = judge(side(rng, CONFIGS, runs=2, run_sd=0.10, trial_sd=0.10),
                  side(rng, CONFIGS, runs=2, run_sd=0.10, trial_sd=0.10))
    assert "same" not in {r.verdict for r in noisy.rows} and noisy.exit_status == 0


def test_inputs_that_cannot_be_compared_are_one_line_and_exit_2() -> None:
    rng = np.random.default_rng(7)
    a = side(rng, CONFIGS)
    cases = [
        (side(rng, CONFIGS, plan="other"), "ran plan"),
        (side(rng, {"r8": 1.0}), "no configuration measured on both sides"),
        (Side("s", ["p@c"], "p", "c", pd.DataFrame(), 5), "no finished trials"),
        (side(rng, CONFIGS, metric="read"), "no metric measured on both sides"),
    ]
    older = side(rng, CONFIGS)
    older.schema = 4
    cases.append((older, "schema version"))
    for b, message in cases:
        with pytest.raises(MismatchError, match=message) as err:
            judge(a, b)
        assert err.value.cli_status == 2 and "\n" not in str(err.value)


def test_compare_reads_campaigns_of_stores_without_changing_them(tmp_path: Path) -> None:
    """The previous release's store: its drift campaign against its first (3% faster: within the margin, so
    neither slower nor faster), its 100 Mbit/s setting against 1 Gbit/s (slower, with the link named),
    last (none here: another setting is not its history), and another store (a migrated copy: schema 6
    against 4 is refused until migrated)."""
    before = V4.read_bytes()
    c = compare(str(V4), "hw@lab:link=1gbit,disk=60MB/s", campaign="hw@lab:link=1gbit,disk=60MB/s,again")
    assert c.exit_status == 0 and {r.verdict for r in c.rows} <= {"same", "undecided"}
    assert all(r.ratio.ratio == pytest.approx(1.03, rel=1e-3) for r in c.rows)
    slow = compare(str(V4), "hw@lab:link=1gbit,disk=60MB/s", campaign="hw@lab:link=100mbit,disk=60MB/s")
    assert slow.exit_status == 1 and [h[0] for h in slow.hardware] == ["network_gbps"]
    # a plan's other hardware setting is not its history, nor is its drift repeat
    for campaign in ("hw@lab:link=100mbit,disk=60MB/s", "hw@lab:link=1gbit,disk=60MB/s"):
        with pytest.raises(MismatchError, match="no campaign of plan hw on lab at the same setting before"):
            compare(str(V4), "last", campaign=campaign)
    with pytest.raises(MismatchError, match="not a campaign of .* nor a store file"):
        compare(str(V4), "nothing-here")
    copy = tmp_path / "copy.db"
    shutil.copy(V4, copy)
    from gluster_model.store import open_store

    with open_store(copy):  # migrated to the current schema
        pass
    with pytest.raises(MismatchError, match="schema version"):
        compare(str(copy), str(V4), campaign="hw@lab:link=1gbit,disk=60MB/s")
    assert V4.read_bytes() == before


def test_interleaved_sides_run_in_alternating_pairs_drawn_from_the_name() -> None:
    from gluster_model.campaign.records import interleaved_order, side_campaign
    from gluster_model.store.identity import Look

    orders = {tuple(interleaved_order(f"regression{i}@lab", 2)) for i in range(12)}
    assert orders == {(("A", 1), ("B", 1), ("B", 2), ("A", 2)), (("B", 1), ("A", 1), ("A", 2), ("B", 2))}
    three = [s for s, _ in interleaved_order("x@lab", 3)]
    assert three.count("A") == three.count("B") == 3 and three[:2] == three[4:] == three[2:4][::-1]
    assert interleaved_order("x@lab", 2) == interleaved_order("x@lab", 2) and side_campaign(Look("x@lab", "B", 2)) == "x@lab.B2"


def test_an_interleaved_comparison_with_the_drift_pooled_holds_its_level_and_finds_a_slowdown() -> None:
    """Two looks a side, every run shifted by its own draw (3%) beyond its trials' noise (2%): with the drift
    pooled over the rows, null comparisons alarm at most about the stated level and a 20% slowdown is found with
    its ratio inside every row's interval; each row judged by its own two run means alone could not tell."""
    rng = np.random.default_rng(5)
    alarms = 0
    n = 200
    for _ in range(n):
        a = side(rng, CONFIGS, runs=2, run_sd=0.03)
        b = side(rng, CONFIGS, runs=2, run_sd=0.03)
        alarms += judge(a, b, pooled_drift=True, sides_apart=["write_behind"]).exit_status
    assert alarms / n <= 0.08, alarms / n
    a = side(rng, CONFIGS, runs=2, run_sd=0.03)
    b = side(rng, {k: v * 0.8 for k, v in CONFIGS.items()}, runs=2, run_sd=0.03)
    pooled = judge(a, b, pooled_drift=True, sides_apart=["write_behind"])
    assert pooled.exit_status == 1 and all(r.verdict == "slower" and r.ratio.low <= 0.8 <= r.ratio.high
                                           for r in pooled.rows)
    assert any("sides apart by write_behind" in note for note in pooled.notes)
    alone = judge(a, b)  # each row's own two run means: Welch on 1 + 1 degrees of freedom
    assert sum(r.verdict == "slower" for r in alone.rows) < len(pooled.rows)


def test_an_interleaved_plan_names_a_side_factor_of_two_levels_that_is_no_hardware() -> None:
    from gluster_model.errors import ConfigError
    from gluster_model.plan.file import PlanFile, check_sides

    base = {"name": "r", "factors": {"write_behind": [True, False], "record_size": ["8KB", "1MB"]},
            "design": {"type": "grid", "sides": "write_behind"}, "workload": {"tests": ["write"]}}
    check_sides(PlanFile.model_validate(base))
    for design, factors, words in (({"sides": "read_ahead"}, {}, "not a factor of the plan"),
                                   ({}, {"write_behind": [True]}, "has 1 level"),
                                   ({"sides": "link"}, {"link": ["1gbit", "100mbit"]}, "lab hardware")):
        plan = PlanFile.model_validate({**base, "design": {**base["design"], **design},
                                        "factors": {**base["factors"], **factors}})
        with pytest.raises(ConfigError, match=words):
            check_sides(plan)
    with pytest.raises(ValueError, match="cannot be adaptive"):
        PlanFile.model_validate({**base, "design": {"type": "adaptive", "budget": 8, "sides": "write_behind"}})


def test_against_sides_without_an_interleaved_comparison_is_one_line() -> None:
    with pytest.raises(MismatchError, match="no interleaved comparison"):
        compare(str(V4), "sides", campaign="hw@lab:link=1gbit,disk=60MB/s")


def _odd_store(path: Path, campaigns: list[tuple[str, float, str, str]]) -> None:
    """Two-configuration campaigns of one plan: (name, scale, metric, unit), three trials a run."""
    from gluster_model.config.cluster import cluster_from_data
    from gluster_model.plan.file import PlanFile, expand
    from gluster_model.store import TrialRecord, open_store
    from gluster_model.store.identity import CampaignInfo, RunStatus
    from gluster_model.store.store import now

    cluster = cluster_from_data({"name": "c1", "servers": [{"host": "10.9.0.1", "brick_paths": ["/b"]}],
                                 "clients": ["10.9.0.3"]}, "c.yaml", Path("."))
    plan = PlanFile.model_validate({"name": "p", "factors": {"record_size": ["64KB", "1MB"]}})
    runs = expand(plan, cluster).runs
    with open_store(path) as st:
        for name, scale, metric, unit in campaigns:
            cid = st.ensure_campaign(name, "p", "h", plan.model_dump(mode="json"), "c1", {}, "0",
                                     CampaignInfo(cluster="c1"))
            ids = st.register_runs(cid, runs)
            for i, r in enumerate(runs):
                rid = ids[r.config_hash][0]
                st.start_run(rid)
                for k in range(3):
                    st.add_trial(rid, TrialRecord(idx=k, warmup=False, status="ok", file_size=1 << 22,
                                                  started_at=now(), seconds=2.0, engine_seconds=1.8, argv=["x"],
                                                  measurements=[(metric, scale * 1000 * (1 + i) * (1 + 0.01 * k),
                                                                 unit, None, None)], raw={}))
                st.finish_run(rid, RunStatus.DONE, regime="direct")


def test_small_file_rates_are_compared_in_their_unit_and_zero_rates_refused_in_one_line(tmp_path: Path) -> None:
    from gluster_model.present.compare import lines

    rates = tmp_path / "rates.db"
    _odd_store(rates, [("a", 1.0, "file_create", "files/s"), ("b", 1.3, "file_create", "files/s")])
    c = compare(str(rates), "a", campaign="b")
    assert {r.unit for r in c.rows} == {"files/s"} and all(r.verdict == "faster" for r in c.rows)
    assert all(r.ratio.ratio == pytest.approx(1.3, rel=1e-6) for r in c.rows)
    assert "A and B are means in files/s (file_create)" in lines(c)
    zero = tmp_path / "zero.db"
    _odd_store(zero, [("a", 0.0, "write", "kB/s"), ("b", 1.0, "write", "kB/s")])
    with pytest.raises(MismatchError, match="side A: no positive measurements"):
        compare(str(zero), "a", campaign="b")

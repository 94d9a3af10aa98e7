"""An interleaved comparison on the real lab: a plan whose design names `sides` (write-behind on, then off) runs
its two sides in alternating campaigns (A B B A or B A A B, drawn from the name), each recorded as one side of a
comparison; the dry run says how large a slowdown it can tell; `glmodel compare --against sides` matches the
sides' configurations across the option that tells them apart and calls 8 KB writes without write-behind slower
(exit 1), the ratio recomputed here from the stored trials; a second collect runs nothing."""

from __future__ import annotations

import json
import math
from pathlib import Path

import yaml

from gluster_model.campaign.records import interleaved_order
from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import glmodel, kept_trials

# 8 KB records without O_SYNC: write-behind gathers them into larger writes; off, each is a round trip to both
# bricks (the tuning search measured -37% for random 8 KB writes, and far more for sequential ones)
# every node held to 1 GB of RAM: the sides are measured at the plan's hardware setting, like any plan's runs
PLAN = {"name": "abba", "factors": {"layout": "replicate", "replica": 2, "servers": 2, "file_size": "16MB",
                                    "record_size": "8KB", "threads": 2, "sync": "none", "ram": "1GB",
                                    "write_behind": ["on", "off"]},
        "design": {"type": "grid", "sides": "write_behind", "looks": 2},
        "workload": {"tests": ["write"]},
        "protocol": {"warmups": 0, "repetitions": 3, "outlier_rule": "none", "remount": "never"},
        "baselines": {"network": False, "disk": False}}


def test_an_interleaved_plan_alternates_its_sides_and_compare_finds_write_behind_off_slower(
        lab_put_back: LabState, tmp_path: Path) -> None:
    lab = lab_put_back
    plan, store = tmp_path / "abba.yaml", str(tmp_path / "abba.db")
    plan.write_text(yaml.safe_dump(PLAN))
    args = ("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--store", store)
    dry = glmodel(*args, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    text = " ".join(dry.stdout.split())
    assert "side A write_behind=on, side B write_behind=off, each in 2 campaign(s)" in text, text
    assert "2 run(s) a side) from about: write:" in text and "4 run(s)" in text, text
    done = glmodel(*args, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    base = "abba@lab:ram=1GB"
    order = [f"{base}.{side}{look}" for side, look in interleaved_order(base, 2)]
    with open_store(store, create=False) as st:
        camps = st.campaigns()
        # the campaigns in the interleaved order, each one side of a comparison, each with its side's run
        assert [c.name for c in camps] == order
        assert {i.purpose.value for i in st.campaign_infos().values()} == {"comparison"}
        # each look recorded in the store's columns, in the order it ran (schema 6): the name is only a label
        assert [(c.comparison, c.side, c.look.look if c.look else None) for c in camps] == \
            [(base, side, look) for side, look in interleaved_order(base, 2)]
        # each side measured at the plan's setting: recorded, and every node's RAM measured at 1 GB
        for c in camps:
            assert c.setting == {"ram": "1GB"}
            assert all(h.facts.ram_bytes is not None and h.facts.ram_bytes <= 1 << 30 for h in st.hosts(int(c.id)))
        logs: dict[str, list[list[float]]] = {"A": [], "B": []}
        for c in camps:
            (run,) = st.runs(int(c.id))
            side = str(c.side)
            assert run.features["write_behind"] is (side == "A") and run.status == "done"
            trials = kept_trials(st.trials(run.id))
            assert len(trials) == 3
            logs[side].append([math.log(float(next(m.value for m in t.measurements if m.metric == "write")))
                               for t in trials])
    out = glmodel("compare", "--store", store, "--against", "sides", "--json")
    assert out.returncode == 1, out.stdout[-2000:] + out.stderr
    result = json.loads(out.stdout)
    (row,) = result["rows"]
    assert row["metric"] == "write" and row["verdict"] == "slower" and row["runs"] == [2, 2]
    # the ratio: side B's mean run log over side A's, from the store's trials
    centre = {s: sum(sum(r) / len(r) for r in runs) / len(runs) for s, runs in logs.items()}
    assert abs(row["ratio"] - math.exp(centre["B"] - centre["A"])) < 1e-9
    assert row["low"] < row["ratio"] < row["high"] < 0.95
    assert any("sides apart by write_behind" in n for n in result["notes"])
    # the plan's base name (no campaign of its own) names the comparison too
    by_base = glmodel("compare", "--store", store, "--against", "sides", "--campaign", base, "--json")
    assert by_base.returncode == 1 and json.loads(by_base.stdout)["rows"] == result["rows"], by_base.stderr
    # a second collect finds every look done and runs nothing
    again = glmodel(*args, timeout=300)
    assert again.returncode == 0 and again.stdout.count("already done; nothing to run") == 4, again.stdout[-2000:]
    with open_store(store, create=False) as st:
        assert sum(len(st.runs(int(c.id))) for c in st.campaigns()) == 4

"""The round-trip stage on real parts: small-file creates collected on the lab with delay added to every packet
(more delay is "below today" for a round trip), a bottleneck model fitted on those data alone, and `predict`
answering a shorter round trip and a faster link from them: the round trips bind, a faster link gives nothing."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from gluster_model.dataset import trial_frame
from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import glmodel

PLAN = {
    "name": "rtci",
    # today: 5 ms on every packet a node receives (a round trip gains 10 ms); below it 10 ms and 20 ms. The lab's
    # delayer runs in user space and adds milliseconds of its own to a round trip (2-6 ms measured on a 2-core
    # machine, less at longer delays), so the delays are long beside that.
    "factors": {"latency": ["5ms", "10ms", "20ms"], "layout": "replicate", "replica": 2, "servers": 2,
                "clients": 2, "engine": "fio", "file_size": "4KB", "record_size": "4KB", "threads": 4,
                "files": 30, "sync": "none"},
    # today (5ms) measured again after the others: the drift of a campaign on this lab
    "design": {"type": "grid", "hardware": {"type": "grid", "again": True}},
    "workload": {"tests": ["file_create", "file_stat"]},
    "protocol": {"warmups": 0, "repetitions": 2, "outlier_rule": "none", "remount": "never"},
    # the links and the round trip measured (iperf3 and TCP connects); no disk: 4 KiB creates do not reach it
    "baselines": {"iperf": {"seconds": 1, "omit": 0}, "disk": False},
}
WHATIF = {
    "currency": "EUR", "level": 0.9,
    "baseline": {"name": "today", "set": {"network_rtt_ms": "min"}},
    "candidates": [{"name": "round trip /2", "set": {"network_rtt_ms": "HALF"}, "price": 500},
                   {"name": "link x4", "set": {"network_gbps": "LINK4"}, "price": 1500}],
}


def test_small_file_creates_bound_by_round_trips_answer_a_shorter_one_and_not_a_faster_link(
        lab_put_back: LabState, tmp_path: Path) -> None:
    lab = lab_put_back
    plan, store, model = tmp_path / "rt.yaml", str(tmp_path / "rt.db"), tmp_path / "rt.json"
    plan.write_text(yaml.safe_dump(PLAN))
    glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(plan), "--store", store, timeout=900,
            check=True)
    with open_store(store, create=False) as st:
        frame = trial_frame(st)
        infos = st.campaign_infos()
    # what each campaign is for and was measured at is in the store's columns, not only in its name
    again = infos["rtci@lab:latency=5ms,again"]
    assert (again.again_of, again.setting, again.purpose.value, again.cluster) == (
        "rtci@lab:latency=5ms", (("latency", "5ms"),), "training", "lab")
    assert infos["rtci@lab:latency=20ms"].setting == (("latency", "20ms"),)
    assert infos["rtci@lab:latency=20ms"].again_of is None
    per = frame.groupby("campaign", observed=True).agg(rtt=("network_rtt_ms", "first"),
                                                       creates=("file_create", "mean"), n=("file_create", "size"),
                                                       stats=("file_stat", "mean"))
    assert (per["n"] == 2).all() and len(per) == 4, per
    # today measured again at the end, as a campaign of its own; the rest is about the three settings
    assert "rtci@lab:latency=5ms,again" in per.index
    per = per.drop(index="rtci@lab:latency=5ms,again")
    # the delay is measured, not trusted: each setting's round trip at least twice its added delay (a busy
    # machine only adds), and the settings in the order of their delays
    added = {"rtci@lab:latency=5ms": 10.0, "rtci@lab:latency=10ms": 20.0, "rtci@lab:latency=20ms": 40.0}
    assert set(per.index) == set(added), per
    per["added"] = [added[str(c)] for c in per.index]
    per = per.sort_values("added")
    assert (per["rtt"] >= per["added"]).all() and per["rtt"].iloc[2] > per["rtt"].iloc[0], per
    # creates wait on round trips: four times the delay, at least a third fewer creates
    assert per["creates"].iloc[2] < 0.67 * per["creates"].iloc[0], per
    # a stat past the clients' attribute caches pays its lookup: at most one stat a round trip in each of the 4
    # threads (fio's own stats, timed just after its setup had stat'ed every file, ran at many a round trip),
    # and the stats wait on the round trips as the creates do
    assert (per["stats"] / 4 * per["rtt"] / 1000 <= 1.0).all(), per
    assert per["stats"].iloc[2] < 0.67 * per["stats"].iloc[0], per

    glmodel("fit", "--store", store, "--family", "hardware", "--out", str(model), timeout=600, check=True)
    fitted = json.loads(model.read_text())
    text = json.dumps(fitted)
    assert '"round trips"' in text  # the stage entered the file_create model
    stage_model = fitted["metrics"]["file_create"]["models"]["bottleneck"]
    # the drift of today over the plan: its one run measured in both campaigns, the term at least the floor
    assert stage_model["drift_runs"] == 1 and stage_model["new_campaign_sd"] >= 0.0054
    assert stage_model["drift"] is not None and abs(stage_model["drift"]) < 1.0
    # today: the setting whose round trip measured least (what "min" names), whatever its added delay
    rtt_today, today_creates = float(per["rtt"].min()), float(per.loc[per["rtt"].idxmin(), "creates"])
    link = float(frame["network_gbps"].max())
    whatif = json.loads(json.dumps(WHATIF).replace('"HALF"', str(rtt_today / 2)).replace('"LINK4"', str(4 * link)))
    scenarios = tmp_path / "whatif.yaml"
    scenarios.write_text(yaml.safe_dump(whatif))
    out = glmodel("predict", "--model", str(model), "--scenarios", str(scenarios), "--json", timeout=300, check=True)
    answer = json.loads(out.stdout)
    (metric,) = [m for m in answer["metrics"] if m["metric"] == "file_create"]
    preds = {p["scenario"]: p for p in metric["predictions"]}
    today, half, faster = preds["today"], preds["round trip /2"], preds["link x4"]
    assert today["binds_after"] == "round trips"
    # a faster link leaves the round trips binding: no gain, bounded by them
    assert faster["binds_after"] == "round trips" and faster["basis"] == "bounded"
    assert abs(faster["value"] / today["value"] - 1) < 0.01
    assert faster["not_ranked"] == "no gain: after it the round trips still limit (the change's interval includes zero)"
    # a shorter round trip is answered from the data below today: more creates, at most twice as many (half of
    # each create's wait, its service time not)
    assert half["basis"] == "bounded" and today["value"] * 1.1 < half["value"] <= 2 * today["value"] * (1 + 1e-9)
    # and today's prediction is where today was measured (within a factor of two: the lab's delay is a process
    # in user space, and a busy machine stretches some round trips more than others)
    assert 0.5 < today["value"] / today_creates < 2


QUEUE_PLAN = {
    "name": "rtq",
    # creates (which make the files) and stats at two delays, each with 1 and 4 threads a client: the numbers of threads a client the fit needs
    # before it tries a queue the client's threads share (model/physics.py, round_trip_rate)
    "factors": {"latency": ["2ms", "8ms"], "layout": "replicate", "replica": 2, "servers": 2, "clients": 2,
                "engine": "fio", "file_size": "4KB", "record_size": "4KB", "threads": [2, 8], "files": 20,
                "sync": "none"},
    "design": {"type": "grid", "hardware": {"type": "grid"}},
    "workload": {"tests": ["file_create", "file_stat"]},
    "protocol": {"warmups": 0, "repetitions": 2, "outlier_rule": "none", "remount": "never"},
    "baselines": {"iperf": {"seconds": 1, "omit": 0}, "disk": False},
}


def test_stats_measured_at_two_numbers_of_threads_make_the_threads_customers_of_the_round_trips(
        lab_put_back: LabState, tmp_path: Path) -> None:
    """Threads varied at each delay: the store keeps every run with its threads and the round trip its campaign
    measured; the fitted round-trip stage takes the threads as its customers (no main effect of their own) with a
    queued share in [0, 1]; and `predict` asked at 4 threads, which no run had, answers between 2 and 8 threads
    (more threads never fewer stats, four times the threads at most four times the stats), as interpolated."""
    plan, store, model = tmp_path / "q.yaml", str(tmp_path / "q.db"), tmp_path / "q.json"
    plan.write_text(yaml.safe_dump(QUEUE_PLAN))
    glmodel("collect", "--cluster", str(lab_put_back.cluster_file), "--plan", str(plan), "--store", store,
            timeout=900, check=True)
    with open_store(store, create=False) as st:
        frame = trial_frame(st)
    kept = frame.groupby(["campaign", "threads"], observed=True).agg(n=("file_stat", "size"),
                                                                      rtt=("network_rtt_ms", "nunique"))
    assert len(kept) == 4 and (kept["n"] == 2).all() and (kept["rtt"] == 1).all(), kept
    glmodel("fit", "--store", store, "--family", "hardware", "--out", str(model), timeout=600, check=True)
    stage = json.loads(model.read_text())["metrics"]["file_stat"]["models"]["bottleneck"]
    assert "round trips" in stage["stages"] and 0.0 <= stage["queued"] <= 1.0
    assert not any(t["feature"] == "threads" for t in stage["terms"]), stage["terms"]
    whatif = {"currency": "EUR", "level": 0.9,
              "baseline": {"name": "today", "set": {"network_rtt_ms": "min", "threads": 4}},
              "candidates": [{"name": "2 threads", "set": {"threads": 2}, "price": 1},
                             {"name": "8 threads", "set": {"threads": 8}, "price": 1}]}
    scenarios = tmp_path / "q-whatif.yaml"
    scenarios.write_text(yaml.safe_dump(whatif))
    out = glmodel("predict", "--model", str(model), "--scenarios", str(scenarios), "--use", "bottleneck", "--json",
                  timeout=300, check=True)
    (metric,) = [m for m in json.loads(out.stdout)["metrics"] if m["metric"] == "file_stat"]
    preds = {p["scenario"]: p for p in metric["predictions"]}
    two, four, eight = preds["2 threads"]["value"], preds["today"]["value"], preds["8 threads"]["value"]
    assert two < four < eight <= 4 * two * (1 + 1e-9), (two, four, eight)
    assert preds["today"]["basis"] != "extrapolated", preds["today"]

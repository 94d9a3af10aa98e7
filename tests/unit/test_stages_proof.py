"""The stages proof as shipped (data/stages_proof/<today>*, today round_trip, cpu, link, iops and iops_descent): what
was measured, recomputed from the raw trials by the test's own lines; the protocol the data followed; the figures
data/README.md states, as benchmarks/stages_proof.py gives them; and predict's answer on the shipped model and
what-if file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from ..benchmark_scripts import load_benchmark

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "stages_proof"
PLAN = ROOT / "experiments" / "upgrade_proof" / "plan_stages.yaml"
TEMPLATE = ROOT / "experiments" / "upgrade_proof" / "whatif_stages" / "round_trip.template.yaml"
NOTES = " ".join((ROOT / "data" / "README.md").read_text().split())


def _setting(row: pd.Series) -> dict[str, str]:
    return _canonical({k: str(row[f"setting_{k}"]) for k in ("link", "cpu", "latency", "disk_iops")
                       if pd.notna(row.get(f"setting_{k}"))})


def _canonical(setting: dict[str, str]) -> dict[str, str]:
    """A delay written as the store writes it (500us and 0.5ms are one setting)."""
    from gluster_model.hardware.knobs.latency import parse_delay, show_delay

    return {k: show_delay(parse_delay(v)) if k == "latency" else v for k, v in setting.items()}


@pytest.fixture(scope="module")
def result() -> dict[str, Any]:
    return load_benchmark("stages_proof").figures(DATA, "round_trip")  # type: ignore[no-any-return]


TODAYS = ("round_trip", "cpu", "link", "iops", "iops_descent", "iops_8k", "iops_cpu", "round_trip_8k", "link_700",
          "iops_cpu_shared", "iops_cpu_shared_8k", "cpu_shared_seq", "iops_cpu_shared_16k", "cpu_shared_write",
          "round_trip_stat", "round_trip_stat_4k", "round_trip_short", "round_trip_short_4k", "round_trip_queue",
          "round_trip_queue_4k", "round_trip_queue_16k", "iops_cpu_device", "iops_disk_device", "cpu_seq_device",
          "iops_disk_again", "iops_disk_pinned", "iops_disk_500", "iops_disk_300", "iops_spread_500",
          "iops_spread_300", "link_spread_700", "cpu_spread_seq",
          "iops_sync_500", "iops_sync_300", "cpu_link_seq", "link_cpu_600", "link_cpu_800", "link_cpu_1000",
          "cpu_link_pinned")
METRIC = {"round_trip": "file_create", "cpu": "write", "link": "write", "iops": "random_write",
          "iops_descent": "random_write", "iops_8k": "random_write", "iops_cpu": "random_write",
          "round_trip_8k": "file_create", "link_700": "write", "iops_cpu_shared": "random_write",
          "iops_cpu_shared_8k": "random_write", "cpu_shared_seq": "write", "iops_cpu_shared_16k": "random_write",
          "cpu_shared_write": "write", "round_trip_stat": "file_create", "round_trip_stat_4k": "file_create",
          "round_trip_short": "file_create", "round_trip_short_4k": "file_create", "round_trip_queue": "file_create",
          "round_trip_queue_4k": "file_create", "round_trip_queue_16k": "file_create",
          "iops_cpu_device": "random_write", "iops_disk_device": "random_write", "cpu_seq_device": "write",
          "iops_disk_again": "random_write", "iops_disk_pinned": "random_write", "iops_disk_500": "random_write",
          "iops_disk_300": "random_write", "iops_spread_500": "random_read", "iops_spread_300": "random_read",
          "link_spread_700": "read", "cpu_spread_seq": "read", "iops_sync_500": "random_write",
          "iops_sync_300": "random_write", "cpu_link_seq": "write", "link_cpu_600": "read",
          "link_cpu_800": "write", "link_cpu_1000": "write", "cpu_link_pinned": "write"}
# the todays collected after the form known from below (model/bottleneck.py, 6df846a) and the forms after it
AFTER_FORM = ("iops_8k", "iops_cpu", "round_trip_8k", "link_700", "iops_cpu_shared", "iops_cpu_shared_8k",
              "cpu_shared_seq", "iops_cpu_shared_16k", "cpu_shared_write", "round_trip_stat", "round_trip_stat_4k",
              "round_trip_short", "round_trip_short_4k", "round_trip_queue", "round_trip_queue_4k",
              "round_trip_queue_16k", "iops_cpu_device", "iops_disk_device", "cpu_seq_device", "iops_disk_again",
              "iops_disk_pinned", "iops_disk_500", "iops_disk_300", "iops_spread_500", "iops_spread_300",
              "link_spread_700", "cpu_spread_seq", "iops_sync_500", "iops_sync_300", "cpu_link_seq", "link_cpu_600",
              "link_cpu_800", "link_cpu_1000", "cpu_link_pinned")


@pytest.mark.parametrize("today", TODAYS)
def test_the_data_followed_the_protocol_committed_before_them(today: str) -> None:
    if not (DATA / f"{today}.csv").exists():
        pytest.skip(f"{today}: not shipped")
    """Every training campaign is one of the plan's settings (today measured again at the end), every
    verification campaign the template's today or one of its upgrades as built, three trials each."""
    from gluster_model.plan.factors import LAB_FACTORS
    from gluster_model.plan.file import load_plan

    frame = pd.read_csv(DATA / f"{today}.csv")
    plan = load_plan(PLAN, today)
    template = yaml.safe_load((TEMPLATE.parent / f"{today}.template.yaml").read_text())
    assert plan.design.hardware is not None
    # a descent's settings: today and each knob's levels below it, of which it may leave the lowest out
    planned = [_canonical({k: str(v) for k, v in s.items()}) for s in plan.design.hardware.all_settings({})]
    training = frame[frame["purpose"] == "training"]
    # each workload point the plan crosses with the settings (a list of threads: one point each)
    points = [k for k, v in plan.factors.items() if k in frame and len(v) > 1 and k not in LAB_FACTORS]
    for campaign, rows in training.groupby("campaign"):
        assert _setting(rows.iloc[0]) in planned, campaign
        sizes = rows.groupby(points).size() if points else pd.Series([len(rows)])
        assert (sizes == plan.protocol.repetitions).all(), campaign
        for k in points:
            assert sorted(rows[k].unique().tolist()) == sorted(plan.factors[k]), (campaign, k)
    if plan.design.hardware.descend:  # each knob stopped where its stage had bound twice: never more than planned
        assert training["campaign"].nunique() <= len(planned) + 1
    else:
        assert training["campaign"].nunique() == len(planned) + 1  # and today again
    today = {k: str(v) for k, v in template["today"]["lab"].items()}
    builds = [today] + [{**today, **{k: str(v) for k, v in c["lab"].items()}} for c in template["candidates"]]
    verification = frame[frame["purpose"] == "verification"]
    seen = [_setting(rows.iloc[0]) for _, rows in verification.groupby("campaign")]
    norm = [_canonical(b) for b in builds]
    assert all(s in norm for s in seen) and all(b in seen for b in norm), (seen, norm)
    assert (verification.groupby("campaign").size() == 3).all()


@pytest.mark.parametrize("today", TODAYS)
def test_each_measured_figure_is_the_mean_of_its_build_s_trials(today: str) -> None:
    if not (DATA / f"{today}-verify.json").exists():
        pytest.skip(f"{today}: not shipped")
    result = load_benchmark("stages_proof").figures(DATA, today)
    frame = pd.read_csv(DATA / f"{today}.csv")
    verification = frame[(frame["purpose"] == "verification") & frame["again_of"].isna()]
    means = sorted(verification.groupby("campaign")[METRIC[today]].mean().tolist())
    m = result["metrics"][METRIC[today]]
    got = sorted([m["today"]["measured"], *(u["measured"] for u in m["upgrades"])])
    assert got == pytest.approx(means, rel=1e-9)


def test_the_figures_data_readme_states(result: dict[str, Any]) -> None:
    m = result["metrics"]["file_create"]
    assert (f"**MAPE {m['mape']:.1f}% (the rule {m['rule_mape']:.1f}%), {sum(u['inside'] for u in m['upgrades'])} "
            f"of {m['n']} inside their 90% intervals; best buy held**") in NOTES
    assert m["best_held"] and m["measured_best"] == "round trip /2"
    for u in m["upgrades"]:
        assert f"| {u['predicted']:.1f} [" in NOTES, u
        assert f"| {u['measured']:.1f} | {u['error_pct']:+.1f}% | {u['rule_error_pct']:+.1f}% |" in NOTES, u
        assert u["stage"] == "round trips"
    link = next(u for u in m["upgrades"] if u["scenario"] == "link x2")
    assert link["small_move"] and link["said"].startswith("no gain: after it the round trips still limit")


def test_predict_on_the_shipped_model_names_the_round_trips() -> None:
    out = subprocess.run([sys.executable, "-m", "gluster_model.cli", "predict", "--model",
                          str(DATA / "round_trip-below.json"), "--scenarios", str(DATA / "round_trip-whatif.yaml"),
                          "--use", "bottleneck", "--json"], capture_output=True, text=True, check=True,
                         timeout=300, cwd=ROOT)
    answer = json.loads(out.stdout)
    (metric,) = answer["metrics"]
    preds = {p["scenario"]: p for p in metric["predictions"]}
    assert metric["limit"] == "round trips"
    assert all(preds[s]["binds_after"] == "round trips" for s in preds)
    assert preds["link x2"]["not_ranked"].startswith("no gain: after it the round trips still limit")
    assert preds["round trip /2"]["basis"] == "bounded" and preds["round trip /2"]["rank"] is not None
    # a small-file ceiling is in files/s: thousands for 16 KiB files on a gigabit link, never under the answer
    assert all(p["ceiling"] is None or p["ceiling"] > 1000 for p in metric["predictions"])


def test_verify_builds_the_upgrades_by_emulation_and_never_an_input_the_fit_left_out(tmp_path: Path) -> None:
    """On a cluster that allows emulation verify builds each scenario's `lab:` settings as plan factors; the disk
    rates the fit left out as the cluster's own noise are not turned into a throttle (the first attempt of this
    proof asked for a 1.2 GB/s disk, faster than the device measured next, and emulation refused it)."""
    from gluster_model.config.cluster import cluster_from_data
    from gluster_model.model import artifact
    from gluster_model.plan.file import load_plan
    from gluster_model.predict import scenarios as sc
    from gluster_model.predict.whatif import measured_settings, model_inputs
    from gluster_model.verify.build import targets

    mf = artifact.load(DATA / "round_trip-below.json")
    assert any(name == "disk_write_mbps" for name, _ in mf.schema("file_create").dropped)
    q = sc.from_file(DATA / "round_trip-whatif.yaml", model_inputs(mf, ["file_create"]),
                     measured_settings(mf, ["file_create"]))
    plan = load_plan(PLAN, "round_trip_verify")
    cluster = cluster_from_data({"name": "plain", "emulation": {"allow": True},
                                 "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]} for i in (1, 2)],
                                 "clients": [{"host": f"10.0.0.{i}"} for i in (3, 4)]}, "plain.yaml", tmp_path)
    found = targets(mf, q, plan, cluster, ["file_create"])
    built = {t.scenario.name: dict(t.run.lab) for t in found if t.run is not None}
    assert set(built) == {"today", *(c.name for c in q.candidates)}
    assert built["today"] == {"link": "50%", "cpu": "50%", "latency": "2ms"}
    assert built["round trip /4"]["latency"] in ("500us", "0.5ms") and built["CPU x2"]["cpu"] == "100%"
    assert not any(k.startswith("disk") for lab in built.values() for k in lab), built


def test_the_cpu_today_s_figures_data_readme_states() -> None:
    """The CPU-bound today: the figures as stated, the model ahead of the rule, and the verdict the data
    contradict (CPU x2 'no gain', measured as large a gain as link x2) stated as such."""
    m = load_benchmark("stages_proof").figures(DATA, "cpu")["metrics"]["write"]
    assert (f"**MAPE {m['mape']:.1f}% (the rule that fits nothing {m['rule_mape']:.1f}%: the model beats it by "
            f"{m['rule_mape'] - m['mape']:.0f} points), {sum(u['inside'] for u in m['upgrades'])} of {m['n']} "
            "inside their 90%") in NOTES
    for u in m["upgrades"]:
        assert f"| {u['predicted']:.1f} [" in NOTES, u
        assert f"| {u['measured']:.1f} | {u['error_pct']:+.1f}% | {u['rule_error_pct']:+.1f}% |" in NOTES, u
    by = {u["scenario"]: u for u in m["upgrades"]}
    assert by["CPU x2"]["said"].startswith("no gain") and by["CPU x2"]["moved_pct"] > 20  # the wrong verdict
    assert m["best_held"] and m["measured_best"] == "link x2"


def test_the_link_today_s_figures_data_readme_states() -> None:
    """The link-bound today at 1 Gbit/s: CPU x2 said and measured no gain; link x2 sized wrong, said so."""
    m = load_benchmark("stages_proof").figures(DATA, "link")["metrics"]["write"]
    for u in m["upgrades"]:
        assert f"| {u['predicted']:.1f} [" in NOTES, u
        assert f"| {u['measured']:.1f} | {u['error_pct']:+.1f}% | {u['rule_error_pct']:+.1f}% |" in NOTES, u
    by = {u["scenario"]: u for u in m["upgrades"]}
    assert by["CPU x2"]["said"].startswith("no gain: after it the client links still limit")
    assert by["CPU x2"]["small_move"]  # and the lab agreed
    assert not by["link x2"]["inside"] and by["link x2"]["stage"] == "client CPU"
    assert m["best_held"] and m["measured_best"] == m["predicted_best"] == "link x2"
    assert f"MAPE {m['mape']:.1f}% over the" in NOTES and f"the rule that fits nothing {m['rule_mape']:.1f}%" in NOTES


def test_the_iops_today_s_figures_data_readme_states() -> None:
    """The IOPS-bound today: each upgrade's IOPS (MB/s of 4 KiB records times 256) as stated; the disk upgrades the
    plan measured sized within 7% for writes, NVMe-class sized wrong and said so; the reads' best buy not held,
    as verify said when it exited 1."""
    result = load_benchmark("stages_proof").figures(DATA, "iops")
    for metric, word in (("random_write", "write"), ("random_read", "read")):
        m = result["metrics"][metric]
        for u in m["upgrades"]:
            assert (f"| {word} / {u['scenario']} (") in NOTES, u
            assert (f"| {u['predicted'] * 256:.0f} [{u['low'] * 256:.0f}, {u['high'] * 256:.0f}] | "
                    f"{u['measured'] * 256:.0f} | {u['error_pct']:+.1f}% | {u['rule_error_pct']:+.1f}% |") in NOTES, u
        assert (f"MAPE {m['mape']:.1f}% (the rule {m['rule_mape']:.1f}%), {sum(u['inside'] for u in m['upgrades'])} "
                f"of {m['n']} inside") in NOTES, metric
    write = {u["scenario"]: u for u in result["metrics"]["random_write"]["upgrades"]}
    assert abs(write["IOPS x2"]["error_pct"]) < 7 and abs(write["IOPS x4"]["error_pct"]) < 7
    assert write["NVMe-class"]["error_pct"] > 200 and not write["NVMe-class"]["inside"]
    assert result["metrics"]["random_write"]["best_held"]
    read = result["metrics"]["random_read"]
    assert not read["best_held"] and read["predicted_best"] == "IOPS x2" and read["measured_best"] == "NVMe-class"
    # verify measured the same and said so (its JSON, written by the command, not by the benchmark script)
    verified = json.loads((DATA / "iops-verify.json").read_text())
    reads = next(m for m in verified["metrics"] if m["metric"] == "random_read")
    assert reads["ranking_held"] is False


def test_the_descent_today_s_figures_data_readme_states() -> None:
    """The IOPS-bound today measured by a descent: each upgrade's IOPS as stated; the CPU stage the descent placed
    bounds the NVMe-class writes (inside their interval, far nearer than the rule); the reads' round-trip stage
    caps the disk upgrades, the best buy not held."""
    result = load_benchmark("stages_proof").figures(DATA, "iops_descent")
    for metric, word in (("random_write", "write"), ("random_read", "read")):
        m = result["metrics"][metric]
        for u in m["upgrades"]:
            assert (f"| {u['predicted'] * 256:.0f} [{u['low'] * 256:.0f}, {u['high'] * 256:.0f}] | "
                    f"{u['measured'] * 256:.0f} | {u['error_pct']:+.1f}% | {u['rule_error_pct']:+.1f}% |") in NOTES, u
        assert f"MAPE {m['mape']:.1f}% (the rule {m['rule_mape']:.1f}%)" in NOTES, metric
    write = {u["scenario"]: u for u in result["metrics"]["random_write"]["upgrades"]}
    assert write["NVMe-class"]["stage"] == "client CPU" and write["NVMe-class"]["inside"]
    assert abs(write["NVMe-class"]["error_pct"]) < abs(write["NVMe-class"]["rule_error_pct"]) / 4
    assert result["metrics"]["random_write"]["best_held"] and not result["metrics"]["random_read"]["best_held"]
    # the descent's settings, counted from the raw trials: the CPU reached 2%, and no level was left out
    frame = pd.read_csv(DATA / "iops_descent.csv")
    training = frame[frame["purpose"] == "training"]
    assert set(training["setting_cpu"].astype(str)) == {"50%", "25%", "12%", "6%", "3%", "2%"}
    assert training["campaign"].nunique() == 13  # today, eleven steps, today again


def test_an_answer_far_beyond_what_was_measured_says_which_stages_never_bound() -> None:
    """The iops proof's NVMe-class writes (predicted 20x the most any run measured, with neither CPU nor round
    trips among the stages that bound) carry the caution, in the answer and its JSON; on the descent's model, whose
    CPU stage bound at 2-3%, the same candidate does not."""
    from gluster_model.model import artifact
    from gluster_model.predict import scenarios as sc
    from gluster_model.predict.whatif import measured_settings, model_inputs, what_if

    def flags(today: str) -> tuple[dict[str, list[str]], dict[str, float]]:
        mf = artifact.load(DATA / f"{today}-below.json")
        metrics = ["random_write"]
        q = sc.from_file(DATA / f"{today}-whatif.yaml", model_inputs(mf, metrics), measured_settings(mf, metrics))
        (answer,) = what_if(mf, q, use="bottleneck", metrics=metrics).metrics
        return {p.scenario: p.flags for p in answer.predictions}, {p.scenario: p.value for p in answer.predictions}

    before, value = flags("iops")
    # the most any run measured, from the shipped trials (the training runs' means, the fit's data)
    frame = pd.read_csv(DATA / "iops.csv")
    training = frame[frame["purpose"] == "training"]
    most = training.groupby(["campaign", "run_id"])["random_write"].mean().max()  # MB/s, as the table holds it
    nvme = value["NVMe-class"] / 256  # the answer's IOPS of 4 KiB records, in the table's MB/s
    assert [f for f in before["NVMe-class"] if "x the most any run measured" in f] == [
        f"{nvme / most:.1f}x the most any run measured, and the CPU and the round trips bound no "
        "setting: they may stop the gain sooner (a descent of CPU and delay measures them: docs/reference.md)"]
    assert nvme / most > 15
    assert not any("most any run" in f for f in before["link x2"])  # no gain: nothing beyond the measured
    after, _ = flags("iops_descent")
    assert not any("most any run" in f for fl in after.values() for f in fl)


@pytest.mark.parametrize("today", AFTER_FORM)
def test_the_figures_after_the_form_are_those_data_readme_states(today: str) -> None:
    """Each upgrade of the todays collected after the form known from below, as data/README.md's tables give it
    (IOPS as MB/s of 4 or 8 KiB records times 256 or 128), and each metric's MAPE beside the rule's."""
    if not (DATA / f"{today}-verify.json").exists():
        pytest.skip(f"{today}: not shipped")
    result = load_benchmark("stages_proof").figures(DATA, today)
    frame = pd.read_csv(DATA / f"{today}.csv")
    for metric, m in result["metrics"].items():
        word = {"random_read": "read", "random_write": "write"}.get(metric, metric)
        if metric.startswith("random"):
            per_mb = (1 << 20) / float(frame["record_size"].iloc[0])
            show = lambda v: f"{v * per_mb:.0f}"  # noqa: E731
        else:
            show = lambda v: f"{v:.1f}"  # noqa: E731
        for u in m["upgrades"]:
            row = (f"| {word} / {u['scenario']} | {show(u['predicted'])} [{show(u['low'])}, {show(u['high'])}] | "
                   f"{show(u['measured'])} | {u['error_pct']:+.1f}% | {u['rule_error_pct']:+.1f}% |")
            assert row in NOTES, row
        assert f"MAPE {m['mape']:.1f}% (the rule" in NOTES and f" {m['rule_mape']:.1f}%)" in NOTES, (today, metric)


def test_the_8k_todays_nvme_class_answers_rest_on_the_calibrated_cpu_cost() -> None:
    """No setting below the 8 KiB IOPS today made the CPU bind: the NVMe-class answers are bound by the client
    CPU stage's calibrated cost (assumed in the model file), inside their intervals, far nearer than the rule."""
    from gluster_model.model import artifact

    result = load_benchmark("stages_proof").figures(DATA, "iops_8k")
    mf = artifact.load(DATA / "iops_8k-below.json")
    for metric in ("random_read", "random_write"):
        model = mf.model(metric, "bottleneck")
        assert model.assumed[model.stages.index("client CPU")]
        nvme = next(u for u in result["metrics"][metric]["upgrades"] if u["scenario"] == "NVMe-class")
        assert nvme["stage"] == "client CPU" and nvme["inside"]
        assert abs(nvme["error_pct"]) < abs(nvme["rule_error_pct"]) / 4


def test_a_quota_past_the_machine_s_cores_builds_no_more_and_the_model_says_so() -> None:
    """The shared-machine todays (hardware/cpu_share.py): four nodes on two cores, so a quota that asks more than
    the machine gives each node half a core under load. In iops_cpu_shared the quota's x4 and x8 (36% and 72% of
    the machine) measured alike, and their scores under load (verify's measured hardware) alike though the
    quotas differ twofold; the model answered them alike and near what was measured. In cpu_shared_seq CPU x2 and
    x4 wrote alike, as predicted, where the rule that fits nothing (the score alone's share) misses x4 by half."""
    bench = load_benchmark("stages_proof")
    shared = bench.figures(DATA, "iops_cpu_shared")["metrics"]["random_read"]
    by = {u["scenario"]: u for u in shared["upgrades"]}
    hardware = json.loads((DATA / "iops_cpu_shared-verify.json").read_text())["measured_hardware"]
    assert hardware["CPU x8"]["cpu_score"] / hardware["CPU x4"]["cpu_score"] == pytest.approx(1, abs=0.1)
    assert by["CPU x8"]["measured"] / by["CPU x4"]["measured"] == pytest.approx(1, abs=0.05)
    assert by["CPU x8"]["predicted"] / by["CPU x4"]["predicted"] == pytest.approx(1, abs=0.1)
    assert all(abs(by[n]["error_pct"]) < 20 for n in ("CPU x2", "CPU x4", "CPU x8"))
    # the quotas themselves, counted from the raw trials' settings: twice apart
    frame = pd.read_csv(DATA / "iops_cpu_shared.csv")
    built = set(frame[frame["purpose"] == "verification"]["setting_cpu"].astype(str))
    assert {"36%", "72%"} <= built
    seq = {u["scenario"]: u for u in bench.figures(DATA, "cpu_shared_seq")["metrics"]["write"]["upgrades"]}
    assert seq["CPU x4"]["predicted"] / seq["CPU x2"]["predicted"] == pytest.approx(1, abs=0.01)
    assert seq["CPU x4"]["measured"] / seq["CPU x2"]["measured"] == pytest.approx(1, abs=0.02)
    assert abs(seq["CPU x4"]["error_pct"]) < 5 < 40 < seq["CPU x4"]["rule_error_pct"]


def test_cold_stats_pay_their_lookup_and_a_faster_link_is_no_gain_for_them() -> None:
    """The stats past the attribute caches (bench/fio_jobs.py, 7b9e091), from the shipped runs with arithmetic
    of its own: no run of the two todays stat'ed more than one file a round trip in a thread (a stat is a
    lookup), where round_trip_8k's fio-timed stats ran at many a round trip once its round trip was short (the
    check sees the cache); the stats follow the round trip (4 ms of delay: at most 0.6 of today's); and the
    link, which no stage of a stat's model uses, is answered "no gain" and measured so, not called a guess."""
    for today in ("round_trip_stat", "round_trip_stat_4k"):
        frame = pd.read_csv(DATA / f"{today}.csv")
        per_trip = frame["file_stat"] / frame["threads"] * frame["network_rtt_ms"] / 1000
        assert (per_trip <= 1.0).all(), today
        training = frame[frame["purpose"] == "training"]
        rtt = training.groupby("campaign")["network_rtt_ms"].first()
        stats = training.groupby("campaign")["file_stat"].mean()
        assert stats[rtt.idxmax()] < 0.6 * stats[rtt.idxmin()], today
        m = load_benchmark("stages_proof").figures(DATA, today)["metrics"]["file_stat"]
        link = next(u for u in m["upgrades"] if u["scenario"] == "link x1.4")
        assert link["said"].startswith("no gain: after it the round trips still limit"), link["said"]
        assert abs(link["measured"] / m["today"]["measured"] - 1) < 0.1
    old = pd.read_csv(DATA / "round_trip_8k.csv")
    assert (old["file_stat"] / old["threads"] * old["network_rtt_ms"] / 1000).max() > 50


def test_short_delays_cold_operations_pay_their_lookup_and_the_stamped_delay_adds_little() -> None:
    """The todays at short delays (1179e73's delayer, each packet held from its receive stamp), from the shipped
    runs with arithmetic of their own: no run stat'ed or read more than one file a round trip in a thread (each
    is a lookup first); each setting's round trip at rest is twice its delay plus at most 0.25 ms (the earlier
    delayer's todays measured up to 0.55 ms over, which the same check fails); and the upgrades that touch no
    stage of the model (CPU x2, link x1.4) are answered "no gain" or "no measurable effect" in every metric, and
    measured within 15% of today."""
    from gluster_model.hardware.knobs.latency import parse_delay

    def over(frame: pd.DataFrame) -> pd.Series:
        return frame["network_rtt_ms"] - 2 * frame["setting_latency"].map(parse_delay) / 1000

    for today in ("round_trip_short", "round_trip_short_4k"):
        frame = pd.read_csv(DATA / f"{today}.csv")
        for metric in ("file_stat", "file_read"):
            assert (frame[metric] / frame["threads"] * frame["network_rtt_ms"] / 1000 <= 1.0).all(), (today, metric)
        assert over(frame).between(0, 0.25).all(), today
        metrics = load_benchmark("stages_proof").figures(DATA, today)["metrics"]
        assert set(metrics) == {"file_create", "file_stat", "file_read"}
        for metric, m in metrics.items():
            for u in m["upgrades"]:
                if u["scenario"] in ("CPU x2", "link x1.4"):
                    assert u["said"].startswith(("no gain", "no measurable effect")), (today, metric, u["said"])
                    assert abs(u["measured"] / m["today"]["measured"] - 1) < 0.15, (today, metric, u)
    assert max(over(pd.read_csv(DATA / f"{t}.csv")).max() for t in ("round_trip_stat", "round_trip_stat_4k")) > 0.5


def test_a_client_s_threads_queue_at_the_short_round_trip_and_the_model_that_knows_it_answers_nearer() -> None:
    """The todays with 1 and 4 threads a client (f5e205e's form), from the shipped runs with arithmetic of their
    own: in each, at today's round trip four threads a client gain less over one than at the longest (they
    wait for each other: a queue the bound threads / (n (rtt + s)) has not), so the fit gave a share of the
    service to the client's queue; asked at 2 threads a client, which no training run had, the shorter round
    trips' stats and reads were answered nearer than round_trip_short's model (the same today and upgrades, one
    number of threads) answered them."""
    from gluster_model.model import artifact

    for today in ("round_trip_queue", "round_trip_queue_4k", "round_trip_queue_16k"):
        frame = pd.read_csv(DATA / f"{today}.csv")
        delays = frame[(frame["purpose"] == "training") & (frame["setting_cpu"] == "50%")
                       & (frame["setting_link"] == "50%") & frame["again_of"].isna()]
        rtt = delays.groupby("setting_latency")["network_rtt_ms"].mean()
        short, long = rtt.idxmin(), rtt.idxmax()
        for metric in ("file_create", "file_stat", "file_read"):
            by = delays.groupby(["setting_latency", "threads"])[metric].mean()
            gain = {lat: by[(lat, 8)] / by[(lat, 2)] for lat in (short, long)}
            assert gain[short] < gain[long] < 4, (today, metric, gain)
        mf = artifact.load(DATA / f"{today}-below.json")
        assert all(mf.model(m, "bottleneck").queued > 0 for m in ("file_stat", "file_read")), today
    bench = load_benchmark("stages_proof")
    queue, short = bench.figures(DATA, "round_trip_queue"), bench.figures(DATA, "round_trip_short")
    for metric in ("file_stat", "file_read"):
        new = {u["scenario"]: u for u in queue["metrics"][metric]["upgrades"]}
        old = {u["scenario"]: u for u in short["metrics"][metric]["upgrades"]}
        for name in ("round trip /2", "round trip /4"):
            assert abs(new[name]["error_pct"]) < abs(old[name]["error_pct"]), (metric, name)


def test_a_device_measured_outside_the_cpu_quota_keeps_its_capacity_at_every_cpu_setting() -> None:
    """The shipped runs, by the test's own arithmetic from the raw CSVs: with fio inside the hosts' CPU quota
    (iops_cpu_shared_8k) the bricks' random IOPS fell with the quota, more than 4x from 12% to 3% of the machine;
    measured outside it (iops_cpu_device, the same today and settings) they stay within 15% of each other, and the
    links of cpu_seq_device keep their rate at every CPU setting. The writes' model then binds at the client CPU,
    where the fit on the devices inside the quota gave them to the disks."""
    from gluster_model.model import artifact

    def by_cpu(today: str, column: str) -> dict[str, float]:
        frame = pd.read_csv(DATA / f"{today}.csv")
        disk = frame["setting_disk_iops"].astype(str) if "setting_disk_iops" in frame else "unlimited"
        # today's link and disks, the CPU lowered
        unthrottled = frame[(frame["purpose"] == "training") & (disk == "unlimited")
                            & (frame["setting_link"].astype(str) == "50%")]
        return {str(k): float(v) for k, v in unthrottled.groupby("setting_cpu")[column].mean().items()}

    for column in ("disk_randwrite_iops", "disk_randread_iops"):
        inside, outside = by_cpu("iops_cpu_shared_8k", column), by_cpu("iops_cpu_device", column)
        assert set(inside) == set(outside) == {"3%", "6%", "9%", "12%"}
        assert inside["12%"] > 4 * inside["3%"], inside
        assert max(outside.values()) < 1.15 * min(outside.values()), outside
    links = by_cpu("cpu_seq_device", "network_gbps")
    assert len(links) == 4 and max(links.values()) < 1.05 * min(links.values()), links
    binds = {}
    for today in ("iops_cpu_shared_8k", "iops_cpu_device"):
        result = load_benchmark("stages_proof").figures(DATA, today)
        binds[today] = {u["stage"] for u in result["metrics"]["random_write"]["upgrades"]}
        model = artifact.load(DATA / f"{today}-below.json").model("random_write", "bottleneck")
        assert "client CPU" in model.stages, today
    assert "server disks" in binds["iops_cpu_shared_8k"] and binds["iops_cpu_device"] == {"client CPU"}, binds

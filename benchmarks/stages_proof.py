"""The stages proof (experiments/upgrade_proof/plan_stages.yaml): upgrades of a today bound by round trips, CPU,
links or disk IOPS, collected through emulation on the lab addressed as a plain cluster, as a user collects.

``whatif``: the what-if file verify measures, from the template fixed before the data
(whatif_stages/<today>.template.yaml) and today's measured inputs in the store: each candidate's nominal figures
are today's times its ``scale``; the baseline is the measured today, named by the extremes of the template's
``named_by`` (default ``network_rtt_ms: min``: today has the least delay of the plan's settings), refused unless
the measured setting those extremes pick is today's; or, with ``named_by: measured``, by every input today's
campaign measured (a today no extreme picks: another setting measured alike).

``figures``: per today (its data/upgrade_proof_stages_<today>.csv, its model and its verify JSON under --dir, as
benchmarks/stages_proof_collect.sh leaves them): per upgrade the prediction, its 90% interval, the three trials'
mean, whether it fell inside, the stage that binds after it, and the same prediction by the rule that fits
nothing (each stage's measured capacity with every efficiency 1, their minimum, scaled by one factor so that it
gives today as measured); MAPE and coverage of both, the upgrades that moved throughput by under 3% apart; the
best buy per price predicted and measured.

``cpu-prior``: the client CPU stage's calibrated cost (model/cpu_prior.py, ``COST`` and ``SD``) recomputed from
the shipped runs it was calibrated on (``CPU_PRIOR_RUNS``: the runs of the earlier stages proofs bound beyond their
links and disks at half a core), with arithmetic of its own: each run's MB/s per unit of CPU score on the clients
(score x clients, over the copies a write sends), and for writes and for reads apart the curve r / (per_op +
per_mb r) through them by least squares in logs, r the MB an operation moves.

Run: .venv/bin/python benchmarks/stages_proof.py whatif --store rt.db --today round_trip --out whatif.yaml
     .venv/bin/python benchmarks/stages_proof.py figures --dir OUT [--today round_trip] [--json]
     .venv/bin/python benchmarks/stages_proof.py cpu-prior [--dir data/stages_proof] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = ROOT / "experiments" / "upgrade_proof" / "whatif_stages"
INPUTS = ("network_rtt_ms", "network_gbps", "cpu_score", "disk_randwrite_iops", "disk_randread_iops", "disk_write_mbps",
          "disk_read_mbps")
SMALL_MOVE = 0.03  # an upgrade that moved throughput by less than this is reported apart
# The todays per form of the model they were collected after (the earlier ones stay a row of their own): the first
# stages proofs (round-trip and CPU stages, fixed 2026-11-28 and 2026-11-30), those after the client CPU
# stage's calibrated cost and the sign and round-trip limits (6df846a, 2026-11-30 23:41 UTC), and the later ones.
FORMS = {"stages": ("cpu", "iops", "iops_descent", "link", "round_trip"),
         "stages_from_below": ("iops_8k", "iops_cpu", "round_trip_8k", "link_700"),
         # the CPU score a host keeps under load (d32289f, 2026-12-01 02:14 UTC), then with held-out folds that
         # keep the main effects' signs (176e68d, 02:32 UTC)
         "stages_under_load": ("iops_cpu_shared",),
         "stages_signed_folds": ("iops_cpu_shared_8k", "cpu_shared_seq"),
         # each held-out residual counted for the stage the model binds its run at (37bd377, 03:08 UTC)
         "stages_binding_intervals": ("iops_cpu_shared_16k", "cpu_shared_write"),
         # stats timed by glmodel past the clients' attribute caches, and a stat's round-trip stage fitted on
         # folds of two settings (7b9e091, 05:31 UTC; the model's form otherwise 37bd377's)
         "stages_cold_stats": ("round_trip_stat", "round_trip_stat_4k"),
         # the same form (7129770), the lab's delay held from each packet's receive stamp (1179e73, 08:07 UTC)
         "stages_stamped_delays": ("round_trip_short", "round_trip_short_4k"),
         # each client's threads a closed network with a queue of its own, where the plan varied the threads a
         # client (f5e205e, 10:29 UTC)
         "stages_client_queue": ("round_trip_queue", "round_trip_queue_4k", "round_trip_queue_16k"),
         # the same form (4ae09e7), each device's capacity (fio, iperf3) measured outside the hosts' emulated CPU
         # quota (d26aff0, 13:18 UTC)
         "stages_devices_apart": ("iops_cpu_device", "iops_disk_device", "cpu_seq_device"),
         # the same form (4ae09e7), a disk figure short of its device's limit measured again (ac185e9, 16:18 UTC)
         "stages_disk_remeasured": ("iops_disk_again",),
         # the same form with the idle-stage fix (c9a857e), the plan's CPU below today at two binding settings
         # (2dc410b, 17:02 UTC)
         "stages_cpu_pinned": ("iops_disk_pinned",),
         # a round-trip or server CPU stage one setting binds left out, a setting that alone moved an input
         # calibrating no interval, a client CPU stage two settings pin carrying the calibration's spread (3f11448,
         # 20:23 UTC)
         "stages_alone_moved": ("iops_disk_500", "iops_disk_300"),
         # the same form, the workload's records spread over 16 files a thread so that a read is less of a
         # placement draw (large_files; declared in a4551bc, ee5eac5 and 33a951c, 23:12-23:19 UTC)
         "stages_spread_files": ("iops_spread_500", "iops_spread_300", "link_spread_700", "cpu_spread_seq"),
         # the same form and workload, every client's files laid out before any client times a job (e1234bc,
         # declared 23:37 UTC)
         "stages_layout_first": ("iops_sync_500", "iops_sync_300"),
         # the links and CPU stages that two settings pin may hold a run back together (one closed network of the
         # run's threads, kept where it predicts held-out settings better; 1b63cce, declared 05:50 UTC 2026-12-02)
         "stages_joint": ("cpu_link_seq", "link_cpu_600"),
         # the client CPU's calibrated cost apart for writes and reads, and a client CPU at that cost a queue of the
         # pinned links' closed network (34be9c5, declared 09:04 UTC 2026-12-02)
         "stages_calibrated_joint": ("link_cpu_800", "link_cpu_1000", "cpu_link_pinned")}
# The runs the client CPU stage's cost was calibrated on, fixed with it (today, metric, the settings that pick
# the verification build): NVMe-class bricks under the IOPS todays' 4 KiB random I/O, and the link todays' links
# that emulation leaves unshaped (link 100%) for 1 MiB writes and reads, each on half a core per node.
# The machine those runs' labs shared: four nodes, each with a quota of its CPU setting, on two cores.
PRIOR_LAB_CORES, PRIOR_LAB_NODES = 2, 4
UNSHAPED = {"setting_link": "100%", "setting_cpu": "50%"}
CPU_PRIOR_RUNS = (("iops", "random_read", {"setting_disk_iops": "unlimited"}),
                  ("iops", "random_write", {"setting_disk_iops": "unlimited"}),
                  ("iops_descent", "random_read", {"setting_disk_iops": "unlimited"}),
                  ("iops_descent", "random_write", {"setting_disk_iops": "unlimited"}),
                  ("link", "write", UNSHAPED), ("link_700", "write", UNSHAPED), ("link_700", "read", UNSHAPED),
                  ("link_spread_700", "write", UNSHAPED), ("link_spread_700", "read", UNSHAPED))
# The todays whose CSVs keep each host's score alone (collected before the models took the score under load,
# d32289f); the later ones keep the score under load already.
SCORE_ALONE = frozenset({"iops", "iops_descent", "link", "link_700"})
WRITES = frozenset({"write", "random_write"})


def setting_of(lab: dict[str, Any]) -> dict[str, str]:
    """A template's lab setting as the store writes it (a delay of 1500us is stored as 1.5ms)."""
    from gluster_model.hardware.knobs.latency import parse_delay, show_delay

    return {str(k): show_delay(parse_delay(str(v))) if k == "latency" else str(v) for k, v in lab.items()}


def today_inputs(store_path: str, today_lab: dict[str, str], quota_scales: tuple[float, ...] = ()
                 ) -> tuple[dict[str, float], list[dict[str, float]], dict[float, float]]:
    """Today's measured inputs (the mean over the trials of the training campaign whose setting is today's, not
    its repeat at the plan's end), every training campaign's but the repeats, and per factor in
    ``quota_scales`` the ratio of the CPU score every host would keep under load with its quota that many times
    today's (hardware/cpu_share.py, from today's host facts) to today's."""
    from gluster_model.dataset import trial_frame
    from gluster_model.hardware.cpu_share import load_scores, scaled_quotas
    from gluster_model.store import open_store

    with open_store(store_path, create=False) as st:
        infos = st.campaign_infos()
        frame = trial_frame(st)  # the training campaigns
        names = [n for n, i in infos.items() if i.setting_dict() == today_lab and i.again_of is None
                 and i.purpose.value == "training"]
        if len(names) != 1:
            sys.exit(f"{store_path}: {len(names)} training campaign(s) at today's setting {today_lab}")
        stored = st.campaign(names[0])
        assert stored is not None
        facts = {h.address: h.facts for h in st.hosts(stored.id)}
    base = min(load_scores(facts).values(), default=math.nan)
    ratios = {k: min(load_scores(scaled_quotas(facts, k)).values(), default=math.nan) / base for k in quota_scales}
    firsts = [n for n, i in infos.items() if i.again_of is None and i.purpose.value == "training"]
    means = frame[frame["campaign"].isin(firsts)].groupby("campaign", observed=True)[
        [k for k in INPUTS if k in frame]].mean()
    plain = {c: {k: float(v) for k, v in row.items()} for c, row in means.iterrows()}  # YAML writes no numpy
    return plain[names[0]], list(plain.values()), ratios


def whatif(store_path: str, today: str, out: Path) -> dict[str, Any]:
    from gluster_model.predict.scenarios import measured_extremes

    template = yaml.safe_load((TEMPLATES / f"{today}.template.yaml").read_text())
    # a candidate that multiplies every host's CPU quota (``cpu_quota``) asks for the score the hosts keep
    # under load with it, which on hosts that share a machine is less than the quota's multiple
    quotas = tuple(float(c["cpu_quota"]) for c in template["candidates"] if "cpu_quota" in c)
    have, settings, ratios = today_inputs(store_path, setting_of(template["today"]["lab"]), quotas)
    named_by = template["today"].get("named_by", {"network_rtt_ms": "min"})
    if named_by == "measured":  # today's every measured input, as its campaign measured them
        baseline: dict[str, Any] = dict(have)
    else:
        picked = measured_extremes(named_by, {}, settings)
        if any(picked[k] != have[k] for k in have):
            sys.exit(f"{store_path}: {named_by} names another measured setting than today's")
        baseline = dict(named_by)
    doc: dict[str, Any] = {
        "currency": template["currency"], "level": template["level"],
        # today named as the measured setting at the template's extremes, or by every input it measured, taken
        # whole (figures given one by one would mix today's with the model's reference setting)
        # and the workload asked where the template names one (a level between the plan's)
        "baseline": {"name": "today", "set": {**baseline, **template["today"].get("workload", {})},
                     "lab": template["today"]["lab"]},
        "candidates": [{"name": c["name"], "set": {**{k: have[k] * f for k, f in c.get("scale", {}).items()},
                                                   **({"cpu_score": have["cpu_score"] * ratios[float(c["cpu_quota"])]}
                                                      if "cpu_quota" in c else {})},
                        "lab": c["lab"], "price": c["price"]} for c in template["candidates"]]}
    out.write_text(f"# Written by benchmarks/stages_proof.py from {TEMPLATES.name}/{today}.template.yaml and the "
                   "store's today\n" + yaml.safe_dump(doc, sort_keys=False))
    return doc


def figures(run_dir: Path, today: str, level: float = 0.9) -> dict[str, Any]:
    """Per metric: each upgrade verify measured, predicted by the bottleneck model at the hardware its build
    measured (three trials, another campaign's term), as benchmarks/upgrade_from_below.py does, whatever model
    `fit` selected; beside it the rule that fits nothing."""
    from gluster_model.model import artifact
    from gluster_model.model.artifact import config_columns
    from gluster_model.model.bottleneck import NEW_CAMPAIGN_SD, BottleneckModel, log_capacities
    from gluster_model.model.features import with_derived
    from gluster_model.predict import scenarios as sc
    from gluster_model.predict.whatif import measured_settings, model_inputs, resolve, what_if

    verification = json.loads((run_dir / f"{today}-verify.json").read_text())
    mf = artifact.load(run_dir / f"{today}-below.json")
    metrics = [m["metric"] for m in verification["metrics"]]
    q = sc.from_file(run_dir / f"{today}-whatif.yaml", model_inputs(mf, metrics), measured_settings(mf, metrics))
    answer = what_if(mf, q, level=level, use="bottleneck")
    hardware = verification["measured_hardware"]
    out: dict[str, Any] = {"today": today, "metrics": {}}
    for m, asked in zip(verification["metrics"], answer.metrics):
        metric = m["metric"]
        model = mf.model(metric, "bottleneck")
        assert isinstance(model, BottleneckModel)
        checks = {c["scenario"]: c for c in m["checks"]}
        by_name = {s.name: s for s in q.scenarios}
        said = {p.scenario: p for p in asked.predictions}
        names = ["today", *[n for n in checks if n != "today"]]
        configs = []
        for n in names:
            config = resolve(mf.domain(metric), q.baseline, by_name[n])
            config.update({k: v for k, v in hardware[n].items() if k in config and v is not None})
            configs.append(config)
        trials = [checks[n]["trials"] for n in names]
        predicted = [mf.predict([c], level, metric=metric, use="bottleneck", trials=t, new_campaign=True)
                     for c, t in zip(configs, trials)]
        # the same intervals with the lab's constant alone as the another-campaign term, beside the drift measured
        measured_sd = model.new_campaign_sd
        model.new_campaign_sd = NEW_CAMPAIGN_SD
        constant = [mf.predict([c], level, metric=metric, use="bottleneck", trials=t, new_campaign=True)
                    for c, t in zip(configs, trials)]
        model.new_campaign_sd = measured_sd
        cols = with_derived(config_columns(configs), metric)
        stage = [model.stages[int(i)] for i in model.binding(cols)]
        raw = np.exp(np.min(log_capacities(cols, metric, model.stages, model.trip), axis=0))
        rule = raw * checks["today"]["measured"] / raw[0]  # the rule, anchored at today as measured
        today_measured = checks["today"]["measured"]
        rows = []
        for k, n in enumerate(names):
            value, low, high = (float(predicted[k].value[0]), float(predicted[k].low[0]),
                                float(predicted[k].high[0]))
            measured = checks[n]["measured"]
            moved = abs(measured / today_measured - 1)
            rows.append({"scenario": n, "predicted": value, "low": low, "high": high, "measured": measured,
                         "trials": trials[k], "inside": bool(low <= measured <= high),
                         "inside_constant": bool(float(constant[k].low[0]) <= measured <= float(constant[k].high[0])),
                         "error_pct": (value / measured - 1) * 100, "stage": stage[k],
                         "rule": float(rule[k]), "rule_error_pct": (float(rule[k]) / measured - 1) * 100,
                         "moved_pct": 100 * moved, "small_move": moved < SMALL_MOVE,
                         "price": by_name[n].price, "said": said[n].not_ranked if n in said else None,
                         "binds_after": said[n].binds_after if n in said else None})
        ups = rows[1:]

        def summary(part: list[dict[str, Any]]) -> dict[str, Any]:
            if not part:
                return {"n": 0}
            return {"n": len(part), "mape": float(np.mean([abs(u["error_pct"]) for u in part])),
                    "coverage": 100 * float(np.mean([u["inside"] for u in part])),
                    "coverage_constant": 100 * float(np.mean([u["inside_constant"] for u in part])),
                    "rule_mape": float(np.mean([abs(u["rule_error_pct"]) for u in part]))}

        gains = {u["scenario"]: (u["measured"] - today_measured) / u["price"] for u in ups
                 if u["price"] and u["measured"] > today_measured}
        measured_best = max(gains, key=lambda n: gains[n]) if gains else None
        ranked = [p for p in asked.predictions[1:] if p.rank == 1]
        predicted_best = ranked[0].scenario if ranked else None
        tied = list(ranked[0].tied_with) if ranked else []
        out["metrics"][metric] = {
            "today": rows[0], "upgrades": ups, **summary(ups),
            "moved": summary([u for u in ups if not u["small_move"]]),
            "small_moves": summary([u for u in ups if u["small_move"]]),
            "predicted_best": predicted_best, "measured_best": measured_best, "tied_with": tied,
            "best_held": measured_best is not None and measured_best in ([predicted_best] + tied),
            "drift_pct": None if model.drift is None else 100 * (math.exp(model.drift) - 1),
            "drift_runs": model.drift_runs, "campaign_sd_pct": 100 * measured_sd,
            "selected_by_fit": mf.selected(metric), "verify_model": m["model"]}
    return out


# The unit each metric family is judged in: MB/s of large files, small files per second, and IOPS for 4-8 KB
# random records (stored in MB/s of their records: the same percentages).
FAMILIES = {"write": "MB/s", "read": "MB/s", "random_write": "IOPS", "random_read": "IOPS"}


def family(metric: str) -> str:
    return FAMILIES.get(metric, "files/s" if metric.startswith("file_") else "MB/s")


def pooled(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The todays' upgrades pooled per metric family: MAPE and 90% coverage of the model and of the rule that fits
    nothing, coverage by the stage each prediction binds at, the upgrades that moved under 3% counted apart, and
    the best buy per price held per today and metric (the measured best predict's best or named tied with it)."""
    out: dict[str, Any] = {}
    for fam in sorted({family(m) for r in results for m in r["metrics"]}):
        parts = [(r["today"], m, v) for r in results for m, v in r["metrics"].items() if family(m) == fam]
        rows = [u for _, _, v in parts for u in v["upgrades"]]
        by_stage: dict[str, list[bool]] = {}
        for u in rows:
            by_stage.setdefault(u["stage"], []).append(u["inside"])
        moved = [u for u in rows if not u["small_move"]]
        out[fam] = {
            "upgrades": len(rows), "mape": float(np.mean([abs(u["error_pct"]) for u in rows])),
            "coverage": 100 * float(np.mean([u["inside"] for u in rows])),
            "coverage_constant": 100 * float(np.mean([u["inside_constant"] for u in rows])),
            "rule_mape": float(np.mean([abs(u["rule_error_pct"]) for u in rows])),
            "coverage_by_stage": {k: 100 * float(np.mean(v)) for k, v in by_stage.items()},
            "runs_by_stage": {k: len(v) for k, v in by_stage.items()},
            "moved": {"upgrades": len(moved), "mape": float(np.mean([abs(u["error_pct"]) for u in moved]))
                      if moved else None},
            "small_moves": len(rows) - len(moved),
            "best_held": {f"{today}/{m}": bool(v["best_held"]) for today, m, v in parts},
            "todays": sorted({today for today, _, _ in parts})}
    return out


def show(result: dict[str, Any]) -> None:
    for metric, m in result["metrics"].items():
        t = m["today"]
        print(f"{result['today']} / {metric}: today measured {t['measured']:.4g}, predicted {t['predicted']:.4g} "
              f"[{t['low']:.4g}, {t['high']:.4g}] bound by the {t['stage']}; fit selected {m['selected_by_fit']}")
        drift = ("not measured" if m["drift_pct"] is None else f"{m['drift_pct']:+.1f}% over {m['drift_runs']} "
                 f"run(s), another-campaign term {m['campaign_sd_pct']:.2f}%")
        print(f"  drift of today measured again: {drift}; inside 90% with the lab's constant alone "
              f"{m['coverage_constant']:.0f}%")
        print(f"  {m['n']} upgrades, "
              f"MAPE {m['mape']:.1f}% (rule {m['rule_mape']:.1f}%), inside 90% {m['coverage']:.0f}%; best buy "
              f"predicted {m['predicted_best']}, measured {m['measured_best']}"
              f"{' (tied: ' + ', '.join(m['tied_with']) + ')' if m['tied_with'] else ''}: "
              f"{'held' if m['best_held'] else 'NOT held'}")
        for u in m["upgrades"]:
            print(f"  {u['scenario']:<28} predicted {u['predicted']:8.4g} [{u['low']:.4g}, {u['high']:.4g}] "
                  f"measured {u['measured']:8.4g} ({u['error_pct']:+.1f}%, {'in' if u['inside'] else 'OUT'}) "
                  f"rule {u['rule']:8.4g} ({u['rule_error_pct']:+.1f}%) moved {u['moved_pct']:.1f}%"
                  f"{' [under 3%]' if u['small_move'] else ''}; bound by the {u['stage']}"
                  f"{'; predict: ' + u['said'] if u['said'] else ''}")


def cpu_prior(run_dir: Path) -> dict[str, Any]:
    """The client CPU stage's cost per operation and per MB (score-unit seconds) for writes and for reads, and the
    log SD of the runs about the two curves, from ``CPU_PRIOR_RUNS`` (module docstring)."""
    from scipy.optimize import least_squares

    points = []
    for today, metric, where in CPU_PRIOR_RUNS:
        frame = pd.read_csv(run_dir / f"{today}.csv", dtype=str)
        rows = frame[(frame["purpose"] == "verification") & frame[metric].notna()]
        for key, value in where.items():
            rows = rows[rows[key] == value]
        if rows.empty:
            raise SystemExit(f"{today}.csv: no verification run of {metric} at {where}")
        mbps = rows[metric].astype(float).mean()
        copies = float(rows["replica"].astype(float).iloc[0]) if metric in WRITES else 1.0
        # the score alone (as the early CSVs keep it) to the part a node keeps with all of them busy on the machine
        quota = float(where.get("setting_cpu", rows["setting_cpu"].iloc[0]).rstrip("%")) / 100 * PRIOR_LAB_CORES
        busy = min(1.0, PRIOR_LAB_CORES / PRIOR_LAB_NODES / min(quota, 1.0)) \
            if quota * PRIOR_LAB_NODES > PRIOR_LAB_CORES and today in SCORE_ALONE else 1.0
        capacity = rows["cpu_score"].astype(float).mean() * busy * rows["clients"].astype(float).iloc[0] / copies
        mb = float(rows["record_size"].astype(float).iloc[0]) / 2 ** 20
        points.append({"today": today, "metric": metric, "mb_per_op": mb, "mbps_per_unit": mbps / capacity,
                       "direction": "write" if metric in WRITES else "read"})
    out: dict[str, Any] = {}
    resid = []
    for direction in ("write", "read"):
        part = [p for p in points if p["direction"] == direction]
        r = np.array([p["mb_per_op"] for p in part])
        eff = np.array([p["mbps_per_unit"] for p in part])

        def miss(v: np.ndarray, r: np.ndarray = r, eff: np.ndarray = eff) -> np.ndarray:
            return np.log(eff) - np.log(r / (v[0] + v[1] * r))

        fit = least_squares(miss, x0=np.array([0.1, 1.0]), bounds=([1e-9, 1e-9], [np.inf, np.inf]))
        out[direction] = {"per_op": float(fit.x[0]), "per_mb": float(fit.x[1])}
        resid.append(fit.fun)
    every = np.concatenate(resid)
    dof = len(every) - 4
    return {**out, "sd": float(np.sqrt(np.sum(every ** 2) / dof)), "dof": dof, "runs": points}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    w = sub.add_parser("whatif")
    w.add_argument("--store", required=True)
    w.add_argument("--today", required=True)
    w.add_argument("--out", type=Path, required=True)
    f = sub.add_parser("figures")
    f.add_argument("--dir", type=Path, default=ROOT / "data" / "stages_proof")
    f.add_argument("--today", action="append")
    f.add_argument("--json", action="store_true")
    c = sub.add_parser("cpu-prior")
    c.add_argument("--dir", type=Path, default=ROOT / "data" / "stages_proof")
    c.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.command == "cpu-prior":
        prior = cpu_prior(args.dir)
        if args.json:
            print(json.dumps(prior, indent=1))
            return
        for p in prior["runs"]:
            print(f"{p['today']:<16} {p['metric']:<13} {p['mb_per_op']:.4g} MB an operation: "
                  f"{p['mbps_per_unit']:.4g} MB/s per score unit")
        for direction in ("write", "read"):
            cost = prior[direction]
            print(f"{direction}s: per operation {cost['per_op']:.4g}, per MB {cost['per_mb']:.4g} score-unit seconds")
        print(f"log SD {prior['sd']:.3f} on {prior['dof']} degrees of freedom")
        return
    if args.command == "whatif":
        print(yaml.safe_dump(whatif(args.store, args.today, args.out), sort_keys=False))
        return
    todays = args.today or sorted(p.name.removesuffix("-verify.json") for p in args.dir.glob("*-verify.json"))
    results = [figures(args.dir, t) for t in todays]
    if args.json:
        print(json.dumps(results, indent=1, default=lambda v: None if isinstance(v, float) and math.isnan(v) else v))
        return
    for r in results:
        show(r)
    for fam, s in pooled(results).items():
        held = sum(s["best_held"].values())
        print(f"pooled {fam} ({', '.join(s['todays'])}): {s['upgrades']} upgrades, MAPE {s['mape']:.1f}% (rule "
              f"{s['rule_mape']:.1f}%), inside 90% {s['coverage']:.0f}% (" + ", ".join(
                  f"{k} {v:.0f}% of {s['runs_by_stage'][k]}" for k, v in s["coverage_by_stage"].items())
              + f"); best buy held {held} of {len(s['best_held'])}; {s['small_moves']} moved under 3%; inside 90% "
              f"with the lab's constant alone {s['coverage_constant']:.0f}%")


if __name__ == "__main__":
    main()

"""The stages proof (experiments/upgrade_proof/plan_stages.yaml): upgrades of a today bound by round trips or CPU,
collected through emulation on the lab addressed as a plain cluster, as a user collects.

``whatif``: the what-if file verify measures, from the template fixed before the data
(whatif_stages/<today>.template.yaml) and today's measured inputs in the store: each candidate's nominal figures
are today's times its ``scale``; the baseline is the measured today.

``figures``: per today (its data/upgrade_proof_stages_<today>.csv, its model and its verify JSON under --dir, as
benchmarks/stages_proof_collect.sh leaves them): per upgrade the prediction, its 90% interval, the three trials'
mean, whether it fell inside, the stage that binds after it, and the same prediction by the rule that fits
nothing (each stage's measured capacity with every efficiency 1, their minimum, scaled by one factor so that it
gives today as measured); MAPE and coverage of both, the upgrades that moved throughput by under 3% apart; the
best buy per price predicted and measured.

Run: .venv/bin/python benchmarks/stages_proof.py whatif --store rt.db --today round_trip --out whatif.yaml
     .venv/bin/python benchmarks/stages_proof.py figures --dir OUT [--today round_trip] [--json]
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
INPUTS = ("network_rtt_ms", "network_gbps", "cpu_score")
SMALL_MOVE = 0.03  # an upgrade that moved throughput by less than this is reported apart


def setting_of(lab: dict[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in lab.items()}


def today_inputs(store_path: str, today_lab: dict[str, str]) -> dict[str, float]:
    """Today's measured inputs: the mean over the trials of the training campaign whose setting is today's (not
    its repeat at the plan's end)."""
    from gluster_model.dataset import trial_frame
    from gluster_model.store import open_store

    with open_store(store_path, create=False) as st:
        infos = st.campaign_infos()
        names = [n for n, i in infos.items() if i.setting_dict() == today_lab and i.again_of is None
                 and i.purpose.value == "training"]
        if len(names) != 1:
            sys.exit(f"{store_path}: {len(names)} training campaign(s) at today's setting {today_lab}")
        frame = trial_frame(st, names[0])
    return {k: float(frame[k].mean()) for k in INPUTS if k in frame}


def whatif(store_path: str, today: str, out: Path) -> dict[str, Any]:
    template = yaml.safe_load((TEMPLATES / f"{today}.template.yaml").read_text())
    have = today_inputs(store_path, setting_of(template["today"]["lab"]))
    doc: dict[str, Any] = {
        "currency": template["currency"], "level": template["level"],
        "baseline": {"name": "today", "set": {k: round(v, 6) for k, v in have.items()},
                     "lab": template["today"]["lab"]},
        "candidates": [{"name": c["name"], "set": {k: round(have[k] * f, 6) for k, f in c["scale"].items()},
                        "lab": c["lab"], "price": c["price"]} for c in template["candidates"]]}
    out.write_text(f"# Written by benchmarks/stages_proof.py from {TEMPLATES.name}/{today}.template.yaml and the "
                   "store's today\n" + yaml.safe_dump(doc, sort_keys=False))
    return doc


def naive(model_file: Path, metric: str, rows: pd.DataFrame, today_measured: float) -> np.ndarray:
    """The rule that fits nothing: each row's least raw stage capacity (the model's stages, every efficiency 1,
    no main effects), times the one factor that makes today's what today measured (row 0 is today)."""
    from gluster_model.model import artifact
    from gluster_model.model.bottleneck import BottleneckModel, log_capacities
    from gluster_model.model.artifact import config_columns
    from gluster_model.model.features import with_derived

    mf = artifact.load(model_file)
    model = mf.model(metric, "bottleneck")
    assert isinstance(model, BottleneckModel)
    cols = with_derived(config_columns(rows.to_dict("records")), metric)
    raw = np.exp(np.min(log_capacities(cols, metric, model.stages, model.service_s), axis=0))
    return np.asarray(raw * today_measured / raw[0], dtype=float)


def figures(run_dir: Path, today: str) -> dict[str, Any]:
    verification = json.loads((run_dir / f"{today}-verify.json").read_text())
    answer = json.loads((run_dir / f"{today}-predict.json").read_text())
    out: dict[str, Any] = {"today": today, "metrics": {}}
    for m in verification["metrics"]:
        metric = m["metric"]
        asked = {p["scenario"]: p for a in answer["metrics"] if a["metric"] == metric for p in a["predictions"]}
        checks = {c["scenario"]: c for c in m["checks"]}
        if "today" not in checks:
            continue
        hardware = verification["measured_hardware"]
        names = ["today", *[s for s in checks if s != "today"]]
        # the workload and layout as the verify runs had them, each scenario's hardware as it measured
        table = pd.read_csv(run_dir / f"{today}.csv")
        like = table[table["purpose"] == "verification"].iloc[0].to_dict()
        rows = pd.DataFrame([{**like, **hardware[s]} for s in names])
        rule = naive(run_dir / f"{today}-below.json", metric, rows, checks["today"]["measured"])
        ups = []
        for name, r in zip(names[1:], rule[1:]):
            c = checks[name]
            moved = abs(c["measured"] / checks["today"]["measured"] - 1)
            ups.append({"scenario": name, "predicted": c["predicted"], "low": c["low"], "high": c["high"],
                        "measured": c["measured"], "inside": c["inside"], "error_pct": c["error_pct"],
                        "rule": float(r), "rule_error_pct": (float(r) / c["measured"] - 1) * 100,
                        "binds_after": asked[name].get("binds_after"), "not_ranked": asked[name].get("not_ranked"),
                        "moved_pct": 100 * moved, "small_move": moved < SMALL_MOVE})

        def summary(rows_: list[dict[str, Any]]) -> dict[str, Any]:
            if not rows_:
                return {"upgrades": 0}
            return {"upgrades": len(rows_), "mape": float(np.mean([abs(u["error_pct"]) for u in rows_])),
                    "coverage": 100 * float(np.mean([u["inside"] for u in rows_])),
                    "rule_mape": float(np.mean([abs(u["rule_error_pct"]) for u in rows_]))}

        out["metrics"][metric] = {
            "today_measured": checks["today"]["measured"], "upgrades": ups, **summary(ups),
            "moved": summary([u for u in ups if not u["small_move"]]),
            "small_moves": summary([u for u in ups if u["small_move"]]),
            "best_predicted": m["best_predicted"], "best_measured": m["best_measured"], "tied_with": m["tied_with"],
            "best_held": bool(m["ranking_held"] or m["best_measured"] in (m["tied_with"] or []))}
    return out


def show(result: dict[str, Any]) -> None:
    for metric, m in result["metrics"].items():
        print(f"{result['today']} / {metric}: today measured {m['today_measured']:.4g}; {m['upgrades']} upgrades, "
              f"MAPE {m['mape']:.1f}% (rule {m['rule_mape']:.1f}%), inside 90% {m['coverage']:.0f}%; best buy "
              f"predicted {m['best_predicted']}, measured {m['best_measured']}"
              f"{' (tied: ' + ', '.join(m['tied_with']) + ')' if m['tied_with'] else ''}: "
              f"{'held' if m['best_held'] else 'NOT held'}")
        for u in m["upgrades"]:
            print(f"  {u['scenario']:<28} predicted {u['predicted']:8.4g} [{u['low']:.4g}, {u['high']:.4g}] "
                  f"measured {u['measured']:8.4g} ({u['error_pct']:+.1f}%, {'in' if u['inside'] else 'OUT'}) "
                  f"rule {u['rule']:8.4g} ({u['rule_error_pct']:+.1f}%) moved {u['moved_pct']:.1f}%"
                  f"{' [under 3%]' if u['small_move'] else ''}; after it: {u['binds_after']}"
                  f"{'; ' + u['not_ranked'] if u['not_ranked'] else ''}")


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
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()

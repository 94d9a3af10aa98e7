"""The upgrade proof, recomputed from the shipped data: for each "today" of experiments/upgrade_proof (a throttled
lab standing for a user's cluster), fit on the bottleneck plan measured at or below today only, predict the
upgrades of whatif/<today>.yaml, and set the predictions beside what `glmodel verify` measured.

Without ``--proof`` it recomputes the headline: every proof collected after the model's form was last fixed (the
sixth, the seventh and the eighth), pooled; ``--proof eighth`` (or ``seventh``, ``sixth``) is one of them alone, and
an earlier proof is marked post hoc (the form changed after its data existed). Per metric (write, read), over every
upgrade of every today: MAPE (%) of the predictions at the hardware as the verification measured it (as `glmodel
verify` predicts), the share of measured means inside their 90% intervals (coverage, % ; by the stage the prediction
binds at), and whether the upgrade predicted best per price measured best in every today (``best_held``; predicted
best: predict's rank 1, or where no gain is clear of zero the largest predicted gain per price among the candidates
it would rank; ``best_in_tie``: the measured best is the predicted best or a candidate predict says it is tied
with). Intervals are for the mean of the trials each verification measured, as `glmodel verify` asks for them.
Predictions come from the bottleneck model of a model file fitted as `glmodel fit --family hardware` fits it; the
ranking is `glmodel predict`'s.

With ``--calibrate`` it also prints the another-campaign term calibrated for coverage over the upgrades, beside its
maximum-likelihood estimates (``--proof first,second,third,fourth,fifth --calibrate``: how NEW_CAMPAIGN_SD in
model/bottleneck.py was set; ``--proof first,second,third,fourth``: how the fifth proof's per-load form was).

Run: .venv/bin/python benchmarks/upgrade_from_below.py [--data-dir data] [--json] [--details] [--calibrate]
     [--proof eighth | first,second,third]
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TODAYS = ("link_bound", "disk_bound", "balanced")
# The shipped proofs' file prefixes: the eighth, seventh and sixth (collected after the form was last fixed), the
# fifth, fourth, third, second and first (each a row of its own; data/README.md says what changed after each).
PROOFS = {"eighth": "upgrade_proof_eighth", "seventh": "upgrade_proof_seventh", "sixth": "upgrade_proof_sixth",
          "fifth": "upgrade_proof_fifth", "fourth": "upgrade_proof_fourth", "third": "upgrade_proof_third",
          "second": "upgrade_proof", "first": "upgrade_proof_first"}
# Each proof's what-if files (experiments/upgrade_proof/<dir>/<today>.yaml): the fourth's to eighth's todays are
# their own.
WHATIF = {"upgrade_proof_eighth": "whatif_eighth", "upgrade_proof_seventh": "whatif_seventh",
          "upgrade_proof_sixth": "whatif_sixth", "upgrade_proof_fifth": "whatif_fifth",
          "upgrade_proof_fourth": "whatif_fourth"}
# The proofs collected after the form was last fixed (2026-11-27 11:46:37 UTC): clean tests of it, each alone or
# pooled; the headline is all of them pooled (declared before the seventh was collected; the eighth, declared
# before its data, is the form's last).
CLEAN = ("sixth", "seventh", "eighth")
HEADLINE = ",".join(CLEAN)
METRICS = ("write", "read")
MEASURED = ("network_gbps", "disk_read_mbps", "disk_write_mbps", "client_ram_gb", "cpu_score")


def lab_settings(campaign: str) -> dict[str, int]:
    """'verify.upgrade_proof@lab:link=400mbit,disk=60MB/s,ram=1GB' -> the settings as numbers (bit/s, B/s, B)."""
    from gluster_model.lab import parse_setting

    tail = campaign.split("@", 1)[1].split(":", 1)[1] if ":" in campaign.split("@", 1)[-1] else ""
    out: dict[str, int] = {}
    for part in filter(None, tail.split(",")):
        key, _, value = part.partition("=")
        out.update(parse_setting(key, value))
    return out


def scenario_settings(whatif: Path) -> dict[str, dict[str, int]]:
    """Each scenario of a what-if file -> the lab settings `verify` builds it with (today's, then its own)."""
    import yaml

    from gluster_model.lab import parse_setting

    doc = yaml.safe_load(whatif.read_text())
    base: dict[str, int] = {}
    for k, v in doc["baseline"].get("lab", {}).items():
        base.update(parse_setting(k, str(v)))
    out = {doc["baseline"]["name"]: base}
    for c in doc["candidates"]:
        own = dict(base)
        for k, v in c.get("lab", {}).items():
            own.update(parse_setting(k, str(v)))
        out[c["name"]] = own
    return out


def one_today(today: str, data_dir: Path, level: float, prefix: str = "upgrade_proof") -> dict[str, Any]:
    from gluster_model.model import artifact
    from gluster_model.model.artifact import config_columns
    from gluster_model.model.physics import STAGES
    from gluster_model.model.features import with_derived
    from gluster_model.model.train import train
    from gluster_model.predict import scenarios as sc
    from gluster_model.predict.whatif import measured_settings, model_inputs, resolve, what_if

    frame = pd.read_csv(data_dir / f"{prefix}_{today}.csv")
    verifying = frame["campaign"].astype(str).str.startswith("verify.")
    below, checked = frame[~verifying].reset_index(drop=True), frame[verifying]
    whatif = ROOT / "experiments" / "upgrade_proof" / WHATIF.get(prefix, "whatif") / f"{today}.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "below.json"
        train(below, f"data/{prefix}_{today}.csv (below today)", out, family="hardware",
              metrics=list(METRICS), samples=256, bootstrap=0)
        mf = artifact.load(out)
        q = sc.from_file(whatif, model_inputs(mf, METRICS), measured_settings(mf, METRICS))
        answer = what_if(mf, q, level=level)
    settings = scenario_settings(whatif)
    measured: dict[str, pd.DataFrame] = {}
    for campaign, rows in checked.groupby("campaign"):
        have = lab_settings(str(campaign))
        for name, want in settings.items():
            if all(have.get(k) == v for k, v in want.items()):
                measured[name] = rows
    result: dict[str, Any] = {"today": today, "metrics": {}}
    for m in answer.metrics:
        domain = mf.domain(m.metric)
        rows_out = []
        base_mean = float(measured[q.baseline.name][m.metric].mean()) if q.baseline.name in measured else math.nan
        for s, p in zip(q.scenarios[1:], m.predictions[1:]):
            if s.name not in measured:
                continue
            got = measured[s.name]
            config = resolve(domain, q.baseline, s)
            config.update({k: float(got[k].mean()) for k in MEASURED if k in got and k in config})
            predicted = mf.predict([config], level, metric=m.metric, use="bottleneck", trials=len(got),
                                   new_campaign=True)
            model = mf.model(m.metric, "bottleneck")
            cols = with_derived(config_columns([config]), m.metric)
            stage = STAGES[int(model.binding(cols)[0])]  # type: ignore[attr-defined]
            mean = float(got[m.metric].mean())
            value, low, high = float(predicted.value[0]), float(predicted.low[0]), float(predicted.high[0])
            # the conformal part alone (log half-width): the interval less the another-campaign term it adds to
            term = float(model.new_campaign_q(cols, level)[0])  # type: ignore[attr-defined]
            conformal_q = math.sqrt(max(math.log(high / value) ** 2 - term ** 2, 0.0))
            load = float(model.cpu_load(cols)[0])  # type: ignore[attr-defined]
            rows_out.append({"scenario": s.name, "basis": p.basis, "predicted": value, "low": low, "high": high,
                             "measured": mean, "trials": int(len(got)), "error_pct": (value / mean - 1) * 100,
                             "inside": bool(low <= mean <= high), "stage": stage, "price": s.price,
                             "measured_gain": mean - base_mean, "predicted_gain": p.delta, "rank": p.rank,
                             "nominal": p.value, "bound": p.bound, "bound_stage": p.bound_stage,
                             "binds_after": p.binds_after, "conformal_q": conformal_q, "load": load})
        eligible = [r for r in rows_out if r["basis"] != "extrapolated" and r["price"]]
        gains = [r for r in eligible if r["measured_gain"] > 0]
        measured_best = max(gains, key=lambda r: r["measured_gain"] / r["price"])["scenario"] if gains else None
        # The upgrade predicted best per price: predict's rank 1 (a gain clear of zero), or where no gain is
        # clear of zero, the largest predicted gain per price among those predict would rank (the top row of
        # its table, not recommended); ``recommended`` says which.
        ahead = [r for r in eligible if r["predicted_gain"] is not None and r["predicted_gain"] > 0]
        predicted_best = m.best_upgrade or (max(ahead, key=lambda r: r["predicted_gain"] / r["price"])["scenario"]
                                            if ahead else None)
        # the candidates predict says the best buy is tied with (added after the sixth proof's data: post hoc there)
        tied = m.best.tied_with if m.best else []
        result["metrics"][m.metric] = {"today_measured": base_mean, "upgrades": rows_out,
                                       "predicted_best": predicted_best, "recommended": m.best_upgrade is not None,
                                       "measured_best": measured_best, "best_held": predicted_best == measured_best,
                                       "tied_with": tied, "best_in_tie": measured_best in [predicted_best, *tied]}
    return result


def recompute(proofs: list[str], data_dir: Path, level: float) -> list[dict[str, Any]]:
    """``one_today`` for every today of each of ``proofs`` whose data are in ``data_dir``; pooled (several proofs),
    each today is named with its proof ("sixth:link_bound")."""
    results = []
    for proof in proofs:
        for t in TODAYS:
            if (data_dir / f"{PROOFS[proof]}_{t}.csv").exists():
                results.append(one_today(t, data_dir, level, PROOFS[proof]))
                if len(proofs) > 1:
                    results[-1]["today"] = f"{proof}:{t}"
    return results


def summarise(results: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for metric in METRICS:
        rows = [r for t in results for r in t["metrics"].get(metric, {}).get("upgrades", [])]
        if not rows:
            continue
        by_stage: dict[str, list[bool]] = {}
        for r in rows:
            by_stage.setdefault(r["stage"], []).append(r["inside"])
        out[metric] = {
            "mape": float(np.mean([abs(r["error_pct"]) for r in rows])),
            "coverage": float(np.mean([r["inside"] for r in rows]) * 100),
            "coverage_by_stage": {k: float(np.mean(v) * 100) for k, v in by_stage.items()},
            "runs_by_stage": {k: len(v) for k, v in by_stage.items()},
            "best_held": all(t["metrics"][metric]["best_held"] for t in results
                             if metric in t["metrics"] and t["metrics"][metric]["upgrades"]),
            "best_in_tie": all(t["metrics"][metric]["best_in_tie"] for t in results
                               if metric in t["metrics"] and t["metrics"][metric]["upgrades"]),
            "upgrades": len(rows),
            "per_today": {t["today"]: {"mape": float(np.mean([abs(r["error_pct"]) for r in
                                                               t["metrics"][metric]["upgrades"]])),
                                       "coverage": float(np.mean([r["inside"] for r in
                                                                  t["metrics"][metric]["upgrades"]]) * 100),
                                       "predicted_best": t["metrics"][metric]["predicted_best"],
                                       "recommended": t["metrics"][metric]["recommended"],
                                       "measured_best": t["metrics"][metric]["measured_best"],
                                       "tied_with": t["metrics"][metric]["tied_with"],
                                       "best_held": t["metrics"][metric]["best_held"]}
                          for t in results if metric in t["metrics"] and t["metrics"][metric]["upgrades"]},
        }
    return out


def new_campaign_fit(rows: list[dict[str, Any]], level: float) -> dict[str, float]:
    """The another-campaign term (model/bottleneck.py) over ``rows``, each a log error ln(measured / predicted)
    with its conformal half-width ``conformal_q`` at ``level``.

    ``conformal``: the constant SD calibrated for coverage, the smallest that puts ceil(level (n + 1)) rows inside
    sqrt(conformal_q² + (z s)²), z the normal quantile of ``level`` (the split-conformal rank, Lei et al. 2018,
    applied to the term: each row needs s_i = sqrt(max(err² - conformal_q², 0)) / z). Beside it the
    maximum-likelihood estimates, each error taken as normal with variance (conformal_q / z)² + s², s either a
    constant (``sd``) or ``per_load`` times the row's CPU load (predicted MB/s over its CPU score), with each one's
    log-likelihood (a variance component beside the conformal part, a variance function of the load; Searle,
    Casella & McCulloch 1992, ch. 6; Carroll & Ruppert 1988, ch. 3)."""
    from scipy.optimize import minimize_scalar
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    err = np.log(np.array([r["measured"] / r["predicted"] for r in rows]))
    cq = np.array([r["conformal_q"] for r in rows])
    base = (cq / z) ** 2
    load = np.array([r["load"] for r in rows])
    need = np.sort(np.sqrt(np.maximum(err ** 2 - cq ** 2, 0.0)) / z)
    out: dict[str, float] = {"conformal": float(need[min(math.ceil(level * (len(rows) + 1)), len(rows)) - 1])}
    for name, scale in (("sd", np.ones(len(rows))), ("per_load", load)):
        if not np.isfinite(scale).all():
            continue

        def nll(log_s: float, scale: np.ndarray = scale) -> float:
            var = base + (math.exp(log_s) * scale) ** 2
            return float(np.sum(0.5 * np.log(2 * math.pi * var) + 0.5 * err ** 2 / var))

        best = minimize_scalar(nll, bounds=(math.log(1e-5), math.log(0.5)), method="bounded")
        out[name], out[f"{name}_loglik"] = float(math.exp(best.x)), -float(best.fun)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data")
    ap.add_argument("--level", type=float, default=0.9)
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--details", action="store_true", help="also print every upgrade's row")
    ap.add_argument("--proof", default=HEADLINE,
                    help=f"{HEADLINE} (the headline, pooled): the proofs collected after the model's form was last "
                    "fixed, each a clean test alone too; "
                    "fifth, fourth, third, second, first: the earlier proofs' data recomputed with today's form "
                    "(separate rows, never the headline: the form changed after they existed, and was estimated on "
                    "them); "
                    "several joined by commas are pooled")
    ap.add_argument("--calibrate", action="store_true",
                    help="also print the another-campaign term calibrated for coverage over these upgrades, and its "
                    "maximum-likelihood estimates (per metric and both), as NEW_CAMPAIGN_SD was set on "
                    "first,second,third,fourth,fifth")
    args = ap.parse_args()
    proofs = args.proof.split(",")
    unknown = [p for p in proofs if p not in PROOFS]
    if unknown:
        sys.exit(f"--proof: {', '.join(unknown)} is not a proof (they are {', '.join(PROOFS)})")
    for proof in proofs:
        if not any((args.data_dir / f"{PROOFS[proof]}_{t}.csv").exists() for t in TODAYS):
            sys.exit(f"no {PROOFS[proof]}_<today>.csv in {args.data_dir}")
    results = recompute(proofs, args.data_dir, args.level)
    todays = [t["today"] for t in results]
    summary = summarise(results)
    if args.calibrate:
        rows = {m: [r for t in results for r in t["metrics"].get(m, {}).get("upgrades", [])] for m in METRICS}
        rows["both"] = rows["write"] + rows["read"]
        summary = {**summary, "new_campaign": {m: new_campaign_fit(v, args.level) for m, v in rows.items() if v}}
    post_hoc = any(p not in CLEAN for p in proofs)
    if args.json:
        if post_hoc:  # marked, so the separate row is never read as the headline
            summary = {**summary, "post_hoc": True}
        print(json.dumps(summary if not args.details else {"summary": summary, "todays": results}, indent=1))
        return
    earlier = [p for p in proofs if p not in CLEAN]  # the proofs whose data existed before the form was fixed
    whose = (f"{', '.join(earlier[:-1])} and {earlier[-1]} proofs'" if len(earlier) > 1
             else f"{''.join(earlier)} proof's")
    print(f"upgrades predicted from data at or below today ({', '.join(todays)}); "
          f"{args.level:.0%} intervals, bottleneck model" + (f" (POST HOC: the {whose} data, the form changed "
                                                              "after they existed; not a clean test)"
                                                              if post_hoc else ""))
    if args.calibrate:
        print("another-campaign term over these upgrades, calibrated for coverage (by maximum likelihood: constant "
              "SD, per unit of CPU load; log-likelihoods): " + ", ".join(
                  f"{m} {100 * v['conformal']:.2f}% ({100 * v['sd']:.2f}%, {100 * v['per_load']:.2f}%; "
                  f"{v['sd_loglik']:.1f}, {v['per_load_loglik']:.1f})" for m, v in summary["new_campaign"].items()))
    print(f"{'metric':<7} {'upgrades':>8} {'MAPE %':>7} {'coverage %':>10}  by stage                      best held")
    for metric, s in summary.items():
        if metric not in METRICS:
            continue
        stages = ", ".join(f"{k} {v:.0f}% ({s['runs_by_stage'][k]})" for k, v in s["coverage_by_stage"].items())
        print(f"{metric:<7} {s['upgrades']:>8} {s['mape']:>7.1f} {s['coverage']:>10.0f}  {stages:<30} "
              f"{'yes' if s['best_held'] else 'no'}")
        for today, t in s["per_today"].items():
            tie = f" (tied with {', '.join(t['tied_with'])})" if t["tied_with"] else ""
            print(f"  {today:<12} MAPE {t['mape']:5.1f}%  coverage {t['coverage']:4.0f}%  best predicted "
                  f"{t['predicted_best'] or '-'}{tie}{'' if t['recommended'] else ' (no gain clear of zero)'}, "
                  f"measured {t['measured_best'] or '-'}")
    if args.details:
        for t in results:
            for metric, m in t["metrics"].items():
                for r in m["upgrades"]:
                    print(f"  {t['today']:<11} {metric:<5} {r['scenario']:<17} {r['basis']:<12} predicted "
                          f"{r['predicted']:7.1f} [{r['low']:.1f}, {r['high']:.1f}] measured {r['measured']:7.1f} "
                          f"({r['error_pct']:+.1f}%) {r['stage']}")


if __name__ == "__main__":
    main()

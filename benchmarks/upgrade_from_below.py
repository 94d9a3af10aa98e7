"""The upgrade proof, recomputed from the shipped data: for each "today" of experiments/upgrade_proof (a throttled
lab standing for a user's cluster), fit on the bottleneck plan measured at or below today only, predict the
upgrades of whatif/<today>.yaml, and set the predictions beside what `glmodel verify` measured.

Without ``--proof`` it recomputes the headline, as declared before the data it covers. MAPE and coverage: the
proofs collected after the model's form was last fixed, up to the one declared its last (the sixth, the seventh and
the eighth), pooled; the ninth, collected after that on the same form, is a row of its own. Best held: every today
collected after predict's tie rule was fixed (the seventh's to the ninth's), each judged by that rule; beside it the
strict count (the predicted best alone) over every proof after the form. ``--proof ninth`` (or ``eighth``, ...) is
one proof alone, several joined by commas are pooled, and an earlier proof is marked post hoc (the form changed
after its data existed). Per metric (write, read), over every upgrade of every today: MAPE (%) of the predictions
at the hardware as the verification measured it (as `glmodel verify` predicts), the share of measured means inside
their 90% intervals (coverage, % ; by the stage the prediction binds at), and whether the best buy per price held in
every today (``best_held``): a today collected after the tie rule holds when the measured best is predict's best or
a candidate predict names as tied with it, an earlier today when it is the predicted best itself
(``best_held_strict``: that for every today; predicted best: predict's rank 1, or where no gain is clear of zero
the largest predicted gain per price among the candidates it would rank). Intervals are for the mean of the trials
each verification measured, as `glmodel verify` asks for them. Predictions come from the bottleneck model of a
model file fitted as `glmodel fit --family hardware` fits it; the ranking is `glmodel predict`'s.

With ``--calibrate`` it also prints the another-campaign term calibrated for coverage over the upgrades, beside its
maximum-likelihood estimates (``--proof first,second,third,fourth,fifth --calibrate``: how NEW_CAMPAIGN_SD in
model/bottleneck.py was set; ``--proof first,second,third,fourth``: how the fifth proof's per-load form was).

Run: .venv/bin/python benchmarks/upgrade_from_below.py [--data-dir data] [--json] [--details] [--calibrate]
     [--proof ninth | first,second,third]
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TODAYS = ("link_bound", "disk_bound", "balanced")
# The shipped proofs' file prefixes: the ninth to sixth (collected after the form was last fixed), the fifth, fourth,
# third, second and first (each a row of its own; data/README.md says what changed after each).
PROOFS = {"ninth": "upgrade_proof_ninth", "eighth": "upgrade_proof_eighth", "seventh": "upgrade_proof_seventh",
          "sixth": "upgrade_proof_sixth", "fifth": "upgrade_proof_fifth", "fourth": "upgrade_proof_fourth",
          "third": "upgrade_proof_third", "second": "upgrade_proof", "first": "upgrade_proof_first"}
# Each proof's what-if files (experiments/upgrade_proof/<dir>/<today>.yaml): the fourth's to ninth's todays are
# their own.
WHATIF = {"upgrade_proof_ninth": "whatif_ninth", "upgrade_proof_eighth": "whatif_eighth",
          "upgrade_proof_seventh": "whatif_seventh", "upgrade_proof_sixth": "whatif_sixth",
          "upgrade_proof_fifth": "whatif_fifth", "upgrade_proof_fourth": "whatif_fourth"}
# The proofs collected after the form was last fixed (2026-11-27 11:46:37 UTC, a92661a): clean tests of it, alone or
# pooled.
CLEAN = ("sixth", "seventh", "eighth", "ninth")
# The MAPE and coverage headline: those pooled up to the eighth, declared the form's last before its data (the
# headline declared before the seventh); the ninth, declared before its data, is a row of its own.
POOLED = ("sixth", "seventh", "eighth")
# The proofs collected after predict's tie rule was fixed (a21ed2d, 2026-11-27 13:05:52 UTC, after the sixth's
# data): their todays are judged by it, and they are the best-held headline (declared before the ninth's data).
TIE_RULE = ("seventh", "eighth", "ninth")
METRICS = ("write", "read")
MEASURED = ("network_gbps", "disk_read_mbps", "disk_write_mbps", "client_ram_gb", "cpu_score")


def lab_settings(row: dict[str, Any]) -> dict[str, int]:
    """A row's hardware setting (its ``setting_*`` columns: link=400mbit, disk=60MB/s, ...) as numbers (bit/s,
    B/s, B)."""
    from gluster_model.lab import parse_setting
    from gluster_model.store.identity import setting_from_columns

    out: dict[str, int] = {}
    for key, value in setting_from_columns(row).items():
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
    from gluster_model.dataset import read_table
    from gluster_model.model import artifact
    from gluster_model.model.artifact import config_columns
    from gluster_model.model.physics import STAGES
    from gluster_model.model.features import with_derived
    from gluster_model.model.train import train
    from gluster_model.predict import scenarios as sc
    from gluster_model.predict.whatif import measured_settings, model_inputs, resolve, what_if

    frame = read_table(data_dir / f"{prefix}_{today}.csv")
    verifying = frame["purpose"] == "verification"
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
    for campaign, rows in checked.groupby("campaign", observed=True):
        have = lab_settings(rows.iloc[0].to_dict())
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


def recompute(proofs: Sequence[str], data_dir: Path, level: float) -> list[dict[str, Any]]:
    """``one_today`` for every today of each of ``proofs`` whose data are in ``data_dir``, with its ``proof``;
    pooled (several proofs), each today is named with its proof ("sixth:link_bound")."""
    results = []
    for proof in proofs:
        for t in TODAYS:
            if (data_dir / f"{PROOFS[proof]}_{t}.csv").exists():
                results.append({**one_today(t, data_dir, level, PROOFS[proof]), "proof": proof})
                if len(proofs) > 1:
                    results[-1]["today"] = f"{proof}:{t}"
    return results


def held(today: dict[str, Any], metric: str) -> bool:
    """Whether the best buy held in ``today``, by the rule in force when its data were collected: after predict's
    tie rule, the measured best is the predicted best or a candidate predict named as tied with it; before it, the
    measured best is the predicted best."""
    m = today["metrics"][metric]
    return bool(m["best_in_tie"] if today.get("proof") in TIE_RULE else m["best_held"])


def summarise(results: list[dict[str, Any]], pooled: Sequence[str] | None = None,
              best_from: Sequence[str] | None = None) -> dict[str, Any]:
    """Per metric: MAPE and coverage over the upgrades of the todays of ``pooled`` proofs, ``best_held`` over the
    todays of ``best_from`` (each by ``held``), ``best_held_strict`` and ``best_in_tie`` over every today, and each
    today's own figures; all of ``results`` where a selection is None."""
    out: dict[str, Any] = {}
    for metric in METRICS:
        todays = [t for t in results if metric in t["metrics"] and t["metrics"][metric]["upgrades"]]
        pool = [t for t in todays if pooled is None or t.get("proof") in pooled]
        judged = [t for t in todays if best_from is None or t.get("proof") in best_from]
        rows = [r for t in pool for r in t["metrics"][metric]["upgrades"]]
        if not rows:
            continue
        by_stage: dict[str, list[bool]] = {}
        for r in rows:
            by_stage.setdefault(r["stage"], []).append(r["inside"])
        strict = [t["metrics"][metric]["best_held"] for t in todays]
        out[metric] = {
            "mape": float(np.mean([abs(r["error_pct"]) for r in rows])),
            "coverage": float(np.mean([r["inside"] for r in rows]) * 100),
            "coverage_by_stage": {k: float(np.mean(v) * 100) for k, v in by_stage.items()},
            "runs_by_stage": {k: len(v) for k, v in by_stage.items()},
            "upgrades": len(rows),
            "best_held": all(held(t, metric) for t in judged),
            "best_held_todays": [sum(held(t, metric) for t in judged), len(judged)],
            "best_held_strict": all(strict),
            "best_held_strict_todays": [sum(strict), len(strict)],
            "best_in_tie": all(t["metrics"][metric]["best_in_tie"] for t in todays),
            "per_today": {t["today"]: {"mape": float(np.mean([abs(r["error_pct"]) for r in
                                                               t["metrics"][metric]["upgrades"]])),
                                       "coverage": float(np.mean([r["inside"] for r in
                                                                  t["metrics"][metric]["upgrades"]]) * 100),
                                       "predicted_best": t["metrics"][metric]["predicted_best"],
                                       "recommended": t["metrics"][metric]["recommended"],
                                       "measured_best": t["metrics"][metric]["measured_best"],
                                       "tied_with": t["metrics"][metric]["tied_with"],
                                       "best_held": t["metrics"][metric]["best_held"],
                                       "best_in_tie": t["metrics"][metric]["best_in_tie"],
                                       "rule": "tie" if t.get("proof") in TIE_RULE else "strict",
                                       "held": held(t, metric)}
                          for t in todays},
        }
    return out


def verdict(today: dict[str, Any]) -> str:
    """'held', 'held (a named tie)', or 'not held' with why, for one today's row of ``summarise``."""
    if today["best_held"]:
        return "held"
    if today["held"]:
        return "held (a named tie)"
    before = " (collected before the tie rule; in its named tie)" if today["best_in_tie"] else ""
    return "not held" + before


def headline(data_dir: Path, level: float) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The headline as declared (module docstring): every proof after the form recomputed; MAPE and coverage over
    POOLED, the best buy over TIE_RULE's todays; each proof outside POOLED also a row of its own (``own_rows``)."""
    results = recompute(CLEAN, data_dir, level)
    summary = summarise(results, pooled=POOLED, best_from=TIE_RULE)
    own = {p: summarise([t for t in results if t["proof"] == p]) for p in CLEAN if p not in POOLED}
    summary["own_rows"] = {p: {m: {k: s[m][k] for k in ("mape", "coverage", "coverage_by_stage", "upgrades",
                                                          "best_held")} for m in s} for p, s in own.items() if s}
    for form, todays in stages_forms().items():
        stages = stages_rows(data_dir / "stages_proof", todays)
        if stages:
            summary[form] = stages
    return results, summary


@functools.cache
def _stages_module() -> Any:
    """benchmarks/stages_proof.py, loaded once."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("stages_proof", Path(__file__).with_name("stages_proof.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def stages_forms() -> dict[str, tuple[str, ...]]:
    """The stages proofs' todays per form of the model they were collected after (benchmarks/stages_proof.py)."""
    return dict(_stages_module().FORMS)


def stages_rows(run_dir: Path, todays: Sequence[str]) -> dict[str, Any]:
    """The stages proofs ``todays`` (data/stages_proof: todays bound by round trips, CPU, links or disk IOPS,
    collected through emulation; benchmarks/stages_proof.py) pooled per metric family (MB/s, files/s, IOPS), beside
    the rule that fits nothing; a row of their own, never part of the headline above (another plan and protocol).
    A today whose verification is not shipped is left out."""
    stages = _stages_module()
    have = [t for t in todays if (run_dir / f"{t}-verify.json").exists()]
    return dict(stages.pooled([stages.figures(run_dir, t) for t in have])) if have else {}


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
    ap.add_argument("--json-out", type=Path, default=None,
                    help="also write the JSON to this file while printing the table (one computation for both)")
    ap.add_argument("--details", action="store_true", help="also print every upgrade's row")
    ap.add_argument("--proof", default=None,
                    help="without it, the headline as declared: MAPE and coverage over the sixth to eighth proofs "
                    "pooled, the best buy over every today after predict's tie rule (seventh to ninth); "
                    f"{', '.join(CLEAN)}: a proof collected after the model's form was last fixed, a clean test "
                    "alone; fifth, fourth, third, second, first: the earlier proofs' data recomputed with today's "
                    "form (separate rows, never the headline: the form changed after they existed, and was "
                    "estimated on them); several joined by commas are pooled")
    ap.add_argument("--calibrate", action="store_true",
                    help="also print the another-campaign term calibrated for coverage over these upgrades, and its "
                    "maximum-likelihood estimates (per metric and both), as NEW_CAMPAIGN_SD was set on "
                    "first,second,third,fourth,fifth")
    args = ap.parse_args()
    proofs = args.proof.split(",") if args.proof else list(CLEAN)
    unknown = [p for p in proofs if p not in PROOFS]
    if unknown:
        sys.exit(f"--proof: {', '.join(unknown)} is not a proof (they are {', '.join(PROOFS)})")
    for proof in proofs:
        if not any((args.data_dir / f"{PROOFS[proof]}_{t}.csv").exists() for t in TODAYS):
            sys.exit(f"no {PROOFS[proof]}_<today>.csv in {args.data_dir}")
    if args.proof:
        results = recompute(proofs, args.data_dir, args.level)
        summary = summarise(results)
    else:
        results, summary = headline(args.data_dir, args.level)
    pooled = [p for p in proofs if args.proof or p in POOLED]
    if args.calibrate:
        rows = {m: [r for t in results if t["proof"] in pooled for r in t["metrics"].get(m, {}).get("upgrades", [])]
                for m in METRICS}
        rows["both"] = rows["write"] + rows["read"]
        summary = {**summary, "new_campaign": {m: new_campaign_fit(v, args.level) for m, v in rows.items() if v}}
    post_hoc = any(p not in CLEAN for p in proofs)
    if post_hoc:  # marked, so the separate row is never read as the headline
        summary = {**summary, "post_hoc": True}
    as_json = json.dumps(summary if not args.details else {"summary": summary, "todays": results}, indent=1)
    if args.json_out is not None:
        args.json_out.write_text(as_json)
    if args.json:
        print(as_json)
        return
    earlier = [p for p in proofs if p not in CLEAN]  # the proofs whose data existed before the form was fixed
    whose = (f"{', '.join(earlier[:-1])} and {earlier[-1]} proofs'" if len(earlier) > 1
             else f"{''.join(earlier)} proof's")
    print(f"upgrades predicted from data at or below today ({', '.join(t['today'] for t in results)}); "
          f"{args.level:.0%} intervals, bottleneck model" + (f" (POST HOC: the {whose} data, the form changed "
                                                              "after they existed; not a clean test)"
                                                              if post_hoc else ""))
    if not args.proof:
        print(f"MAPE and coverage: the {', '.join(POOLED)} proofs pooled; best held: every today of the "
              f"{', '.join(TIE_RULE)} (after predict's tie rule), by that rule; strict: the predicted best alone, "
              "every today")
    if args.calibrate:
        print("another-campaign term over these upgrades, calibrated for coverage (by maximum likelihood: constant "
              "SD, per unit of CPU load; log-likelihoods): " + ", ".join(
                  f"{m} {100 * v['conformal']:.2f}% ({100 * v['sd']:.2f}%, {100 * v['per_load']:.2f}%; "
                  f"{v['sd_loglik']:.1f}, {v['per_load_loglik']:.1f})" for m, v in summary["new_campaign"].items()))
    print(f"{'metric':<7} {'upgrades':>8} {'MAPE %':>7} {'coverage %':>10}  {'by stage':<44} best held")
    for metric, s in summary.items():
        if metric not in METRICS:
            continue
        stages = ", ".join(f"{k} {v:.0f}% ({s['runs_by_stage'][k]})" for k, v in s["coverage_by_stage"].items())
        k, n = s["best_held_todays"]
        ks, ns = s["best_held_strict_todays"]
        print(f"{metric:<7} {s['upgrades']:>8} {s['mape']:>7.1f} {s['coverage']:>10.0f}  {stages:<44} "
              f"{'yes' if s['best_held'] else 'no'} ({k} of {n}; strict {ks} of {ns})")
        for today, t in s["per_today"].items():
            tie = f" (tied with {', '.join(t['tied_with'])})" if t["tied_with"] else ""
            print(f"  {today:<19} MAPE {t['mape']:5.1f}%  coverage {t['coverage']:4.0f}%  best predicted "
                  f"{t['predicted_best'] or '-'}{tie}{'' if t['recommended'] else ' (no gain clear of zero)'}, "
                  f"measured {t['measured_best'] or '-'}: {verdict(t)}")
    for proof, own in summary.get("own_rows", {}).items():
        for metric, s in own.items():
            print(f"{proof} alone (not pooled): {metric} {s['upgrades']} upgrades, MAPE {s['mape']:.1f}%, coverage "
                  f"{s['coverage']:.0f}% (" + ", ".join(f"{k} {v:.0f}%" for k, v in s["coverage_by_stage"].items())
                  + f"), best held {'yes' if s['best_held'] else 'no'}")
    for form in stages_forms():
        for fam, s in summary.get(form, {}).items():
            print(f"{form.replace('_', ' ')} proofs (not pooled), {fam} ({', '.join(s['todays'])}): {s['upgrades']} "
                  f"upgrades, MAPE {s['mape']:.1f}% (the rule that fits nothing {s['rule_mape']:.1f}%), coverage "
                  f"{s['coverage']:.0f}% (" + ", ".join(f"{k} {v:.0f}%" for k, v in s["coverage_by_stage"].items())
                  + f"), best held {sum(s['best_held'].values())} of {len(s['best_held'])}")
    if args.details:
        for t in results:
            for metric, m in t["metrics"].items():
                for r in m["upgrades"]:
                    print(f"  {t['today']:<19} {metric:<5} {r['scenario']:<17} {r['basis']:<12} predicted "
                          f"{r['predicted']:7.1f} [{r['low']:.1f}, {r['high']:.1f}] measured {r['measured']:7.1f} "
                          f"({r['error_pct']:+.1f}%) {r['stage']}")


if __name__ == "__main__":
    main()

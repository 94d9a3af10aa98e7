"""Tuning searches against Gluster's defaults, recomputed from the shipped data: for each workload of
experiments/tune_search (its plan fixed before measuring), data/tune_search_<workload>.csv holds every trial of its
search (screening, more trials, confirmation), and data/tune_search_<workload>_<variant>.csv the same search with
one of the plan's variants (key ``<workload>_<variant>``; what each changes and why is in its plan, e.g. ``rtt``,
every lab node's received packets held 250 us).

Per search, on the run footing the search now uses (``campaign.search.judge_search``: the run as the unit, the
session's drift measured from every configuration the search measured twice or more): the options of the best
candidate (``set``), ``gain`` (its confirmation runs over the defaults'), ``ci_low``/``ci_high`` (the 90%
interval), ``p_gain`` (one-sided, no gain), ``ceiling`` (the highest upper end of any candidate's interval),
``verdict`` (set / keep / undecided for the search alone) and ``table_verdict`` (the same with the gains' p-values
Holm-adjusted over the searches of one README table, ``TABLES``), ``runs`` (runs the search spent) and ``worse``
(the interval wholly below 1). ``first_reported`` holds the figures as the search printed them when collected
(Welch on the confirmation's trials as independent draws), for the before-and-after in data/README.md.

Run: .venv/bin/python benchmarks/tune_verified.py [--data-dir data] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from gluster_model.campaign.search import LEVEL, compare, judge_search
from gluster_model.plan.file import load_plan
from gluster_model.plan.search import searched
from gluster_model.stats.ratios import holm_adjusted
from gluster_model.store.identity import Purpose, SearchRound, legacy_step

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("write", "read", "randwrite", "smallfile", "listing")


def variants() -> list[str | None]:
    """None (each plan as written), then every variant the workloads' plans name, in the order first named: a
    variant added to a plan is read here with no list to keep."""
    names: dict[str, None] = {}
    for w in WORKLOADS:
        names.update(dict.fromkeys(load_plan(ROOT / "experiments" / "tune_search" / f"{w}.yaml").variants))
    return [None, *names]


# The README's tables of searches: the family each "set" is corrected over (Holm, the gains' one-sided p-values).
TABLES = {
    "lab, 1 Gbit/s": ("read", "listing", "smallfile", "write", "randwrite"),
    "round trips of 1-2 ms": ("randwrite_rtt", "read_rtt", "listing_rtt", "smallfile_rtt", "write_rtt",
                              "randwrite_stretched"),
    "layouts and readers": ("listing_wide", "read_shared", "smallfile_wide", "randwrite_vm", "read_replica3",
                            "read_replica3_disks", "randwrite_vm_looks"),
}


def one(workload: str, data_dir: Path, variant: str | None = None) -> dict[str, Any] | None:
    path = data_dir / f"tune_search_{workload}{'_' + variant if variant else ''}.csv"
    if not path.exists():
        return None
    plan = load_plan(ROOT / "experiments" / "tune_search" / f"{workload}.yaml", variant)
    metric = plan.design.metric or plan.workload.tests[0]
    options = searched(plan.factors)
    frame = pd.read_csv(path)
    frame = frame[frame[metric].notna()]
    campaign = frame["campaign"].astype(str)
    per_campaign = {str(c): {str(h): g[metric].astype(float).tolist() for h, g in part.groupby("config_hash")}
                    for c, part in frame.groupby(campaign)}
    features = {str(h): {n: _plain(g.iloc[0][n]) for n in options} for h, g in frame.groupby("config_hash")}
    # the tables were exported from stores of schema 6, which kept a search's rounds only in its campaigns' names
    steps = {c: legacy_step(c, Purpose.SEARCH) for c in set(campaign)}
    looks = sorted((c for c, st in steps.items() if st and st.round is SearchRound.CONFIRM),
                   key=lambda c: steps[c].look)  # type: ignore[union-attr]
    first = looks[0]
    confirmed = list(dict.fromkeys(frame[campaign == first]["config_hash"].astype(str)))
    runs = int(frame.groupby(["campaign", "config_hash"]).ngroups)
    result = judge_search(metric, options, per_campaign, features, looks, confirmed, runs)
    confirm = frame[campaign.isin(looks)]
    defaults_hash = next(h for h, f in features.items() if not _changes(f, result.defaults, options))
    defaults = confirm[confirm["config_hash"] == defaults_hash][metric].tolist()
    tuned = confirm[confirm["config_hash"] != defaults_hash][metric].tolist()
    g = result.gain
    out: dict[str, Any] = {"metric": metric, "runs": runs, "trials_defaults": len(defaults),
                           "defaults_mean": sum(defaults) / len(defaults), "set": result.changed,
                           "verdict": result.verdict, "ceiling": result.ceiling,
                           "drift_sd": result.drift.sd if result.drift else None}
    if not tuned:
        return {**out, "confirmed": False, "gain": 1.0, "ci_low": None, "ci_high": None, "p_gain": None,
                "worse": False, "trials_tuned": 0, "first_reported": None}
    assert g is not None
    w = compare(defaults, tuned)
    return {**out, "confirmed": result.confirmed, "gain": g.ratio, "ci_low": g.low, "ci_high": g.high,
            "p_gain": g.p_gain, "worse": g.high < 1, "trials_tuned": len(tuned), "tuned_mean": sum(tuned) / len(tuned),
            "first_reported": {"gain": w.ratio, "ci_low": w.low, "ci_high": w.high, "confirmed": w.low > 1}}


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _changes(f: dict[str, Any], defaults: dict[str, Any], options: Any) -> dict[str, Any]:
    return {n: v for n, v in f.items() if n in options and str(v).lower() != str(defaults[n]).lower()}


def with_tables(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each search's ``table_verdict`` and ``p_holm``: its gain's p-value Holm-adjusted over its README table."""
    alpha = (1 - LEVEL) / 2  # the interval's lower end clear of 1 is a one-sided test at this level
    for table, keys in TABLES.items():
        present = [k for k in keys if k in results]
        adjusted = holm_adjusted([results[k]["p_gain"] if results[k]["p_gain"] is not None else 1.0
                                  for k in present])
        for k, p in zip(present, adjusted):
            r = results[k]
            r["table"], r["p_holm"] = table, p
            r["table_verdict"] = ("set" if r["confirmed"] and p <= alpha else
                                  r["verdict"] if r["verdict"] != "set" else "undecided")
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = with_tables({w + (f"_{v}" if v else ""): r for v in variants() for w in WORKLOADS
                           if (r := one(w, args.data_dir, v)) is not None})
    if not results:
        sys.exit(f"no tune_search_<workload>.csv in {args.data_dir}")
    if args.json:
        print(json.dumps(results, indent=1, default=str))
        return
    print("tuning searches on the lab against Gluster's defaults: the confirmation's runs, the session's drift counted "
          "(90% intervals); p Holm-adjusted over each README table; first reported: Welch on trials, as collected")
    width = max(len("workload"), *map(len, results))  # the longest workload_variant key sets the column
    print(f"{'workload':<{width}} {'runs':>4} {'gain':>6} {'interval':>14} {'ceiling':>7} {'p_holm':>7}  "
          f"{'verdict':<9} {'first reported':<24} best")
    for w, r in results.items():
        interval = f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]" if r["ci_low"] is not None else "-"
        f = r["first_reported"]
        first = f"x{f['gain']:.2f} [{f['ci_low']:.2f}, {f['ci_high']:.2f}]" if f else "-"
        chosen = ", ".join(f"{k}={v}" for k, v in r["set"].items()) or "defaults"
        ceiling = f"x{r['ceiling']:.2f}" if r["ceiling"] is not None else "-"
        print(f"{w:<{width}} {r['runs']:>4} {r['gain']:>6.2f} {interval:>14} {ceiling:>7} {r['p_holm']:>7.3f}  "
              f"{r['table_verdict']:<9} {first:<24} {chosen}")


if __name__ == "__main__":
    main()

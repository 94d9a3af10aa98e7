"""Tuning searches against Gluster's defaults, recomputed from the shipped data: for each workload of
experiments/tune_search (its plan fixed before measuring), data/tune_search_<workload>.csv holds every trial of its
search (screening, more trials, confirmation), and data/tune_search_<workload>_<variant>.csv the same search with
one of the plan's variants (key ``<workload>_<variant>``; what each changes and why is in its plan, e.g. ``rtt``,
every lab node's received packets held 250 us). Per workload: the options of the best candidate (``confirmed``: its
gain clear of the defaults on the confirmation, so the search advised setting them), ``gain`` (mean of the
confirmation's trials of those options over the defaults' confirmation trials), ``ci_low``/``ci_high`` (the 90%
interval of that ratio: Welch on the log scale), ``runs`` (candidate runs the search spent, confirmation included)
and ``worse`` (the interval wholly below 1: the tuned set measured slower than the defaults).

Run: .venv/bin/python benchmarks/tune_verified.py [--data-dir data] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from gluster_model.campaign.search import compare
from gluster_model.plan.file import load_plan
from gluster_model.plan.search import searched

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("write", "read", "randwrite", "smallfile", "listing")


def variants() -> list[str | None]:
    """None (each plan as written), then every variant the workloads' plans name, in the order first named: a
    variant added to a plan is read here with no list to keep."""
    names: dict[str, None] = {}
    for w in WORKLOADS:
        names.update(dict.fromkeys(load_plan(ROOT / "experiments" / "tune_search" / f"{w}.yaml").variants))
    return [None, *names]


def one(workload: str, data_dir: Path, variant: str | None = None) -> dict[str, Any] | None:
    path = data_dir / f"tune_search_{workload}{'_' + variant if variant else ''}.csv"
    if not path.exists():
        return None
    plan = load_plan(ROOT / "experiments" / "tune_search" / f"{workload}.yaml", variant)
    metric = plan.design.metric or plan.workload.tests[0]
    options = searched(plan.factors)
    frame = pd.read_csv(path)
    campaign = frame["campaign"].astype(str)
    confirm = frame[campaign.str.contains(r"\.confirm2?$")]  # the confirmation's looks, pooled
    runs = int(frame.groupby(["campaign", "config_hash"]).ngroups)

    def is_default(row: pd.Series) -> bool:
        return all(str(row[n]).lower() == str(v[0]).lower() for n, v in options.items())

    kinds = confirm.assign(default=confirm.apply(is_default, axis=1))
    defaults = kinds[kinds["default"]][metric].dropna().tolist()
    tuned_rows = kinds[~kinds["default"]]
    out: dict[str, Any] = {"metric": metric, "runs": runs, "trials_defaults": len(defaults)}
    if tuned_rows.empty:
        return {**out, "set": {}, "confirmed": False, "gain": 1.0, "ci_low": None, "ci_high": None, "worse": False,
                "trials_tuned": 0, "defaults_mean": sum(defaults) / len(defaults) if defaults else None}
    first = tuned_rows.iloc[0]
    chosen = {n: first[n] for n, v in options.items() if str(first[n]).lower() != str(v[0]).lower()}
    tuned = tuned_rows[metric].dropna().tolist()
    c = compare(defaults, tuned)
    return {**out, "set": {k: (v.item() if hasattr(v, "item") else v) for k, v in chosen.items()},
            "confirmed": c.low > 1, "gain": c.ratio, "ci_low": c.low, "ci_high": c.high, "worse": c.high < 1, "trials_tuned": len(tuned),
            "defaults_mean": sum(defaults) / len(defaults), "tuned_mean": sum(tuned) / len(tuned)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=ROOT / "data")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    results = {w + (f"_{v}" if v else ""): r for v in variants() for w in WORKLOADS
               if (r := one(w, args.data_dir, v)) is not None}
    if not results:
        sys.exit(f"no tune_search_<workload>.csv in {args.data_dir}")
    if args.json:
        print(json.dumps(results, indent=1, default=str))
        return
    print("tuning searches on the lab, tuned against Gluster's defaults (confirmation trials; 90% intervals)")
    width = max(len("workload"), *map(len, results))  # the longest workload_variant key sets the column
    print(f"{'workload':<{width}} {'metric':<12} {'runs':>4} {'gain':>6} {'interval':>16}  worse  set")
    for w, r in results.items():
        interval = f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}]" if r["ci_low"] is not None else "-"
        chosen = (", ".join(f"{k}={v}" for k, v in r["set"].items()) + ("" if r["confirmed"] else
                  " (not confirmed: defaults kept)")) if r["set"] else "defaults kept"
        print(f"{w:<{width}} {r['metric']:<12} {r['runs']:>4} {r['gain']:>6.2f} {interval:>16}  "
              f"{'yes' if r['worse'] else 'no ':<5}  {chosen}")


if __name__ == "__main__":
    main()

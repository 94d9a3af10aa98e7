"""How often tune's and verify's change intervals hold the true change, simulated on the real design.

The design is data/gluster_config.csv's: its configurations, each with the trials it had. The truth is a model of
the real data, so every effect has the size the data show: by default a smooth one (the log-linear model with
pairwise interactions, fitted on them), with ``--truth gbm`` the boosted trees' shape (fitted on them as
`glmodel fit` fits them), since an interval that holds only one form's changes is no check; each simulated dataset draws every trial anew with the replicate trials' own noise
(log-normal, its sd pooled from the configurations measured twice). For each of ``--sims`` datasets the boosted
trees are fitted as `glmodel fit` fits them, and for each contrast (an option changed at a workload; by default
write-behind off at 8 KB and at 256 KB records, read-ahead on, io-cache off, each from a configuration the data
measured) two intervals are checked:

- ``tree_change``: the trees' interval of the expected change (what `glmodel tune` judges an option by: bootstrap
  refits, ``REFITS`` of them) against the true change;
- ``measured_change``: the interval of a measured change (what `glmodel verify` judges a benchmark by: the mean of
  ``--trials`` trials of each configuration; for trees, the refits' changes with two such means' noise added)
  against a simulated measurement of it.

Prints the share inside (%) per interval and per contrast; with ``--json`` as JSON. Run:
    .venv/bin/python benchmarks/tune_coverage.py [--metric write] [--sims 60] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
# (name, the option changed, its new value, the workload's record size)
CONTRASTS = (("write-behind off at 8 KB", "write_behind", False, 8 << 10),
             ("write-behind off at 256 KB", "write_behind", False, 256 << 10),
             ("read-ahead on at 64 KB", "read_ahead", True, 64 << 10),
             ("io-cache off at 64 KB", "io_cache", False, 64 << 10))


def replicate_sd(frame: pd.DataFrame, metric: str) -> float:
    """The pooled sd of log throughput between trials of one configuration (the data's pure error)."""
    from gluster_model.model.replicates import pure_error

    return float(np.sqrt(pure_error(np.log(frame[metric].astype(float)).to_numpy(), frame["config_hash"]).ms))


def main() -> None:
    from threadpoolctl import threadpool_limits

    from gluster_model.dataset import FAMILIES, read_table
    from gluster_model.model.features import schema_from_frame
    from gluster_model.model.learners import gbm, loglinear
    from gluster_model.predict.tune import REFITS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "gluster_config.csv")
    ap.add_argument("--metric", default="write")
    ap.add_argument("--sims", type=int, default=60)
    ap.add_argument("--trials", type=int, default=3, help="trials a measured configuration has (verify's)")
    ap.add_argument("--level", type=float, default=0.9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--truth", choices=("loglinear", "gbm"), default="loglinear",
                    help="the model of the real data the simulated data are drawn from")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    real = read_table(args.data)
    real = real[real[args.metric].notna()].reset_index(drop=True)
    schema = schema_from_frame(real, FAMILIES["gluster"], args.metric)
    learner = loglinear if args.truth == "loglinear" else gbm
    truth = learner(schema).fit(real, real[args.metric].to_numpy(float), False)
    sd = replicate_sd(real, args.metric)
    mu = truth.predict(real)
    # each contrast from a configuration the data measured (the first with that record size and the option at
    # its other level): a truth fitted on the data is only a truth where the data are, and a tree never
    # predicts beyond the measured range, so a contrast outside it would test the truth's extrapolation
    pairs = []
    for name, option, value, record in CONTRASTS:
        at = real[(real["record_size"] == record) & (real[option] == (not value))]
        if at.empty:
            continue
        a = at.iloc[0].to_dict()
        pairs.append((name, pd.DataFrame([a, {**a, option: value}])))
    rng = np.random.default_rng(args.seed)
    inside: dict[str, dict[str, list[bool]]] = {n: {"tree_change": [], "measured_change": []} for n, _ in pairs}
    started = time.monotonic()
    with threadpool_limits(limits=1):
        for _ in range(args.sims):
            sim = real.assign(**{args.metric: mu * np.exp(rng.normal(0, sd, len(real)))})
            model = gbm(schema, seed=0).fit(sim, sim[args.metric].to_numpy(float), True)
            for name, frame in pairs:
                true = truth.predict(frame)
                _, low, high = model.difference(frame, args.level, refits=REFITS)
                inside[name]["tree_change"].append(bool(low[1] <= true[1] - true[0] <= high[1]))
                measured = true * np.exp(rng.normal(0, sd, (args.trials, 2))).mean(axis=0)
                _, mlow, mhigh = model.difference(frame, args.level, observed=True, refits=REFITS,
                                                  trials=args.trials)
                if not np.isfinite(mlow[1]):  # as verify does for a model without one: the two predictions'
                    lo, hi = model.interval(frame, args.level, args.trials)  # intervals, end to end
                    mlow, mhigh = lo - hi[0], hi - lo[0]
                inside[name]["measured_change"].append(bool(mlow[1] <= measured[1] - measured[0] <= mhigh[1]))
    out: dict[str, Any] = {kind: float(np.mean([v for n in inside for v in inside[n][kind]]) * 100)
                           for kind in ("tree_change", "measured_change")}
    out["by_contrast"] = {n: {k: float(np.mean(v) * 100) for k, v in kinds.items()} for n, kinds in inside.items()}
    out.update(metric=args.metric, truth=args.truth, sims=args.sims, level=args.level, trials=args.trials, replicate_sd=sd,
               true_changes={n: float(np.diff(truth.predict(f))[0]) for n, f in pairs},
               seconds=round(time.monotonic() - started, 1))
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{args.data.name}, {args.metric}, truth {args.truth}: {args.sims} simulated datasets on the real design (trial noise sd "
          f"{sd:.3f} on the log scale), {args.level:.0%} intervals, {out['seconds']} s")
    print(f"{'contrast':<28} {'true change':>12} {'tree change':>12} {'measured change':>16}")
    for n, kinds in out["by_contrast"].items():
        print(f"{n:<28} {out['true_changes'][n]:>+10.1f}   {kinds['tree_change']:>10.0f}% "
              f"{kinds['measured_change']:>15.0f}%")
    print(f"{'all':<28} {'':>12} {out['tree_change']:>11.0f}% {out['measured_change']:>15.0f}%")


if __name__ == "__main__":
    main()

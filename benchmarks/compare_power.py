"""How often `glmodel compare` calls a change "slower", per effect size, on the noise the lab measured.

The noise comes from data/session_drift.csv (the same plan collected in 8 passes on one lab): the trials' SD
about their run's mean and the SD of a configuration's run mean from pass to pass, both on the log scale. Each
simulated comparison has 4 configurations on each side, measured in ``--runs`` runs of ``--trials`` trials; B
is slower than A by the effect size in every configuration. A comparison alarms when compare exits 1 (a row
slower beyond the margin, Holm over the rows). Effect 0 is the false-alarm share; the others are the power.
``--noise-scale`` multiplies both SDs (a real cluster is noisier than the lab).

    .venv/bin/python benchmarks/compare_power.py [--json] [--runs 1] [--trials 3] [--n 1000] [--interleaved]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gluster_model.compare import Side  # noqa: E402
from gluster_model.compare.verdicts import BETWEEN_RUN_SD, MARGIN, judge  # noqa: E402
from gluster_model.dataset import read_table  # noqa: E402


def measured_noise(path: Path) -> tuple[float, float]:
    """(trial SD, run SD) of log write and read throughput over the passes of one plan on one lab."""
    f = read_table(path)
    f = f[~f["warmup"].astype(bool) & ~f["outlier"].astype(bool)]
    within, between = [], []
    for m in ("write", "read"):
        g = f[f[m].notna()].assign(ly=lambda d, m=m: np.log(d[m].astype(float)))
        within += (g.groupby(["pass", "run_id"])["ly"].std().dropna() ** 2).tolist()
        runs = g.groupby(["pass", "campaign", "config_hash"], observed=True)["ly"].mean()
        between += (runs.groupby(level=[1, 2], observed=True).std().dropna() ** 2).tolist()
    return float(np.sqrt(np.mean(within))), float(np.sqrt(np.mean(between)))


def side(rng: np.random.Generator, scale: float, runs: int, trials: int, trial_sd: float, run_sd: float) -> Side:
    rows = []
    run_id = 0
    for k, mean in enumerate((80.0, 120.0, 300.0, 45.0)):
        for _ in range(runs):
            run_id += 1
            shift = rng.normal(0, run_sd)
            rows += [{"store": "s", "run_id": run_id, "config_hash": f"c{k}", "record_size": 4 << k,
                      "write": mean * scale * float(np.exp(shift + rng.normal(0, trial_sd)))} for _ in range(trials)]
    return Side("s", ["p@c"], "p", "c", pd.DataFrame(rows), 5)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "session_drift.csv")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--interleaved", action="store_true", help="judge as `compare --against sides` does: the "
                    "session's drift pooled over the rows (an interleaved plan's looks, --runs a side)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--noise-scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    trial_sd, run_sd = measured_noise(args.data)
    trial_sd, run_sd = trial_sd * args.noise_scale, run_sd * args.noise_scale
    between = max(BETWEEN_RUN_SD, run_sd) if args.runs == 1 and not args.interleaved else BETWEEN_RUN_SD
    rng = np.random.default_rng(args.seed)
    out = {"noise": {"trial_sd": trial_sd, "run_sd": run_sd, "between_sd_assumed": between}, "margin": MARGIN,
           "runs": args.runs, "interleaved": args.interleaved, "trials": args.trials, "configs": 4, "n": args.n, "effects": []}
    for effect in (0.0, 0.025, 0.05, 0.075, 0.10, 0.20):
        alarms = 0
        for _ in range(args.n):
            a = side(rng, 1.0, args.runs, args.trials, trial_sd, run_sd)
            b = side(rng, 1.0 - effect, args.runs, args.trials, trial_sd, run_sd)
            alarms += judge(a, b, between_sd=between, pooled_drift=args.interleaved).exit_status
        out["effects"].append({"slowdown": effect, "alarm_share": alarms / args.n})
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"noise: trial SD {trial_sd * 100:.2f}%, run SD {run_sd * 100:.2f}% (from {args.data.name}); "
          f"{args.runs} run(s) x {args.trials} trials per configuration, 4 configurations, margin {MARGIN:.0%}"
          + ("; interleaved: the drift pooled over the rows" if args.interleaved else ""))
    for e in out["effects"]:
        kind = "false alarms" if e["slowdown"] == 0 else "detected"
        print(f"  slower by {e['slowdown'] * 100:4.1f}%: {kind} {e['alarm_share'] * 100:5.1f}% of {args.n}")


if __name__ == "__main__":
    main()

"""Fit + importance at scale: 100 000 synthetic trials with 12 features, wall time and peak memory.

Runs the study's procedure (MLR: fit, adjusted R², 75/25 split, repeated grouped K-fold, Sobol' importance with
bootstrap intervals) and then the same with every challenger. Target: under 10 s and 1 GB for the study's
procedure on this machine. Peak memory is the process's maximum resident set size (includes the imports).

Run: .venv/bin/python benchmarks/fit_scale.py [--rows 100000] [--challengers]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import pandas as pd


def synthetic(rows: int, seed: int = 0) -> pd.DataFrame:
    """Ten trials per configuration; features of every kind the store produces."""
    rng = np.random.default_rng(seed)
    configs = rows // 10
    c = {
        "network_gbps": rng.choice([1.0, 10.0, 40.0], configs),
        "disk_write_mbps": rng.choice([150.0, 500.0, 2000.0], configs),
        "servers": rng.integers(1, 9, configs).astype(float),
        "clients": rng.integers(1, 9, configs).astype(float),
        "replica": rng.choice([1.0, 2.0, 3.0], configs),
        "file_size": rng.choice([2.0**k for k in range(26, 35)], configs),
        "record_size": rng.choice([2.0**k for k in range(12, 24)], configs),
        "cache_size": rng.choice([2.0**k for k in range(21, 31)], configs),
        "write_behind": rng.integers(0, 2, configs).astype(bool),
        "io_cache": rng.integers(0, 2, configs).astype(bool),
        "shard": rng.integers(0, 2, configs).astype(bool),
        "base_filesystem": rng.choice(["ext4", "xfs"], configs),
    }
    frame = pd.DataFrame({k: np.repeat(v, 10) for k, v in c.items()})
    frame["config_hash"] = np.repeat(np.arange(configs), 10).astype(str)
    net = frame["network_gbps"] * 125
    bottleneck = np.minimum(net * frame["clients"] / frame["replica"],
                            frame["disk_write_mbps"] * frame["servers"] / frame["replica"])
    frame["write"] = (bottleneck * (1 - np.exp(-frame["record_size"] / 2**17)) * (1 + 0.2 * frame["write_behind"])
                      * rng.lognormal(0, 0.08, len(frame)))
    return frame


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--challengers", action="store_true", help="Also time every challenger model.")
    args = ap.parse_args()
    from gluster_model.model.fit import fit_metric
    from gluster_model.model.registry import MODELS

    frame = synthetic(args.rows)
    runs = [("study's MLR + importance", ("mlr",))] + ([("all models", MODELS)] if args.challengers else [])
    for label, models in runs:
        t0 = time.perf_counter()
        fit = fit_metric(frame, "write", "unified", models=models, bootstrap=30, importance_n=1024)
        wall = time.perf_counter() - t0
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{label}: {len(frame):,} rows, {len(fit.schema.features)} features, {fit.n_configs:,} configurations")
        print(f"  wall {wall:.1f} s, peak RSS {peak:.0f} MiB (target < 10 s, < 1024 MiB)")
        for s in fit.scores:
            cv = f"{s.cv.r2_mean:.3f}" if s.cv else "-"
            print(f"  {s.model:10s} adj R² {s.adj_r2 if s.adj_r2 is not None else float('nan'):.3f}  "
                  f"75/25 R² {s.holdout.r2:.3f}  CV R² {cv}  PI cover {s.holdout.coverage:.0%}")


if __name__ == "__main__":
    main()

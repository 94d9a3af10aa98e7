"""Wall time of `glmodel predict` from a saved linear model, as a user runs it (a fresh process each time).

Fits a model on synthetic trials once (hardware family, like the study's purchase model), then times
`glmodel predict --scenarios experiments/whatif/study_decision.yaml` with the MLR, and with each metric's
selected model for comparison. Target: under 1 s wall for a linear model on this machine.

Run: .venv/bin/python benchmarks/predict_time.py [--runs 7]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def synthetic(seed: int = 0) -> pd.DataFrame:
    """A hardware campaign: network x servers x replica x disk, three trials per configuration."""
    rng = np.random.default_rng(seed)
    rows = []
    for net, servers, replica, disk in itertools.product([1.0, 10.0, 40.0], [2, 4, 8], [1, 2, 3], [200.0, 500.0]):
        for t in range(3):
            write = min(net * 125 * servers / replica, disk * servers / replica) * rng.lognormal(0, 0.08)
            read = min(net * 125 * servers, disk * 1.1 * servers) * rng.lognormal(0, 0.08)
            rows.append({"network_gbps": net, "servers": servers, "clients": servers, "replica": replica,
                         "disk_read_mbps": disk * 1.1, "disk_write_mbps": disk, "base_filesystem": "xfs",
                         "file_size": 1 << 30, "threads": 4, "client_ram_gb": 64.0, "shard": False,
                         "config_hash": f"{net}-{servers}-{replica}-{disk}", "write": write, "read": read})
    return pd.DataFrame(rows)


def timed(argv: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    from gluster_model.model import artifact
    from gluster_model.model.fit import fit_frame

    fits, _ = fit_frame(synthetic(), "hardware", ["write", "read"], bootstrap=0, importance_n=128, cv_repeats=1)
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "model.json"
        artifact.save(artifact.build(fits, {"store": "synthetic"}), model)
        glmodel = str(Path(sys.executable).with_name("glmodel"))
        base = [glmodel, "predict", "--model", str(model), "--scenarios",
                str(ROOT / "experiments/whatif/study_decision.yaml")]
        print(f"model file {model.stat().st_size / 1024:.0f} KiB; selected: "
              + ", ".join(f"{f.metric} {f.selected}" for f in fits))
        for label, extra in (("linear (--use mlr)", ["--use", "mlr"]), ("selected models", [])):
            walls = timed(base + extra, args.runs)
            print(f"glmodel predict, {label}: median {statistics.median(walls):.2f} s, max {max(walls):.2f} s "
                  f"over {args.runs} runs (target < 1 s for a linear model)")


if __name__ == "__main__":
    main()

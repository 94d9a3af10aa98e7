"""Wall time of `glmodel tune` on a model of the shipped data/gluster_config.csv (fitted once, --family gluster),
on an idle machine, with one CPU-bound process running beside it, and confined to one core (`taskset -c 0`:
every bootstrap refit in the one process, as before they were spread over worker processes).

Run: .venv/bin/python benchmarks/tune_time.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str, prefix: tuple[str, ...] = ()) -> float:
    t0 = time.monotonic()
    subprocess.run([*prefix, sys.executable, "-m", "gluster_model.cli", *args], check=True,
                   stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "gluster.json"
        fit = cli("fit", "--data", "data/gluster_config.csv", "--family", "gluster", "--out", str(model))
        print(f"fit (once): {fit:.1f} s")
        for label in ("idle", "one CPU-bound process beside", "one core (taskset -c 0)"):
            hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if "beside" in label else None
            prefix = ("taskset", "-c", "0") if "taskset" in label and shutil.which("taskset") else ()
            if "taskset" in label and not prefix:
                continue
            try:
                walls = [cli("tune", "--model", str(model), prefix=prefix) for _ in range(args.repeat)]
            finally:
                if hog is not None:
                    hog.kill()
                    hog.wait()
            print(f"tune, {label}: wall median {statistics.median(walls):.1f} s (min {min(walls):.1f}, max "
                  f"{max(walls):.1f}); {os.cpu_count()} cores")


if __name__ == "__main__":
    main()

"""Wall time of `glmodel tune` on a model of the shipped data/gluster_config.csv (fitted once, --family gluster),
on an idle machine and with one CPU-bound process running beside it.

Run: .venv/bin/python benchmarks/tune_time.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> float:
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "gluster_model.cli", *args], check=True, stdout=subprocess.DEVNULL,
                   cwd=ROOT)
    return time.monotonic() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "gluster.json"
        fit = cli("fit", "--data", "data/gluster_config.csv", "--family", "gluster", "--out", str(model))
        print(f"fit (once): {fit:.1f} s")
        for label in ("idle", "one CPU-bound process beside"):
            hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if label != "idle" else None
            try:
                walls = [cli("tune", "--model", str(model)) for _ in range(args.repeat)]
            finally:
                if hog is not None:
                    hog.kill()
                    hog.wait()
            print(f"tune, {label}: wall median {statistics.median(walls):.1f} s (min {min(walls):.1f}, max "
                  f"{max(walls):.1f}); {os.cpu_count()} cores")


if __name__ == "__main__":
    main()

"""Wall and CPU time of `glmodel fit` on the shipped emulated-hardware dataset, on an idle machine and with one
CPU-bound process running beside it (the condition in which unbounded thread pools used to spin).

Run: .venv/bin/python benchmarks/fit_emulated.py [--repeat 3] [--data data/hardware_emulated.csv]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one_fit(data: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one `glmodel fit` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "gluster_model.cli", "fit", "--data", str(data), "--family", "hardware",
                    "--out", str(out), "--json"], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "hardware_emulated.csv")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "model.json"
        for label in ("idle", "one CPU-bound process beside"):
            hog = None
            if label != "idle":  # a busy loop on one core, as another job on the machine would be
                hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
            try:
                runs = [one_fit(args.data, out) for _ in range(args.repeat)]
            finally:
                if hog is not None:
                    hog.kill()
                    hog.wait()
            walls = [w for w, _ in runs]
            print(f"{label}: wall median {statistics.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f}); "
                  f"CPU median {statistics.median(c for _, c in runs):.2f} s; {os.cpu_count()} cores")


if __name__ == "__main__":
    main()

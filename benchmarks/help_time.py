"""Wall time of `glmodel --help` (warm: the first run is discarded). Target: under 0.3 s.

Run: .venv/bin/python benchmarks/help_time.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    exe = shutil.which("glmodel", path=str(Path(sys.executable).parent)) or "glmodel"
    subprocess.run([exe, "--help"], capture_output=True, check=True)  # warm the page cache
    times = []
    for _ in range(args.runs):
        started = time.perf_counter()
        subprocess.run([exe, "--help"], capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    times.sort()
    print(f"glmodel --help over {args.runs} warm runs: median {statistics.median(times) * 1000:.0f} ms, "
          f"p90 {times[int(0.9 * (len(times) - 1))] * 1000:.0f} ms, min {times[0] * 1000:.0f} ms (target < 300 ms)")


if __name__ == "__main__":
    main()

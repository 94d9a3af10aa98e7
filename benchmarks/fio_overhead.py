"""A trial's fixed cost with fio as the engine, beside iozone's: trials that move almost nothing (write and read
of a 64 KB file per thread, 3 threads on 3 clients of a replica-3 volume), so a trial's engine time is its fixed
cost: fio's servers started, its client's run, its servers ended; iozone's children started over SSH, its
tests, its ending. Also the small-file workload (create, stat, list, read, delete of 3 x 200 files of 16 KB)
for scale. Target: fio's fixed cost <= 3 s a trial.

Run: .venv/bin/python benchmarks/fio_overhead.py [--cluster glmodel-lab/lab.yaml] [--trials 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from gluster_model.campaign.collector import Collector
from gluster_model.config.cluster import load_cluster
from gluster_model.plan.file import PlanFile, expand
from gluster_model.remote.executor import SSHExecutor
from gluster_model.store import open_store


def plan(name: str, engine: str, tests: list[str], trials: int, **factors: Any) -> PlanFile:
    return PlanFile.model_validate({
        "name": name, "factors": {"layout": "replicate", "replica": 3, "threads": 3, "engine": engine, **factors},
        "workload": {"tests": tests},
        "protocol": {"warmups": 0, "repetitions": trials, "outlier_rule": "none", "remount": "never"},
        "baselines": {"network": False, "disk": False}})


CASES = {
    "fio, write+read of 64 KB": ("fio", ["write", "read"], {"file_size": "64KB", "record_size": "64KB"}),
    "iozone, write+read of 64 KB": ("iozone", ["write", "read"], {"file_size": "64KB", "record_size": "64KB"}),
    "fio, small files (3 x 200 of 16 KB)": ("fio", ["file_create", "file_stat", "file_list", "file_read",
                                                    "file_delete"],
                                            {"file_size": "16KB", "record_size": "16KB", "files": 200}),
}


def measure(cluster_file: Path, trials: int, store_dir: Path) -> dict[str, dict[str, float]]:
    spec = load_cluster(cluster_file)
    out: dict[str, dict[str, float]] = {}
    with open_store(store_dir / "bench.db") as st, SSHExecutor(spec) as ex:
        for i, (label, (engine, tests, factors)) in enumerate(CASES.items()):
            p = plan(f"overhead{i}", engine, tests, trials, **factors)
            summary = Collector(ex, p, expand(p, spec), st).run()
            if summary.failed:
                raise SystemExit(f"{label}: {summary.failures}")
            camp = st.campaign(f"overhead{i}@{spec.name}")
            assert camp is not None
            secs = [float(t.engine_seconds) for r in st.runs(camp.id) for t in st.trials(r.id)
                    if t.status == "ok" and not t.outlier]
            out[label] = {"median_s": statistics.median(secs), "min_s": min(secs), "max_s": max(secs),
                          "trials": len(secs)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", type=Path)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="glmodel-bench-") as d:
        if args.cluster:
            result = measure(args.cluster, args.trials, Path(d))
        else:
            from gluster_model.lab import lab_down, lab_up

            state = lab_up(Path(d) / "lab", nodes=3)
            try:
                result = measure(state.cluster_file, args.trials, Path(d))
            finally:
                lab_down(Path(d) / "lab")
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print("engine seconds per trial (median [min, max] over the trials kept); target: fio's fixed cost <= 3 s")
    for label, r in result.items():
        print(f"  {label:<38} {r['median_s']:6.2f} s  [{r['min_s']:.2f}, {r['max_s']:.2f}]  ({r['trials']:.0f} "
              "trials)")


if __name__ == "__main__":
    main()

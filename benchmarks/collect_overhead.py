"""Driver overhead of `glmodel collect`: campaign wall time over the benchmark engines' own run time.

Runs a small campaign on the lab (a temporary 3-node lab unless --cluster is given) and splits the wall time
into: host facts + network/disk baselines (which run while the first volume is built, so that time counts
there), volume create/mount/teardown, per-trial driver steps (cache drop, run directory, store writes) and the
engines themselves. Target: wall / engine <= 1.05 for the whole smoke campaign (--plan experiments/plans/smoke.yaml).

Run: .venv/bin/python benchmarks/collect_overhead.py [--cluster glmodel-lab/lab.yaml] [--plan P [--variant V]]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from gluster_model.campaign.collector import Collector
from gluster_model.config.cluster import load_cluster
from gluster_model.plan.file import PlanFile, expand, load_plan
from gluster_model.remote.executor import SSHExecutor
from gluster_model.store import open_store

DEFAULT_PLAN = {
    "name": "overhead",
    "factors": {"layout": ["distribute", "replicate"], "replica": 3, "record_size": ["64KB"], "file_size": "16MB",
                "threads": 3},
    "protocol": {"warmups": 0, "repetitions": 3, "outlier_rule": "none"},
    "baselines": {"iperf": {"seconds": 2, "omit": 0}, "fio": {"size": "16MB", "runtime": 2}},
}


def measure(cluster_file: Path, plan: PlanFile, store_dir: Path) -> None:
    spec = load_cluster(cluster_file)
    expanded = expand(plan, spec)
    with open_store(store_dir / "bench.db") as st, SSHExecutor(spec) as ex:
        started = time.monotonic()
        summary = Collector(ex, plan, expanded, st).run()
        wall = time.monotonic() - started
        trials = [t for r in st.runs() for t in st.trials(r.id)]
    trial_wall = sum(t.seconds for t in trials)
    engine = sum(t.engine_seconds for t in trials)
    runs_wall = wall - summary.baseline_seconds
    print(f"{len(expanded.runs)} run(s) ({summary.done} done, {summary.failed} failed), {len(trials)} trial(s), "
          f"{len(expanded.volumes)} volume(s)")
    for failure in summary.failures:
        print(f"  FAILED {failure}")
    print(f"campaign wall               {wall:8.1f} s")
    print(f"  facts + baselines         {summary.baseline_seconds:8.1f} s  (with the first volume's build; once per "
          "hardware, reused after)")
    print(f"  volumes, mounts, store    {runs_wall - trial_wall:8.1f} s  (create/mount/teardown, run bookkeeping)")
    print(f"  trial driver steps        {trial_wall - engine:8.1f} s  (cache drop on every host, mkdir/rm, store)")
    print(f"  engines (iozone)          {engine:8.1f} s")
    print(f"wall / engine, whole campaign        {wall / engine:6.3f}   (target <= 1.05 for the smoke plan)")
    print(f"wall / engine, without baselines     {runs_wall / engine:6.3f}")
    print(f"trial wall / engine (per-trial cost) {trial_wall / engine:6.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", type=Path)
    parser.add_argument("--plan", type=Path)
    parser.add_argument("--variant", help="a scale the plan defines (e.g. quick)")
    args = parser.parse_args()
    plan = load_plan(args.plan, args.variant) if args.plan else PlanFile.model_validate(DEFAULT_PLAN)
    with tempfile.TemporaryDirectory(prefix="glmodel-bench-") as d:
        if args.cluster:
            measure(args.cluster, plan, Path(d))
            return
        from gluster_model.lab import lab_down, lab_up

        state = lab_up(Path(d) / "lab", nodes=3)
        try:
            measure(state.cluster_file, plan, Path(d))
        finally:
            lab_down(Path(d) / "lab")


if __name__ == "__main__":
    main()

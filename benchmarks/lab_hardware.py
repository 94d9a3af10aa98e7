"""Do the lab's emulated disks and links bound throughput where they should? A 2 x 2 of disk speed and link rate,
measured with iozone O_DIRECT writes through a distribute volume, one client and one brick (node 1), each
setting a campaign with its own measured baselines.

Expected: at 40 MB/s disks the write follows the disk (about 40 MB/s whatever the link); at 400 MB/s disks it
follows the link (about 118 MB/s at 1 gbit, about twice that at 2 gbit, unless the two shared cores give out
first). Also prints each setting's fio and iperf3 baselines.

Run: .venv/bin/python benchmarks/lab_hardware.py [--cluster glmodel-lab/lab.yaml]
     (without --cluster it brings up a 3-node lab in a temporary directory and removes it afterwards)
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from gluster_model.campaign.plan_run import run_plan
from gluster_model.config.cluster import load_cluster
from gluster_model.dataset import trial_frame
from gluster_model.plan.file import PlanFile, expand
from gluster_model.remote.executor import SSHExecutor
from gluster_model.store import open_store

PLAN = {
    "name": "bottleneck",
    "factors": {"link": ["1gbit", "2gbit"], "disk": ["40MB/s", "400MB/s"], "layout": "distribute", "servers": 1,
                "clients": 1, "threads": 1, "file_size": "256MB", "record_size": "1MB", "sync": "odirect"},
    "design": {"type": "grid"},
    "workload": {"tests": ["write"]},
    "protocol": {"warmups": 0, "repetitions": 2, "outlier_rule": "none"},
    "baselines": {"iperf": {"seconds": 3, "omit": 1}, "fio": {"size": "64MB", "runtime": 3, "steady": True,
                                                                 "tests": ["seq_write", "seq_read"]}},
}


def measure(cluster_file: Path, store_dir: Path) -> None:
    spec = load_cluster(cluster_file)
    plan = PlanFile.model_validate(PLAN)
    started = time.monotonic()
    with open_store(store_dir / "bench.db") as st, SSHExecutor(spec) as ex:
        run_plan(ex, plan, expand(plan, spec), st, base="bottleneck@lab")
        frame = trial_frame(st)
    per = frame.groupby("campaign", observed=True).agg(
        write=("write", "median"), network_gbps=("network_gbps", "first"), disk_write=("disk_write_mbps", "first"))
    print(f"{'setting':32s}{'iozone write MB/s':>19s}{'fio disk write MB/s':>21s}{'iperf3 Gbit/s':>15s}")
    for name, row in per.iterrows():
        print(f"{str(name).split(':', 1)[1]:32s}{row['write']:19.1f}{row['disk_write']:21.1f}{row['network_gbps']:15.2f}")
    print(f"({time.monotonic() - started:.0f} s in all)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="glmodel-bench-") as d:
        if args.cluster:
            measure(args.cluster, Path(d))
            return
        from gluster_model.lab import lab_down, lab_up

        state = lab_up(Path(d) / "lab", nodes=3)
        try:
            measure(state.cluster_file, Path(d))
        finally:
            lab_down(Path(d) / "lab")


if __name__ == "__main__":
    main()

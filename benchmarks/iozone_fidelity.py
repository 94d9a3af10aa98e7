"""Does the driver distort what it measures? The same distributed iozone workload run by hand and through
glmodel, alternately, on the lab; prints glmodel/hand per metric (target >= 0.97).

"By hand" is what an administrator would type: a hand-written -+m client file, RSH set to a two-line ssh
script, iozone started from a shell. Both arms drop caches on every host first and use the same volume and
mount points; the order alternates (hand, glmodel, glmodel, hand, ...) so drift cancels out. The median
of each arm is compared.

With --direct both arms read and write with O_DIRECT (iozone -I): the reads then cross the network instead of
coming from the clients' page cache, as in the campaigns the models learn from.

Run: .venv/bin/python benchmarks/iozone_fidelity.py [--cluster glmodel-lab/lab.yaml] [--pairs 8] [--direct]
     (without --cluster it brings up a 3-node lab in a temporary directory and removes it afterwards)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from gluster_model.bench.iozone import master_address, run_iozone

from gluster_model.bench.workload import Workload
from gluster_model.bench.iozone_parse import parse_throughput
from gluster_model.config.cluster import ClusterSpec, load_cluster
from gluster_model.gluster.apply import apply_volume, drop_caches, mount, teardown_volume
from gluster_model.gluster.volume import VolumeConfig
from gluster_model.remote.executor import SSHExecutor

VOLUME = VolumeConfig(name="fidelity", layout="replicate", replica=3)


def hand_run(spec: ClusterSpec, ex: SSHExecutor, w: Workload, points: dict[str, str],
             tmp: Path) -> dict[str, float]:
    clients = list(spec.clients)
    lines = []
    for t in range(w.threads):
        h = clients[t % len(clients)]
        d = f"{points[h.address]}/by-hand/{h.name}"
        ex.run(h.address, ["mkdir", "-p", d])
        lines.append(f"{h.address} {d} /usr/bin/iozone")
    (tmp / "clients").write_text("\n".join(lines) + "\n")
    ssh = clients[0].ssh
    rsh = tmp / "rsh"
    rsh.write_text(f"#!/bin/sh\nexec ssh -p {ssh.port} -i {ssh.identity_file} -o UserKnownHostsFile={ssh.known_hosts}"
                   f" -o BatchMode=yes \"$@\"\n")
    rsh.chmod(0o700)
    cmd = (f"iozone -+m {tmp / 'clients'} -+h {master_address(clients[0])} -t {w.threads} -s {w.file_size}"
           f" -r {w.record_size} -i 0 -i 1 -i 2 -e -c -+n" + (" -I" if w.sync == "odirect" else ""))
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True, check=True, cwd=tmp,
                         env={**os.environ, "RSH": str(rsh)}).stdout
    ex.run(clients[0].address, ["rm", "-rf", f"{points[clients[0].address]}/by-hand"])
    return {k: m.children_kbps for k, m in parse_throughput(out, w.expected_metrics()).metrics.items()}


def glmodel_run(spec: ClusterSpec, ex: SSHExecutor, w: Workload, points: dict[str, str]) -> dict[str, float]:
    run = run_iozone(ex, VOLUME.name, w, points)
    if run.output is None:
        raise SystemExit(f"glmodel iozone run failed: {run.error}")
    return {k: m.children_kbps for k, m in run.output.metrics.items()}


def measure(cluster: Path, pairs: int, file_size: str, direct: bool) -> None:
    spec = load_cluster(cluster)
    w = Workload(threads=len(spec.clients), file_size=file_size, record_size="64KB",
                       sync="odirect" if direct else "none")
    arms: dict[str, list[dict[str, float]]] = {"hand": [], "glmodel": []}
    started = time.monotonic()
    with SSHExecutor(spec) as ex, tempfile.TemporaryDirectory() as tmpdir:
        apply_volume(ex, VOLUME)
        try:
            points = mount(ex, VOLUME.name)
            order = [a for i in range(pairs) for a in (("hand", "glmodel") if i % 2 == 0 else ("glmodel", "hand"))]
            for i, arm in enumerate(order, 1):
                drop_caches(ex)
                result = hand_run(spec, ex, w, points, Path(tmpdir)) if arm == "hand" else \
                    glmodel_run(spec, ex, w, points)
                arms[arm].append(result)
                print(f"  run {i}/{len(order)} {arm:8s} " + "  ".join(f"{k} {v / 1024:8.1f}" for k, v in result.items())
                      + " MB/s", flush=True)
        finally:
            teardown_volume(ex, VOLUME.name)
    print(f"\n{w.threads} threads x {w.file_size}, 64 KiB records, replica 3, {'O_DIRECT' if direct else 'cached'}, "
          f"{pairs} run(s) per arm, "
          f"{time.monotonic() - started:.0f}s in all")
    from scipy.stats import mannwhitneyu

    print(f"{'metric':14s}{'hand MB/s':>12s}{'glmodel MB/s':>14s}{'ratio':>8s}{'hand range':>18s}"
          f"{'glmodel range':>18s}{'p':>7s}  (target >= 0.97; p: Mann-Whitney, arms differ?)")
    for metric in arms["hand"][0]:
        h = [r[metric] / 1024 for r in arms["hand"]]
        g = [r[metric] / 1024 for r in arms["glmodel"]]
        hand, glm = statistics.median(h), statistics.median(g)
        p = float(mannwhitneyu(h, g).pvalue)
        print(f"{metric:14s}{hand:12.1f}{glm:14.1f}{glm / hand:8.3f}{f'{min(h):.0f}-{max(h):.0f}':>18s}"
              f"{f'{min(g):.0f}-{max(g):.0f}':>18s}{p:7.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", type=Path)
    parser.add_argument("--pairs", type=int, default=8, help="runs per arm")
    parser.add_argument("--direct", action="store_true", help="O_DIRECT reads and writes (iozone -I)")
    parser.add_argument("--file-size", default="64MB")
    args = parser.parse_args()
    if args.cluster:
        measure(args.cluster, args.pairs, args.file_size, args.direct)
        return
    from gluster_model.lab import lab_down, lab_up

    with tempfile.TemporaryDirectory(prefix="glmodel-bench-") as d:
        state = lab_up(Path(d), nodes=3)
        try:
            measure(state.cluster_file, args.pairs, args.file_size, args.direct)
        finally:
            lab_down(Path(d))


if __name__ == "__main__":
    main()

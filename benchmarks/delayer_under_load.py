"""How faithfully the emulated latency holds under a small-file load: the round trip at rest and under load, and
how late the delayer lets packets through.

The latency knob (``hardware/knobs/latency.py``) holds every packet a host receives in a user-space delayer
(``hardware/delayer.py``). A model reads the round trip each campaign measures at rest (``bench/rtt.py``); if the
delayer fell behind under load, a short delay would make a longer round trip than the one the model was given,
and more so the more operations a second (the misses of round_trip_stat's shorter round trips, data/README.md).
This script brings up a 4-node lab (2 servers, 2 clients), addresses it as a plain cluster (emulation, as a
user's), and collects one campaign per delay: 8 KiB creates, then stats past the clients' caches, 4 threads over
2 clients, replica 2. Through each campaign a client times a TCP connect to a server's glusterd every 0.2 s
(the median of 5), and every delayer's ``--status`` file is read each second. It prints, per delay: the round
trip the campaign measured at rest, the connects' median and 90th percentile through the campaign, the
delayers' packets, how many carried the kernel's receive stamp, and how late beyond the delay they went (mean,
largest), and the creates and stats a second.

Target (issue 62): the round trip through the load within 10% of the one at rest at every delay, and the
delayers' mean lateness under 100 us (measured 2026-12-01 after 1179e73: see the closing note).

Run: .venv/bin/python benchmarks/delayer_under_load.py [--delays 250us,1ms]
     (brings up a lab in a temporary directory and removes it afterwards; needs root, as the lab does)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
GLMODEL = str(Path(sys.executable).parent / "glmodel")
PROBE = """
import socket, sys, time
while True:
    times = []
    for _ in range(5):
        s = socket.socket(); t = time.perf_counter(); s.connect((sys.argv[1], 24007))
        times.append(time.perf_counter() - t); s.close()
    times.sort()
    print(f"{time.time():.3f} {times[2] * 1000:.4f}", flush=True)
    time.sleep(0.2)
"""


def plan(delays: list[str]) -> dict[str, Any]:
    """One campaign per delay, link and CPU as the stages proofs' todays (50% of each host's)."""
    return {"name": "delayer_under_load", "description": "the emulated round trip under a small-file load",
            "factors": {"link": ["50%"], "cpu": ["50%"], "latency": delays, "layout": "replicate", "replica": 2,
                        "servers": 2, "clients": 2, "engine": "fio", "file_size": "8KB", "record_size": "8KB",
                        "files": 100, "threads": 4, "sync": "none"},
            "design": {"type": "grid", "hardware": {"type": "list", "settings": [
                {"link": "50%", "cpu": "50%", "latency": d} for d in delays]}},
            "workload": {"tests": ["file_create", "file_stat"]},
            "protocol": {"warmups": 0, "repetitions": 2, "outlier_rule": "none", "remount": "never"},
            "baselines": {"iperf": {"seconds": 2, "omit": 0}, "disk": False}}


def watch_status(records: Path, seen: dict[tuple[str, int], dict[str, Any]], during: dict[int, list[float]],
                 stop: threading.Event) -> None:
    """Keep each delayer's last status per (file, delay) (a setting's restore removes the file), and when each
    delay's delayers were seen running (their campaign's time)."""
    while not stop.is_set():
        for f in records.glob("*.delayer.status"):
            try:
                d = json.loads(f.read_text())
            except (OSError, ValueError):
                continue
            us = int(d["delay_us"])
            seen[(f.name, us)] = d
            now = time.time()
            span = during.setdefault(us, [now, now])
            span[1] = now
        stop.wait(1.0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delays", default="250us,1ms", help="the delays, comma-separated (each a campaign)")
    args = ap.parse_args()
    delays = [d.strip() for d in args.delays.split(",") if d.strip()]
    from gluster_model.dataset import trial_frame
    from gluster_model.hardware.knobs.latency import parse_delay
    from gluster_model.lab import lab_down, lab_up
    from gluster_model.lab.clusterfile import write_plain_cluster_file
    from gluster_model.lab.netns import in_netns
    from gluster_model.store import open_store

    with tempfile.TemporaryDirectory(prefix="glmodel-delayer-") as tmp:
        d = Path(tmp)
        state = lab_up(d / "lab", nodes=4, client_nodes=2, brick_size=1 << 30)
        try:
            records = d / "records"
            cluster = write_plain_cluster_file(d / "lab", d / "plain.yaml", records, name="lab-plain",
                                               network={"name": "2G", "gbps": 2})
            (d / "plan.yaml").write_text(yaml.safe_dump(plan(delays)))
            server, client = state.nodes[0], state.nodes[-1]
            probe = subprocess.Popen(in_netns(client.netns, ["python3", "-c", PROBE, server.address]),
                                     stdout=subprocess.PIPE, text=True)
            seen: dict[tuple[str, int], dict[str, Any]] = {}
            during: dict[int, list[float]] = {}
            stop = threading.Event()
            watcher = threading.Thread(target=watch_status, args=(records, seen, during, stop), daemon=True)
            watcher.start()
            try:
                done = subprocess.run([GLMODEL, "collect", "--yes", "--cluster", str(cluster), "--plan",
                                       str(d / "plan.yaml"), "--store", str(d / "s.db")],
                                      capture_output=True, text=True, timeout=1800)
            finally:
                stop.set()
                probe.terminate()
                samples = [tuple(map(float, ln.split())) for ln in (probe.communicate()[0] or "").splitlines()
                           if len(ln.split()) == 2]
                watcher.join()
            if done.returncode != 0:
                print(done.stdout[-2000:], done.stderr[-2000:], file=sys.stderr)
                return 1
            with open_store(str(d / "s.db"), create=False) as st:
                frame = trial_frame(st)
        finally:
            lab_down(d / "lab")
    print("delay   rest ms  load median ms (p90)  over rest  packets  stamped  late us mean (max)  creates/s  stats/s")
    for text in delays:
        us = parse_delay(text) or 0
        rows = frame[frame["setting_latency"].map(lambda v: parse_delay(str(v)) == us)]
        rest = float(rows["network_rtt_ms"].median())
        # the connects while this delay's delayers ran (their status files seen: the campaign's time)
        start, end = during.get(us, [0.0, -1.0])
        near = sorted(ms for t, ms in samples if start <= t <= end)
        status = [v for (_, u), v in seen.items() if u == us]
        packets = sum(int(s["packets"]) for s in status)
        stamped = sum(int(s["stamped"]) for s in status)
        late = (sum(float(s["late_us_mean"]) * int(s["packets"]) for s in status) / packets) if packets else float("nan")
        worst = max((float(s["late_us_max"]) for s in status), default=float("nan"))
        med = statistics.median(near) if near else float("nan")
        p90 = near[int(0.9 * (len(near) - 1))] if near else float("nan")
        print(f"{text:7} {rest:7.3f}  {med:9.3f} ({p90:.3f})  {med / rest - 1:+9.1%}  {packets:7d}  {stamped:7d}  "
              f"{late:10.0f} ({worst:.0f})  {rows['file_create'].mean():9.0f}  {rows['file_stat'].mean():7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a hardware setting costs before its first trial, phase by phase, and whether measuring the hosts'
disks at once changes their figures.

A plan over hardware settings (the bottleneck plan, `glmodel verify`) makes each setting a campaign of its own:
the setting is applied, the host facts are gathered (a probe per host, then a CPU score per machine and CPU
limit: the lab's nodes share one machine and, unthrottled, one score) and the network (iperf3) and disk (fio)
baselines are measured before the first trial. This script applies four settings on an N-node lab (default
8) and times each phase with the baselines of ``experiments/plans/bottleneck.yaml`` (iperf3 2 s + 1 s omitted;
fio 64 MB, 2 s a test, the sequential tests the models take). The disk baseline is measured three ways: one
host after another, as collect does it (``parallel: auto``: at once where each brick's device has a limit, a
figure short of it measured again alone), and one host after another again (the spread of measuring the same
way twice). It prints the times and each way's figures per test.

Then it collects a plan over the same settings (one 1 MB write run each, the baselines above) into a fresh
store, three ways: as by default (``baselines.at_once: auto``: on the lab, whose nodes share a machine, one
after the other; ``keep: true``: a setting that changed only knobs that cannot move a baseline's figures keeps
that baseline, ``campaign.records.baseline_key``), with ``keep: false`` (every setting measures both), and with
``at_once: true`` (iperf3 beside fio where every link and brick device has a limit; a pair no full link explains
measured again alone). It prints what each campaign paid before its first run
(``CampaignSummary.first_run_seconds``: leftover volumes removed, the setting applied, facts, CPU scores, the
baselines, the first volume built and mounted), which baselines it kept, and the figures the store holds,
beside the phases' alone ones.

Target (issue 66): a setting's fixed cost as collect pays it <= 10 s on 8 nodes, its figures those measured alone
within their own spread.

Run: .venv/bin/python benchmarks/setting_cost.py [--nodes 8] [--cluster glmodel-lab/lab.yaml] [--collect-only]
     (without --cluster it brings up a lab in a temporary directory and removes it afterwards)
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from gluster_model.bench.fio import DiskSpec, run_disk
from gluster_model.bench.iperf import IperfSpec, run_iperf
from gluster_model.campaign.lab_setting import apply_lab_setting
from gluster_model.config.cluster import load_cluster
from gluster_model.hardware.facts import HostFacts
from gluster_model.plan.file import load_plan
from gluster_model.preflight import cpu_scores, run_check
from gluster_model.remote.executor import SSHExecutor

T = TypeVar("T")
# A plan's settings as the bottleneck plan orders them: today, then one knob at a time (the link alone, then the
# disks alone: each keeps the other's baseline), then back to today's link with disks that have no limit (the
# network's baseline kept from the first; the lab's nodes' loop devices sit on one disk of one machine with the same
# limits, so collect measures one of them and the others carry its figures: ``bench.fio.same_device``).
SETTINGS = ((("link", "1gbit"), ("disk", "100MB/s")), (("link", "500mbit"), ("disk", "100MB/s")),
            (("link", "500mbit"), ("disk", "40MB/s")), (("link", "1gbit"), ("disk", "unlimited")))
# How collect is asked to measure them: (baselines.at_once, baselines.keep).
WAYS = (("auto", True), ("auto", False), ("true", True))
# The bottleneck plan's baselines, as a plan over hardware settings measures them.
_PLAN_BASELINES = load_plan(Path(__file__).resolve().parent.parent / "experiments/plans/bottleneck.yaml").baselines
IPERF: IperfSpec = _PLAN_BASELINES.iperf
FIO = DiskSpec(**_PLAN_BASELINES.fio.model_dump())


def timed(what: str, times: dict[str, float], fn: Callable[[], T]) -> T:
    started = time.monotonic()
    out = fn()
    times[what] = time.monotonic() - started
    return out


def fio_figures(bricks: list[Any], test: str) -> list[float]:
    return [b.jobs[test].bytes_per_s / 1e6 for b in bricks if not b.error and test in b.jobs]


def spread(values: list[float]) -> str:
    if not values:
        return "no figures"
    return (f"median {statistics.median(values):6.1f} MB/s, {min(values):.1f}-{max(values):.1f} "
            f"over {len(values)} figure(s)")


def measure(cluster_file: Path) -> dict[str, tuple[float | None, list[float], list[float]]]:
    """Each setting's phases, one after the other; returns each one's alone figures by setting name (iperf3
    median pair in Mbit/s, fio seq_write and seq_read medians in MB/s)."""
    spec = load_cluster(cluster_file)
    alone: dict[str, tuple[float | None, list[float], list[float]]] = {}
    with SSHExecutor(spec) as ex:
        for setting in SETTINGS:
            times: dict[str, float] = {}
            timed("apply the setting", times, lambda: apply_lab_setting(ex, setting, lambda m: None))
            checked = timed("host probes (all hosts at once)", times, lambda: run_check(ex))
            facts = {r.host.address: HostFacts.read(r.facts) for r in checked.reports}
            scores = timed("CPU scores (once per machine and limit)", times, lambda: cpu_scores(ex, facts))
            matrix = timed("iperf3 (every pair of a direction at once)", times, lambda: run_iperf(ex, IPERF))
            ways = {"one host after another": timed("fio one host after another", times,
                                                    lambda: run_disk(ex, FIO.model_copy(update={"parallel": False}))),
                    "as collect does (auto)": timed("fio as collect does (auto)", times, lambda: run_disk(ex, FIO)),
                    "one after another, again": timed("fio one host after another, again", times,
                                                      lambda: run_disk(ex, FIO.model_copy(update={"parallel": False})))}
            fixed = sum(v for k, v in times.items() if "one host after another" not in k)
            name = ", ".join(f"{k}={v}" for k, v in setting)
            print(f"setting {name} on {len(spec.hosts)} host(s)")
            for what, seconds in times.items():
                print(f"  {what:<44} {seconds:6.1f} s")
            print(f"  CPU scores: {spread(list(scores.values()))}")
            bps = matrix.median_pair_bps()
            print(f"  iperf3 median pair: {bps / 1e9 if bps else float('nan'):.3f} Gbit/s")
            print(f"  {'phases one after the other (fio auto)':<44} {fixed:6.1f} s")
            for test in FIO.tests:
                for way, bricks in ways.items():
                    print(f"  fio {test:<9} {way:<26} {spread(fio_figures(bricks, test))}")
            first = ways["one host after another"]
            alone[name] = (bps / 1e6 if bps else None, fio_figures(first, "seq_write"), fio_figures(first, "seq_read"))
    return alone


PLAN = """name: setting-cost
factors:
  link: [{links}]
  disk: [{disks}]
  file_size: 1MB
  record_size: 1MB
  threads: 1
design:
  type: grid
  hardware:
    type: list
    settings:
{settings}
workload: {{tests: [write]}}
protocol: {{warmups: 0, repetitions: 1, outlier_rule: none}}
baselines:
  iperf: {{seconds: {seconds}, omit: {omit}}}
  fio: {{size: {size}, runtime: {runtime}, steady: {steady}, tests: [{tests}]}}
  at_once: {at_once}
  keep: {keep}
"""


def as_collect_pays(cluster_file: Path, workdir: Path,
                    alone: dict[str, tuple[float | None, list[float], list[float]]], at_once: str,
                    keep: bool) -> None:
    """Collect a plan over SETTINGS and print each campaign's cost before its first run and its kept figures."""
    from gluster_model import api
    from gluster_model.store import open_store

    way = f"{at_once}-{'keep' if keep else 'measure'}"
    plan = workdir / f"setting-cost-{way}.yaml"
    values = {k: sorted({dict(s)[k] for s in SETTINGS}) for k in ("link", "disk")}
    plan.write_text(PLAN.format(links=", ".join(values["link"]), disks=", ".join(values["disk"]),
                                settings="\n".join(f"      - {{link: {dict(s)['link']}, disk: {dict(s)['disk']}}}"
                                                   for s in SETTINGS),
                                seconds=IPERF.seconds, omit=IPERF.omit, size=FIO.size, runtime=FIO.runtime,
                                steady=str(FIO.steady).lower(), tests=", ".join(FIO.tests),
                                at_once=at_once, keep=str(keep).lower()))
    store = f"sqlite:///{workdir / f'setting-cost-{way}.db'}"
    summaries = api.collect(cluster_file, plan, store=store)
    print(f"as collect pays it, baselines at_once: {at_once}, keep: {str(keep).lower()} (a plan over the same "
          "settings, one 1 MB write run each; on the lab auto measures one after the other; keep: a setting "
          "keeps the baseline of a kind its changed knobs cannot move):")
    with open_store(store) as st:
        for summary, setting in zip(summaries, SETTINGS):
            name = ", ".join(f"{k}={v}" for k, v in setting)
            campaign = st.campaign(summary.campaign)
            rows = st.baselines(campaign.hardware_key) if campaign and campaign.hardware_key else []
            kept = [r for r in rows if r.error is None]
            again = sorted({r.kind for r in rows if r.error})
            kept_from = sorted({r.kind for r in kept if r.campaign_id != campaign.id}) if campaign else []
            pairs = [r.value / 1e6 for r in kept if r.kind == "network" and r.value]
            print(f"  setting {name}: {summary.first_run_seconds or float('nan'):5.1f} s before the first run"
                  f" ({summary.baseline_seconds:.1f} s of baselines and the first volume)"
                  + (f"; kept from an earlier setting: {', '.join(kept_from)}" if kept_from else "")
                  + (f"; measured again: {', '.join(again)}" if again else ""))
            net, write, read = alone.get(name, (None, [], []))
            print(f"    iperf3 median pair {statistics.median(pairs) if pairs else float('nan'):7.1f} Mbit/s"
                  f" (alone {net or float('nan'):.1f})")
            for test, figures in (("seq_write", write), ("seq_read", read)):
                got = [r.value / 1e6 for r in kept if r.kind == "disk" and r.test == test and r.value]
                print(f"    fio {test:<9} {spread(got)}  (alone {spread(figures)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cluster", type=Path)
    parser.add_argument("--nodes", type=int, default=8)
    parser.add_argument("--collect-only", action="store_true", help="skip the phases measured one by one")
    args = parser.parse_args()

    def both(cluster_file: Path, workdir: Path) -> None:
        alone = {} if args.collect_only else measure(cluster_file)
        for at_once, keep in WAYS:
            as_collect_pays(cluster_file, workdir, alone, at_once, keep)

    from gluster_model.lab import lab_down, lab_up

    with tempfile.TemporaryDirectory(prefix="glmodel-bench-") as d:
        if args.cluster:
            both(args.cluster, Path(d))
            return
        state = lab_up(Path(d) / "lab", nodes=args.nodes, brick_size=1 << 30)
        try:
            both(state.cluster_file, Path(d))
        finally:
            lab_down(Path(d) / "lab")


if __name__ == "__main__":
    main()

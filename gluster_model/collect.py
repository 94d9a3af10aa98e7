"""`glmodel collect`: run a plan's campaign on a cluster, trial by trial into the store, resumable.

Order of work: host facts (once per campaign), network and disk baselines (once per hardware), then volume by
volume: create/reconfigure and mount, run every unfinished run of that volume, tear it down. A run that is
done in the store is skipped; a failed or interrupted one is run again from its first trial. A failing run
is recorded with host, command and reason, and the campaign goes on (unless fail_fast).
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol as TypingProtocol

from . import __version__
from .bench.iozone import IozoneRun, IozoneWorkload, run_iozone
from .config import ClusterSpec
from .dd_trial import remove_dd_files, run_dd_trial
from .errors import CommandFailed, GlmodelError, LabError, MultiHostError, RemoteError
from .gluster.apply import apply_volume, drop_caches, remount, server_version, teardown_volume
from .gluster.space import brick_free, shortfall
from .gluster.volume import VolumePlan, plan_volume
from .gluster.volume import client_keeps_file_data
from .gluster.cli import GlusterVersion
from .units import gluster_size, parse_size
from .plan.factors import RunSpec, digest
from .plan.file import Expanded, PlanFile
from .protocol import Protocol, next_step
from .remote.executor import Executor
from .store.store import Store, TrialRecord, now
from .trial_context import disturbances, heal_pending, snapshot, summary


class Reporter(TypingProtocol):
    """What the runner tells its caller (the CLI draws a progress bar from it)."""

    def status(self, message: str) -> None: ...

    def run_started(self, position: int, total: int, run: RunSpec, eta_s: float | None) -> None: ...

    def run_finished(self, position: int, total: int, run: RunSpec, line: str, ok: bool) -> None: ...


class SilentReporter:
    def status(self, message: str) -> None:
        pass

    def run_started(self, position: int, total: int, run: RunSpec, eta_s: float | None) -> None:
        pass

    def run_finished(self, position: int, total: int, run: RunSpec, line: str, ok: bool) -> None:
        pass


@dataclass
class CampaignSummary:
    campaign: str
    total: int
    already_done: int = 0
    done: int = 0
    failed: int = 0
    trials: int = 0
    engine_seconds: float = 0.0
    wall_seconds: float = 0.0
    baseline_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)


class TrialFailed(GlmodelError):
    def __init__(self, message: str, host: str | None, command: str | None) -> None:
        super().__init__(message)
        self.host = host
        self.command = command


LabSetting = tuple[tuple[str, str], ...]


def campaign_name(plan: PlanFile, cluster: ClusterSpec) -> str:
    return f"{plan.name}@{cluster.name}"


def setting_campaign(base: str, setting: LabSetting) -> str:
    """Each lab hardware setting is a campaign of its own: its own host facts, baselines and hardware key.

    'hw@lab' + (('link', '1gbit'), ('brick_backing', 'xfs')) -> 'hw@lab:link=1gbit,brick_backing=xfs'
    (no spaces or brackets: the name is typed in shells and shown in rich tables)
    """
    return base if not setting else f"{base}:{','.join(f'{k}={v}' for k, v in setting)}"


def ensure_campaign(store: Store, cluster: ClusterSpec, plan: PlanFile, name: str) -> int:
    """The campaign's id in the store, recorded with its plan and cluster if it is new."""
    plan_json = plan.model_dump(mode="json")
    return store.ensure_campaign(name, plan.name, digest(plan_json), plan_json, cluster.name,
                                 cluster_record(cluster), __version__)


def runs_done(store: Store, campaign: str, expanded: Expanded) -> int:
    """How many of ``expanded``'s runs the store already has done in ``campaign``."""
    existing = store.campaign(campaign)
    if existing is None:
        return 0
    planned = {r.config_hash for r in expanded.runs}
    return sum(1 for r in store.runs(int(existing["id"])) if r["status"] == "done" and r["config_hash"] in planned)


def apply_lab_setting(cluster: ClusterSpec, setting: LabSetting, progress: Callable[[str], None]) -> None:
    """Ask the local lab for a hardware setting (plans with lab factors only run on a lab: see plan.expand)."""
    from .lab import load_lab, parse_setting, set_hardware

    if cluster.lab_dir is None:
        raise LabError(f"{cluster.name} is not a glmodel lab; its hardware cannot be changed by a plan")
    state = load_lab(cluster.lab_dir)
    settings: dict[str, Any] = {}
    for factor, text in setting:
        settings.update(parse_setting("backing" if factor == "brick_backing" else factor, text))
    progress("lab: every node's " + ", ".join(f"{k}={v}" for k, v in setting))
    set_hardware(state, [n.address for n in state.nodes], settings, progress=progress)


def lab_snapshot(cluster: ClusterSpec) -> dict[str, dict[str, Any]] | None:
    """The lab's hardware before a plan changes it (None for a real cluster), for ``restore_lab``."""
    from .lab import LabState, snapshot

    state = LabState.load(cluster.lab_dir) if cluster.lab_dir else None
    return snapshot(state) if state is not None else None


def restore_lab(cluster: ClusterSpec, snap: dict[str, dict[str, Any]], progress: Callable[[str], None]) -> None:
    """Put the lab's hardware back as ``lab_snapshot`` found it."""
    from .lab import load_lab, restore

    assert cluster.lab_dir is not None
    restore(load_lab(cluster.lab_dir), snap, progress)


def cluster_record(cluster: ClusterSpec) -> dict[str, Any]:
    """The cluster as stored: hosts, roles, bricks; no SSH settings (identity paths, users) at all."""
    return {"name": cluster.name, "hosts": [
        {"address": h.address, "name": h.name, "roles": sorted(h.roles), "brick_paths": list(h.brick_paths)}
        for h in cluster.hosts]}


def hardware_key(cluster: ClusterSpec, facts: dict[str, dict[str, Any]], setting: LabSetting = ()) -> str:
    """Same key = same hosts with the same hardware facts (and lab setting), so earlier baselines still describe
    them. The lab's link rate is in no host fact, so the setting is part of the key."""
    keep = ("cpu_model", "cpus", "ram_bytes", "nic", "nic_speed_mbps", "nic_mtu", "bricks_fstype")
    hosts = []
    for address, f in sorted(facts.items()):
        bricks = f.get("bricks") or {}
        f = {**f, "bricks_fstype": sorted((p, b.get("fstype")) for p, b in bricks.items())}
        limits = {"cpu_quota_cores": f.get("cpu_quota_cores"),
                  "throttle": sorted((p, sorted(b["throttle"].items())) for p, b in bricks.items() if b.get("throttle"))}
        # Limits only where there are any, so a host without them keeps the key it had before they were facts.
        hosts.append([address, *[f.get(k) for k in keep], *([limits] if any(limits.values()) else [])])
    return digest({"cluster": cluster.name, "hosts": hosts, **({"lab": dict(setting)} if setting else {})})


DD_STARTUP_S = 0.5


@dataclass(frozen=True)
class TrialCost:
    """What a trial costs: fixed start-up seconds plus bytes moved (per test pass) at a rate."""

    startup_s: float = 9.0
    bytes_per_s: float = 100 * 2**20
    volume_s: float = 9.0
    source: str = "lab defaults"


def fit_trial_cost(samples: list[tuple[float, float]], volume_s: float = 9.0) -> TrialCost | None:
    """Least-squares fit of seconds = startup + bytes / rate over stored trials, as (bytes moved, seconds).

    Needs at least three trials and two distinct sizes; a fit that makes no physical sense (negative start-up
    or rate) falls back to the median start-up with the rate left at its default.
    """
    if len(samples) < 3 or len({b for b, _ in samples}) < 2:
        return None
    import numpy as np

    x = np.array([b for b, _ in samples], dtype=float)
    y = np.array([sec for _, sec in samples], dtype=float)
    slope, intercept = np.polyfit(x, y, 1)
    source = f"fitted on {len(samples)} stored trial(s)"
    if slope <= 0 or intercept < 0:
        return TrialCost(startup_s=float(np.median(y)), volume_s=volume_s, source=source + " (start-up only)")
    return TrialCost(startup_s=float(intercept), bytes_per_s=float(1 / slope), volume_s=volume_s, source=source)


def stored_trial_cost(store: Store, cluster_name: str) -> TrialCost | None:
    """Calibrate the estimate on earlier measured trials of the same cluster, if the store has enough."""
    names = {c["name"] for c in store.campaigns() if c["cluster_name"] == cluster_name}
    per_trial: dict[int, list[Any]] = {}
    for r in store.trial_table():
        if r["campaign"] in names and r["trial_status"] == "ok" and r["seconds"] and r["metric"]:
            e = per_trial.setdefault(r["trial_id"], [r["trial_file_size"] * r["threads"], r["seconds"], 0])
            e[2] += 1
    return fit_trial_cost([(size * passes, sec) for size, sec, passes in per_trial.values()])


def estimate_seconds(expanded: Expanded, p: Protocol, baselines: bool = True, cost: TrialCost = TrialCost()) -> float:
    """Campaign duration: per trial, the start-up plus the data of every test pass at the cost's rate (or the
    auto-sizing target); per volume, creating, mounting and removing it; a minute for the baselines."""
    per_trial = 0.0
    for run in expanded.runs:
        data = parse_size(run.workload.file_size) * run.workload.threads
        passes = 1 + len([t for t in run.workload.tests if t != "write"])
        io = passes * data / cost.bytes_per_s
        if p.target_seconds:
            io = max(io, p.target_seconds)
        startup = DD_STARTUP_S if run.workload.engine == "dd" else cost.startup_s  # dd: one SSH round trip
        per_trial += (startup + io) * (p.warmups + p.repetitions)
    total = per_trial + cost.volume_s * len(expanded.volumes)
    return total + (60 if baselines else 0)


def trial_count(expanded: Expanded, p: Protocol) -> tuple[int, int]:
    """(minimum, maximum) trials the protocol may run, warm-ups included."""
    n = len(expanded.runs)
    low = n * (p.warmups + p.repetitions)
    per_rerun = 1 + (p.warmups if p.rewarm else 0)
    high = n * (p.warmups + p.cap + (p.max_reruns * per_rerun if p.outlier_rule != "none" else 0))
    return low, high


def regime(workload: IozoneWorkload, client_ram: int | None, clients_used: int) -> str:
    """Which cache regime a run lands in: direct (O_DIRECT), cached (data per client fits its RAM), uncached."""
    if workload.sync == "odirect":
        return "direct"
    if workload.cache is not None:  # the plan said: caches dropped before each pass, or kept warm
        return "uncached" if workload.cache == "dropped" else "cached"
    if not client_ram:
        return "unknown"
    per_client = parse_size(workload.file_size) * math.ceil(workload.threads / max(clients_used, 1))
    return "uncached" if per_client > client_ram else "cached"


def size_past_ram(workload: IozoneWorkload, client_ram: int, clients_used: int, margin: float = 1.25) -> IozoneWorkload:
    """The workload with files grown so each client handles ``margin`` × its RAM (uncached regime).

    A client's threads share its page cache, so the per-file size is the client's share divided by its threads.
    Files already large enough, and O_DIRECT runs (which bypass the cache), are left as they are.
    """
    if workload.sync == "odirect":
        return workload
    threads_per_client = math.ceil(workload.threads / max(clients_used, 1))
    need = math.ceil(client_ram * margin / threads_per_client / 1024) * 1024
    if parse_size(workload.file_size) >= need:
        return workload
    return workload.model_copy(update={"file_size": f"{need // 1024}k"})


def io_seconds(kbps: dict[str, float], file_size: int, threads: int) -> float:
    """Time a trial spent moving data: per test (metric -> aggregate kB/s), all threads' bytes over the throughput.

    This leaves out iozone's start-up and barriers (about 9 s on the lab), which do not grow with the file.
    """
    total = file_size * threads / 1024  # kB
    return sum(total / v for v in kbps.values() if v > 0)


def _host_named(text: str, cluster: ClusterSpec) -> str | None:
    for h in cluster.hosts:
        if re.search(rf"(?<![\w.]){re.escape(h.address)}(?![\w.])", text) or \
                (h.name != h.address and re.search(rf"\b{re.escape(h.name)}\b", text)):
            return h.address
    return None


class Collector:
    def __init__(self, cluster: ClusterSpec, plan: PlanFile, expanded: Expanded, store: Store, executor: Executor,
                 *, campaign: str | None = None, fail_fast: bool = False, reporter: Reporter | None = None,
                 facts_fn: Callable[[], dict[str, dict[str, Any]]] | None = None, setting: LabSetting = (),
                 plan_volumes: list[str] | None = None) -> None:
        self.cluster = cluster
        self.plan = plan
        self.expanded = expanded
        self.store = store
        self.ex = executor
        self.name = campaign or campaign_name(plan, cluster)
        self.fail_fast = fail_fast
        self.report: Reporter = reporter or SilentReporter()
        self.facts_fn = facts_fn
        self.client_ram: int | None = None
        self.version: GlusterVersion | None = None
        self._room: tuple[VolumePlan, dict[str, int]] | None = None  # this run's bricks and their free bytes
        self.setting = setting
        # Every volume of the whole plan: one left by an interrupted campaign would hold the bricks a lab
        # setting change must reformat.
        self.plan_volumes = plan_volumes or list(dict.fromkeys(r.volume.name for r in expanded.runs))

    # -- the campaign ---------------------------------------------------------------------------------------
    def run(self) -> CampaignSummary:
        started = time.monotonic()
        cid = ensure_campaign(self.store, self.cluster, self.plan, self.name)
        status = self.store.register_runs(cid, self.expanded.runs)
        summary = CampaignSummary(self.name, len(self.expanded.runs))
        todo = [r for r in self.expanded.runs if status[r.config_hash][1] != "done"]
        summary.already_done = summary.total - len(todo)
        if not todo:
            self.report.status(f"campaign {self.name}: all {summary.total} run(s) already done")
            summary.wall_seconds = time.monotonic() - started
            return summary
        t0 = time.monotonic()
        if self.setting:
            self._remove_leftover_volumes(self.plan_volumes)
            apply_lab_setting(self.cluster, self.setting, self.report.status)
        key = self._facts(cid)
        missing = self._missing_baselines(key)
        network = self._baselines(cid, key, missing & {"network"})
        if network:
            self.store.add_baselines(network)
        # The disk baseline (fio, seconds per brick) runs while the first volume is created, started and mounted:
        # a few management calls and a brick directory per server, light next to it, and no trial starts before
        # it is stored. The CPU score and iperf3 are measured before, alone: on the lab the cores are shared,
        # and the management calls' bursts of CPU would lower them.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="baselines")
        pending: Future[list[dict[str, Any]]] | None = pool.submit(self._baselines, cid, key, missing & {"disk"})

        def baselines_done() -> None:
            nonlocal pending
            if pending is None:
                return
            job, pending = pending, None
            try:
                rows = job.result()
            finally:
                pool.shutdown(wait=True)
            if rows:
                self.store.add_baselines(rows)
            summary.baseline_seconds = time.monotonic() - t0

        position = summary.already_done
        run_times: list[float] = []
        by_volume: dict[str, list[RunSpec]] = {}
        for r in todo:
            by_volume.setdefault(r.volume_key, []).append(r)
        try:
            for runs in by_volume.values():
                volume = runs[0].volume
                try:
                    self.report.status(f"volume {volume.name}: applying ({runs[0].features['layout']})")
                    self.version = self.version or server_version(self.cluster, self.ex)
                    apply_volume(self.cluster, self.ex, volume, source=self.name, version=self.version)
                    points = remount(self.cluster, self.ex, volume.name)
                except GlmodelError as exc:
                    baselines_done()
                    for r in runs:
                        position += 1
                        self._fail(status[r.config_hash][0], r, exc, summary, position)
                    if self.fail_fast:
                        raise
                    continue
                try:
                    baselines_done()
                    for i, r in enumerate(runs):
                        position += 1
                        eta = (sum(run_times) / len(run_times)) * (summary.total - position + 1) if run_times else None
                        self.report.run_started(position, summary.total, r, eta)
                        run_id = status[r.config_hash][0]
                        t_run = time.monotonic()
                        try:
                            if i and self.plan.protocol.remount == "run" and client_keeps_file_data(
                                    volume, parse_size(r.workload.file_size)):
                                # Only then: a remount costs seconds, and a client without such caches starts
                                # the next run as cold as a new mount once the page cache is dropped.
                                points = remount(self.cluster, self.ex, volume.name)
                            line, engine_s, n = self._run_one(run_id, r, points)
                        except GlmodelError as exc:
                            self._fail(run_id, r, exc, summary, position)
                            if self.fail_fast:
                                raise
                            continue
                        except BaseException:
                            self.store.finish_run(run_id, "failed", error="interrupted")
                            raise
                        run_times.append(time.monotonic() - t_run)
                        summary.done += 1
                        summary.trials += n
                        summary.engine_seconds += engine_s
                        self.report.run_finished(position, summary.total, r, line, True)
                finally:
                    try:
                        teardown_volume(self.cluster, self.ex, volume.name)
                    except GlmodelError as exc:
                        self.report.status(f"teardown of {volume.name} failed: {exc}")
        finally:
            if pending is not None:  # interrupted while the first volume was being built
                pool.shutdown(wait=False, cancel_futures=True)
        baselines_done()  # every volume failed before its runs: the baselines are still kept
        self._remove_leftover_volumes(list(dict.fromkeys(r.volume.name for r in self.expanded.runs)))
        summary.wall_seconds = time.monotonic() - started
        return summary

    def _remove_leftover_volumes(self, names: list[str]) -> None:
        """Volumes of this plan still present (a teardown that failed, a killed earlier collect) are removed."""
        from .gluster.apply import volume_info

        for name in names:
            try:
                if volume_info(self.cluster, self.ex, name) is not None:
                    self.report.status(f"removing leftover volume {name}")
                    teardown_volume(self.cluster, self.ex, name)
            except GlmodelError as exc:
                self.report.status(f"could not remove volume {name}: {exc}")

    def _fail(self, run_id: int, run: RunSpec, exc: GlmodelError, summary: CampaignSummary, position: int) -> None:
        host, command = describe_failure(exc.errors[0] if isinstance(exc, MultiHostError) and exc.errors else exc)
        host = host or _host_named(str(exc), self.cluster)
        self.store.finish_run(run_id, "failed", error=str(exc), error_host=host, error_command=command)
        summary.failed += 1
        summary.failures.append(f"{run.label}: {exc}")
        self.report.run_finished(position, summary.total, run, f"FAILED on {host or '?'}: {exc}", False)

    # -- facts and baselines --------------------------------------------------------------------------------
    def _facts(self, cid: int) -> str:
        """Host facts into the store; the campaign's hardware key."""
        from .preflight import gather_facts

        self.report.status("host facts")
        facts = self.facts_fn() if self.facts_fn else gather_facts(self.cluster, self.ex)
        self.store.put_hosts(cid, facts)
        rams: list[int] = [ram for a, f in facts.items()
                           if isinstance(ram := f.get("ram_bytes"), int) and self.cluster.host(a).is_client]
        self.client_ram = min(rams) if rams else None
        key = hardware_key(self.cluster, facts, self.setting)
        self.store.set_hardware_key(cid, key)
        return key

    def _missing_baselines(self, key: str) -> set[str]:
        """The kinds of baseline the plan wants and the store lacks for this hardware."""
        have = {row["kind"] for row in self.store.baselines(key) if row["error"] is None}
        b = self.plan.baselines
        return {k for k, wanted in (("network", b.network), ("disk", b.disk)) if wanted and k not in have}

    def _baselines(self, cid: int, key: str, kinds: set[str]) -> list[dict[str, Any]]:
        """Measure the baselines of ``kinds``, as rows for the store (no store access: may run in a thread)."""
        b = self.plan.baselines
        rows: list[dict[str, Any]] = []
        if "network" in kinds:
            from .bench.iperf import run_iperf

            matrix = run_iperf(self.cluster, self.ex, b.iperf, progress=self.report.status)
            for p in matrix.pairs:
                rows.append(dict(hardware_key=key, campaign_id=cid, kind="network", host=p.client, target=p.server,
                                 test=p.direction, value=p.received_bps, unit="bit/s", error=p.error, raw=p.raw))
        if "disk" in kinds:
            from .bench.fio import run_disk

            for brick in run_disk(self.cluster, self.ex, b.fio, progress=self.report.status):
                if brick.error:
                    rows.append(dict(hardware_key=key, campaign_id=cid, kind="disk", host=brick.host,
                                     target=brick.path, test="all", value=None, unit="B/s", error=brick.error,
                                     raw=brick.raw))
                for test, job in brick.jobs.items():
                    rows.append(dict(hardware_key=key, campaign_id=cid, kind="disk", host=brick.host,
                                     target=brick.path, test=test, value=job.bytes_per_s, unit="B/s", error=None,
                                     raw=brick.raw if test == next(iter(brick.jobs)) else None))
                    rows.append(dict(hardware_key=key, campaign_id=cid, kind="disk", host=brick.host,
                                     target=brick.path, test=f"{test}_iops", value=job.iops, unit="IO/s", error=None,
                                     raw=None))
        return rows

    # -- one run --------------------------------------------------------------------------------------------
    def _run_one(self, run_id: int, run: RunSpec, points: dict[str, str]) -> tuple[str, float, int]:
        p = self.plan.protocol
        self.store.start_run(run_id)
        workload = run.workload
        clients_used = len(points) if workload.clients is None else min(workload.clients, len(points))
        if p.larger_than_ram and self.client_ram:
            workload = size_past_ram(workload, self.client_ram, clients_used)
        self._room = self._brick_room(run, workload)
        try:
            return self._measure(run_id, run, workload, points, clients_used)
        finally:
            if workload.engine == "dd":  # dd's files outlive trials (reads reuse them); local ones outlive the volume
                try:
                    remove_dd_files(self.cluster, self.ex, workload, points)
                except GlmodelError as exc:
                    self.report.status(f"could not remove dd files: {exc}")

    def _brick_room(self, run: RunSpec, workload: IozoneWorkload) -> tuple[VolumePlan, dict[str, int]] | None:
        """The volume's bricks and their free bytes, read once per run; the run is refused here, in one line
        naming the bricks and the numbers, when its files cannot fit (iozone would hang instead of failing)."""
        if workload.target != "gluster":
            return None
        plan = plan_volume(run.volume, self.cluster, self.version, self.name)
        room = (plan, brick_free(self.ex, list(plan.bricks)))
        short = shortfall(plan, room[1], workload.threads, parse_size(workload.file_size))
        if short is not None:
            raise GlmodelError(short.message())
        return room

    def _fits(self, workload: IozoneWorkload) -> bool:
        if self._room is None:
            return True
        plan, free = self._room
        return shortfall(plan, free, workload.threads, parse_size(workload.file_size)) is None

    def _measure(self, run_id: int, run: RunSpec, workload: IozoneWorkload, points: dict[str, str],
                 clients_used: int) -> tuple[str, float, int]:
        p = self.plan.protocol
        idx = 0
        engine_total = 0.0
        if p.target_seconds:
            workload, idx, engine_total = self._auto_size(run_id, run, workload, points)
        for _ in range(p.warmups):
            engine_total += self._trial(run_id, run, workload, points, idx, warmup=True)[1]
            idx += 1
        kept: list[tuple[int, dict[str, float]]] = []
        disturbed_kept: list[str] = []
        remeasured: list[int] = []
        reruns = 0
        unstable = False
        reason = ""
        limit = p.warmups + p.cap + p.max_reruns + idx + 1
        while idx < limit:
            values, engine_s, found = self._trial(run_id, run, workload, points, idx, warmup=False)
            engine_total += engine_s
            idx += 1
            if found and reruns < p.max_reruns:
                # Something beside the trial shared its CPUs, disks or links: flagged and measured again.
                self.store.flag_outliers(run_id, [idx - 1], "disturbed: " + "; ".join(found))
                self.report.status(f"trial {idx - 1} disturbed ({found[0]}); measuring it again")
                remeasured.append(idx - 1)
                reruns += 1
                limit += 1
                continue
            if found:
                disturbed_kept.append(f"trial {idx - 1} disturbed ({found[0]}) after {reruns} re-run(s)")
            kept.append((idx - 1, values))
            step = next_step([v for _, v in kept], reruns, p)
            if step.flag:
                self.store.flag_outliers(run_id, [kept[i][0] for i in step.flag], step.reason)
                kept = [k for j, k in enumerate(kept) if j not in step.flag]
                if step.more:
                    reruns += len(step.flag)
                    # The replacement is measured in the state the rejected trial was: after the same warm-up.
                    for _ in range(p.warmups if p.rewarm else 0):
                        engine_total += self._trial(run_id, run, workload, points, idx, warmup=True)[1]
                        idx += 1
                        limit += 1
            unstable, reason = step.unstable, step.reason
            if not step.more:
                break
        if disturbed_kept:
            unstable, reason = True, "; ".join([*([reason] if unstable else []), *disturbed_kept])
        rg = regime(workload, self.client_ram, clients_used)
        self.store.finish_run(run_id, "done", regime=rg, unstable=unstable)
        means = {m: sum(v[m] for _, v in kept) / len(kept) for m in kept[0][1]} if kept else {}
        line = (f"{run.label}: " + ", ".join(f"{m} {v / 1024:,.1f}" for m, v in means.items()) +
                f" MB/s over {len(kept)} trial(s) [{rg}{', UNSTABLE: ' + reason if unstable else ''}]"
                + (f"; {len(remeasured)} disturbed trial(s) flagged and measured again (`glmodel runs show "
                   f"{run_id}` says what disturbed them)" if remeasured else ""))
        return line, engine_total, idx

    def _auto_size(self, run_id: int, run: RunSpec, workload: IozoneWorkload,
                   points: dict[str, str]) -> tuple[IozoneWorkload, int, float]:
        """Double file_size until one trial's data phase (``io_seconds``) lasts the target time.

        The sizing trials are recorded as warm-ups. Doubling stops at ``max_file_size`` too.
        """
        p = self.plan.protocol
        assert p.target_seconds is not None
        idx, engine_total = 0, 0.0
        limit = p.max_file_size
        while True:
            values, engine_s, _ = self._trial(run_id, run, workload, points, idx, warmup=True)
            idx += 1
            engine_total += engine_s
            size = parse_size(workload.file_size)
            bigger = workload.model_copy(update={"file_size": f"{size * 2 // 1024}k"})
            # Doubling stops at the size cap, and where the bricks could not hold the doubled files.
            if io_seconds(values, size, workload.threads) >= p.target_seconds or size * 2 > limit \
                    or not self._fits(bigger):
                return workload, idx, engine_total
            workload = bigger

    def _trial(self, run_id: int, run: RunSpec, workload: IozoneWorkload, points: dict[str, str], idx: int,
               warmup: bool) -> tuple[dict[str, float], float, list[str]]:
        """One trial, stored with its context; (values, engine seconds, what disturbed it)."""
        p = self.plan.protocol
        started_at: datetime = now()
        t0 = time.monotonic()
        hosts = [h.address for h in self.cluster.hosts]
        before = snapshot(self.ex, hosts)
        heal = heal_pending(self.ex, self.cluster.servers[0].address, run.volume.name,
                            self.cluster.servers[0].glusterd_socket) \
            if workload.target == "gluster" and run.volume.layout != "distribute" else None
        if p.remount == "trial":
            points = remount(self.cluster, self.ex, run.volume.name)
        record = TrialRecord(idx=idx, warmup=warmup, status="ok", file_size=parse_size(workload.file_size),
                             started_at=started_at, seconds=0.0, engine_seconds=0.0, argv=[])
        drop = p.drop_caches if workload.cache is None else workload.cache == "dropped"
        if workload.engine == "dd":
            dd = run_dd_trial(self.cluster, self.ex, run.volume.name, workload, points, drop=drop,
                              timeout=p.trial_timeout)
            record.argv, record.engine_seconds, record.error = dd.argv, dd.seconds, dd.error
            record.raw = {"dd": dd.raw}
            record.measurements = dd.measurements()
            values, raw_text = dd.values, dd.raw
            failed_host = None
        else:
            if drop:
                drop_caches(self.cluster, self.ex)
            result: IozoneRun = run_iozone(self.cluster, self.ex, run.volume.name, workload, points,
                                           timeout=p.trial_timeout,
                                           startup_timeout=p.startup_timeout + 0.5 * workload.threads)
            record.argv, record.engine_seconds, record.error = result.argv, result.seconds, result.error
            record.raw = {"iozone": result.raw, "client_file": result.client_file}
            failed_host = result.host
            values = {}
            if result.output is not None:
                for name, m in result.output.metrics.items():
                    record.measurements.append((name, m.children_kbps, result.output.unit, m.min_kbps, m.max_kbps))
                    values[name] = m.children_kbps
            raw_text = result.raw
        record.status = "ok" if values else "failed"
        after = snapshot(self.ex, hosts)
        record.seconds = time.monotonic() - t0
        found = disturbances(before, after, record.seconds, heal) if values else []
        record.context = summary(before, after, heal, found)
        self.store.add_trial(run_id, record)
        if not values:
            host = failed_host or _host_named(raw_text + " " + (record.error or ""), self.cluster)
            raise TrialFailed(f"trial {idx} ({'warm-up' if warmup else 'measured'}, file {gluster_size(record.file_size)})"
                              f" failed: {record.error}", host, " ".join(record.argv)[:2000])
        return values, record.engine_seconds, found


def describe_failure(exc: GlmodelError) -> tuple[str | None, str | None]:
    """(host, command) named by an error, where it names them."""
    if isinstance(exc, CommandFailed):
        return exc.host, exc.command
    if isinstance(exc, (RemoteError, TrialFailed)):
        return exc.host, getattr(exc, "command", None)
    return None, None

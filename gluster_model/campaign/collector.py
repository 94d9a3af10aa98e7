"""`glmodel collect`: run a plan's campaign on a cluster, trial by trial into the store, resumable.

Order of work: host facts (once per campaign), network and disk baselines (once per hardware; measured again
when something disturbed them, ``baselines``), then volume by volume: create/reconfigure and mount, run every
unfinished run of that volume, tear it down. A run that is done in the store is skipped; a failed or interrupted
one is run again from its first trial. A failing run is recorded with host, command and reason, and the campaign
goes on (unless fail_fast).
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..bench.engine import Measured, TrialEngine, TrialRequest
from ..bench.engines import TRIAL_ENGINES
from ..bench.fio import HostDisks, brick_hosts, host_disks, run_disk
from ..bench.iperf import NET_AT_LIMIT, link_limits, run_iperf, unheld_pairs
from ..bench.rtt import delay_missing, run_rtt
from ..bench.metrics import show_stored
from ..bench.workload import Workload
from ..config.cluster import ClusterSpec
from ..errors import CommandFailed, GlmodelError, MultiHostError, RemoteError
from ..gluster.apply import (apply_volume, brick_status, heal_pending, remount, remove_leftover, server_version,
                             teardown_volume)
from ..gluster.cli import GlusterVersion
from ..gluster.space import brick_free, shortfall
from ..gluster.volume import VolumeConfig, VolumePlan, client_keeps_file_data, plan_volume
from ..hardware.emulation import EmulationError
from ..hardware.facts import HostFacts
from ..hardware.knobs.latency import parse_delay
from ..plan.factors import RunSpec
from ..plan.file import Expanded, PlanFile
from ..plan.protocol import next_step
from ..remote.executor import Executor
from ..store.store import Store, TrialRecord, now
from ..units import gluster_size, parse_size
from .baselines import BESIDE, at_once, measured_alone
from .lab_setting import apply_lab_setting
from .progress import CampaignSummary, Reporter, SilentReporter
from ..store.identity import Look, Purpose, RunStatus, SearchStep
from .records import BASELINE_KINDS, LabSetting, baseline_key, campaign_name, ensure_campaign, hardware_key
from .sizing import io_seconds, regime, size_past_ram, sizing_step, with_file_size
from .trial_context import disturbances, snapshot, summary
from ..preflight import gather_facts


class TrialFailed(GlmodelError):
    def __init__(self, message: str, host: str | None, command: str | None) -> None:
        super().__init__(message)
        self.host = host
        self.command = command


def _host_named(text: str, cluster: ClusterSpec) -> str | None:
    for h in cluster.hosts:
        if re.search(rf"(?<![\w.]){re.escape(h.address)}(?![\w.])", text) or \
                (h.name != h.address and re.search(rf"\b{re.escape(h.name)}\b", text)):
            return h.address
    return None


class Collector:
    def __init__(self, executor: Executor, plan: PlanFile, expanded: Expanded, store: Store,
                 *, campaign: str | None = None, fail_fast: bool = False, reporter: Reporter | None = None,
                 facts_fn: Callable[[], Mapping[str, HostFacts]] | None = None, setting: LabSetting = (),
                 plan_volumes: list[VolumeConfig] | None = None,
                 engines: Mapping[str, TrialEngine] = TRIAL_ENGINES, purpose: Purpose = Purpose.TRAINING,
                 again_of: str | None = None, look: Look | None = None, step: SearchStep | None = None) -> None:
        self.cluster = cluster = executor.cluster
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
        self.purpose = purpose
        self.again_of = again_of
        self.look = look  # the side of an interleaved comparison this campaign measures
        self.step = step  # the round of an option search this campaign holds
        # Every volume of the whole plan: one left by an interrupted campaign would hold the bricks a lab
        # setting change must reformat.
        self.plan_volumes = plan_volumes or volumes_of(expanded)
        self.engines = engines
        self._run_times: list[float] = []  # seconds of each run finished so far, for the ETA
        self._started = time.monotonic()
        self._servers_share = True  # whether servers share a machine (the lab), from the host facts
        self._kind_keys: dict[str, str] = {}  # baseline kind -> what can move its figures, from the host facts

    # -- the campaign ---------------------------------------------------------------------------------------
    def run(self) -> CampaignSummary:
        """Run every run of the campaign not yet done in the store: facts and baselines first, then volume by
        volume. A failing run is recorded and the campaign goes on (unless fail_fast); an interrupt marks the
        run in progress interrupted and tears its volume down on the way out."""
        started = time.monotonic()
        cid = ensure_campaign(self.store, self.cluster, self.plan, self.name, purpose=self.purpose,
                              setting=self.setting, again_of=self.again_of, look=self.look, step=self.step)
        status = self.store.register_runs(cid, self.expanded.runs)
        summary = CampaignSummary(self.name, len(self.expanded.runs))
        todo = [r for r in self.expanded.runs if status[r.config_hash][1] != "done"]
        summary.already_done = summary.total - len(todo)
        if not todo:
            self.report.status(f"campaign {self.name}: all {summary.total} run(s) already done")
            if self.setting:
                # a plan over hardware settings killed after a setting's last run, before its teardown, left the
                # volume: no later setting's campaign need build that volume again to remove it
                self._remove_leftover_volumes(volumes_of(self.expanded))
            summary.wall_seconds = time.monotonic() - started
            return summary
        if self.setting:
            self._remove_leftover_volumes(self.plan_volumes)
            apply_lab_setting(self.ex, self.setting, self.report.status, self.report.note)
        key = self._facts(cid)
        by_volume: dict[str, list[RunSpec]] = {}
        for r in todo:
            by_volume.setdefault(r.volume_key, []).append(r)
        self._run_times = []
        self._started = started
        with self._baselines(cid, key, summary) as baselines_stored:
            for runs in by_volume.values():
                self._volume(runs, {r.config_hash: status[r.config_hash][0] for r in runs}, summary,
                             baselines_stored)
        self._remove_leftover_volumes(volumes_of(self.expanded))
        summary.wall_seconds = time.monotonic() - started
        return summary

    @contextmanager
    def _baselines(self, cid: int, key: str, summary: CampaignSummary) -> Iterator[Callable[[], None]]:
        """The baselines the store lacks for this hardware, measured while the first volume is built; yields the
        function that waits for them and stores them (called before the first trial).

        The network first, alone, then the disk beside the volume's build: iperf3 fills links through the CPU
        of the hosts, which on a shared machine (the lab) a build's management calls or fio would take from it.
        Where every host's link and every brick's device is held by a limit (a lab's or emulation's) and the
        plan's ``at_once`` allows it (by default, servers on machines of their own), both start at once, beside
        the build: a figure then shows when something held it below its limit (``bench.iperf.unheld_pairs``,
        ``bench.fio.slowed``), and such a one is measured again, alone, once the other measurement has ended.
        The CPU score is measured before, alone (``preflight``).
        """
        t0 = time.monotonic()
        missing = self._missing_baselines(key, summary)
        pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="baselines")
        jobs: list[Future[list[Measured]]] = []
        held = self._held_by_limits(missing)
        if held is not None:
            self.report.status("baselines: links and disks held by limits; network and disk measured at once")
            network_done = threading.Event()

            def network_ended() -> None:
                network_done.wait()

            disk = pool.submit(self._measure_baselines, {"disk"}, where=held[1], beside=network_ended)
            jobs = [pool.submit(self._network_beside, held[0], network_done, disk), disk]
        else:
            network = self._measure_baselines(missing & {"network"})
            if network:
                self.store.add_baselines(key, cid, network, self._kind_keys)
            jobs = [pool.submit(self._measure_baselines, missing & {"disk"})]

        def stored() -> None:
            nonlocal jobs
            waiting, jobs = jobs, []
            try:
                rows = [m for job in waiting for m in job.result()]
            finally:
                pool.shutdown(wait=True)
            if rows:
                self.store.add_baselines(key, cid, rows, self._kind_keys)
            if waiting:
                summary.baseline_seconds = time.monotonic() - t0

        try:
            yield stored
        except BaseException:
            if jobs:  # interrupted while the first volume was being built
                pool.shutdown(wait=False, cancel_futures=True)
            raise
        stored()  # every volume failed before its runs: the baselines are still kept

    def _held_by_limits(self, missing: set[str]) -> tuple[dict[str, int | None], dict[str, HostDisks]] | None:
        """Each host's link limit and brick devices, where both baselines are missing and the plan's ``at_once``
        allows measuring them together here (``baselines.at_once``); None otherwise (one after the other)."""
        b = self.plan.baselines
        if missing != {"network", "disk"} or b.fio.parallel is False or b.at_once is False or \
                (b.at_once == "auto" and self._servers_share):  # known from the facts: no command needed
            return None
        links = link_limits(self.ex)
        if any(rate is None for rate in links.values()):
            return None
        where = host_disks(self.ex, brick_hosts(self.ex))
        return (links, where) if at_once(b.at_once, links, where, b.fio.tests) else None

    def _network_beside(self, limits: dict[str, int | None], done: threading.Event,
                        disk: Future[list[Measured]]) -> list[Measured]:
        """The network baseline measured beside the disk's; a pair no full link explains (``unheld_pairs``)
        sends the whole matrix to be measured again once the disk's has ended."""
        try:
            found = self._measure_baselines({"network"}, limits=limits)
        finally:
            done.set()
        if any(m.kind == "network" and m.error is None for m in found) or \
                not any(m.error and m.error.startswith(BESIDE) for m in found):
            return found
        self.report.status("network baseline short of its links beside the disk baseline; measuring it again alone")
        disk.exception()  # wait for it to end, whatever its outcome (the caller reads it)
        return found + self._measure_baselines({"network"})

    def _volume(self, runs: list[RunSpec], run_ids: dict[str, int], summary: CampaignSummary,
                baselines_stored: Callable[[], None]) -> None:
        """One volume: apply and mount it, run its runs, tear it down (always)."""
        volume = runs[0].volume
        try:
            self.report.status(f"volume {volume.name}: applying ({runs[0].features['layout']})")
            self.version = self.version or server_version(self.ex)
            apply_volume(self.ex, volume, source=self.name, version=self.version)
            points = remount(self.ex, volume.name)
        except GlmodelError as exc:
            baselines_stored()
            for r in runs:
                self._fail(run_ids[r.config_hash], r, exc, summary)
            if self.fail_fast:
                raise
            return
        try:
            baselines_stored()
            for i, r in enumerate(runs):
                if i and self.plan.protocol.remount == "run" and client_keeps_file_data(
                        volume, parse_size(r.workload.file_size)):
                    # Only then: a remount costs seconds, and a client without such caches starts the next
                    # run as cold as a new mount once the page cache is dropped.
                    points = remount(self.ex, volume.name)
                self._one_run(run_ids[r.config_hash], r, points, summary)
        finally:
            try:
                teardown_volume(self.ex, volume.name)
            except GlmodelError as exc:
                # a line that stays: the runs' data are kept, but a volume is left on the cluster
                self.report.note(f"volume {volume.name} was not torn down ({exc}): it stays on the cluster; once "
                                 f"glusterd answers, `gluster volume stop {volume.name} force` and `gluster volume "
                                 f"delete {volume.name}` on a server remove it, as a collect that builds it again does")

    def _one_run(self, run_id: int, run: RunSpec, points: dict[str, str], summary: CampaignSummary) -> None:
        """One run, its outcome in the store and the summary; an interrupt marks it interrupted."""
        position = summary.already_done + summary.done + summary.failed + 1
        times = self._run_times
        eta = sum(times) / len(times) * (summary.total - position + 1) if times else None
        self.report.run_started(position, summary.total, run, eta)
        t_run = time.monotonic()
        if summary.first_run_seconds is None:
            summary.first_run_seconds = t_run - self._started
        try:
            line, engine_s, n = self._run_one(run_id, run, points)
        except GlmodelError as exc:
            self._fail(run_id, run, exc, summary)
            if self.fail_fast:
                raise
            return
        except BaseException:
            self.store.finish_run(run_id, RunStatus.FAILED, error="interrupted")
            raise
        times.append(time.monotonic() - t_run)
        summary.done += 1
        summary.trials += n
        summary.engine_seconds += engine_s
        self.report.run_finished(position, summary.total, run, line, True)

    def _remove_leftover_volumes(self, volumes: list[VolumeConfig]) -> None:
        """Volumes of this plan still present (a teardown that failed, a killed earlier collect), or the brick
        directories of one a kill left half torn down, are removed."""
        for config in volumes:
            try:
                self.version = self.version or server_version(self.ex)
                if remove_leftover(self.ex, config, self.version, self.name):
                    self.report.status(f"removed what a stopped run left of volume {config.name}")
            except GlmodelError as exc:
                self.report.status(f"could not remove volume {config.name}: {exc}")

    def _fail(self, run_id: int, run: RunSpec, exc: GlmodelError, summary: CampaignSummary) -> None:
        position = summary.already_done + summary.done + summary.failed + 1
        host, command = describe_failure(exc.errors[0] if isinstance(exc, MultiHostError) and exc.errors else exc)
        host = host or _host_named(str(exc), self.cluster)
        self.store.finish_run(run_id, RunStatus.FAILED, error=str(exc), error_host=host, error_command=command)
        summary.failed += 1
        summary.failures.append(f"{run.label}: {exc}")
        self.report.run_finished(position, summary.total, run, f"FAILED on {host or '?'}: {exc}", False)

    # -- facts and baselines --------------------------------------------------------------------------------
    def _facts(self, cid: int) -> str:
        """Host facts into the store; the campaign's hardware key."""
        self.report.status("host facts")
        facts = self.facts_fn() if self.facts_fn else gather_facts(self.ex)
        self.store.put_hosts(cid, facts)
        rams = [f.ram_bytes for a, f in facts.items() if f.ram_bytes is not None and self.cluster.host(a).is_client]
        self.client_ram = min(rams) if rams else None
        boots = [facts[h.address].boot_id if h.address in facts else None for h in self.cluster.servers]
        self._servers_share = None in boots or len(set(boots)) < len(boots)  # a machine, or one unknown
        key = hardware_key(self.cluster, facts, self.setting)
        self.store.set_hardware_key(cid, key)
        b = self.plan.baselines
        # how each kind is measured (not where it runs from, nor how hosts are ordered): a pass measured
        # another way (another fio size or test, another iperf3 length) is not kept
        how = {"network": b.iperf.model_dump(mode="json", exclude={"port"}),
               "disk": b.fio.model_dump(mode="json", exclude={"parallel"})}
        self._kind_keys = {kind: baseline_key(kind, self.cluster, facts, self.setting, how[kind])
                           for kind in BASELINE_KINDS}
        return key

    def _missing_baselines(self, key: str, summary: CampaignSummary) -> set[str]:
        """The kinds of baseline the plan wants and the store lacks for this hardware, once those another
        setting measured under the same knobs of their kind are kept (``baselines.keep``: in the summary)."""
        have = {b.kind for b in self.store.baselines(key) if b.error is None}
        b = self.plan.baselines
        missing = {k for k, wanted in (("network", b.network), ("disk", b.disk)) if wanted and k not in have}
        if not b.keep:
            return missing
        for kind in sorted(missing):
            kept = self.store.keep_baseline(kind, self._kind_keys[kind], key)
            if kept is not None:
                by = kept.campaign or "an earlier setting"
                self.report.status(f"{kind} baseline kept from {by} ({kept.figures} figure(s)): this setting changed "
                                   "no knob that moves it")
                summary.kept[kind] = by
                missing.discard(kind)
        return missing

    def _measure_baselines(self, kinds: set[str], *, limits: dict[str, int | None] | None = None,
                           where: dict[str, HostDisks] | None = None,
                           beside: Callable[[], None] | None = None) -> list[Measured]:
        """Measure the baselines of ``kinds``, for the store (no store access: may run in a thread); a
        measurement something disturbed is measured again (``baselines.measured_alone``).

        ``limits`` (network): every pair is checked against the links' limits, and a pass with a pair no full
        link explains is kept with each pair's error set (``BESIDE``); ``where`` and ``beside`` (disk): as
        ``bench.fio.run_disk`` takes them."""
        b = self.plan.baselines
        hosts = [h.address for h in self.cluster.hosts]
        found: list[Measured] = []

        def again(what: str, measure: Callable[[], list[Measured]]) -> list[Measured]:
            return measured_alone(what, measure, lambda: snapshot(self.ex, hosts), self.plan.protocol.max_reruns,
                                  self.report.status, self.report.note)

        def network() -> list[Measured]:
            matrix = run_iperf(self.ex, b.iperf, progress=self.report.status)
            short = unheld_pairs(matrix, limits) if limits is not None else []
            if short:
                reason = (f"{BESIDE}{len(short)} of {len(matrix.pairs)} pair(s) crossed no link at "
                          f"{NET_AT_LIMIT:.0%} of its limit")
                return [replace(m, error=m.error or reason) for m in matrix.measured()]
            rtt = run_rtt(self.ex, progress=self.report.status)
            self._delay_taken(rtt)
            return [*matrix.measured(), *rtt]

        if "network" in kinds:
            found += again("network baseline", network)
        if "disk" in kinds:
            found += again("disk baseline", lambda: [m for brick in run_disk(self.ex, b.fio, self.report.status,
                                                                            where=where, beside=beside)
                                                     for m in brick.measured()])
        return found

    def _delay_taken(self, rtt: list[Measured]) -> None:
        """Refuse a setting whose added latency the measured round trips do not have (its delayer ended, or a
        host kept its packets from it): its runs would be stored under a delay they were measured without."""
        text = dict(self.setting or ()).get("latency")
        us = parse_delay(text) if text is not None else None
        if us is None:
            return
        wrong = delay_missing(rtt, us)
        if wrong:
            raise EmulationError(wrong)

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
            try:
                self.engines[workload.engine].after_run(self._request(run, workload, points))
            except GlmodelError as exc:
                self.report.status(f"could not clean up after the run: {exc}")

    def _request(self, run: RunSpec, workload: Workload, points: dict[str, str]) -> TrialRequest:
        p = self.plan.protocol
        return TrialRequest(cluster=self.cluster, executor=self.ex, volume=run.volume.name, workload=workload,
                            points=points, drop_caches=p.drop_caches if workload.cache is None
                            else workload.cache == "dropped", timeout=p.trial_timeout,
                            startup_timeout=p.startup_timeout + 0.5 * workload.threads)

    def _brick_room(self, run: RunSpec, workload: Workload) -> tuple[VolumePlan, dict[str, int]] | None:
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

    def _filled(self, workload: Workload) -> tuple[str, str | None]:
        """After a failed trial: the bricks whose filesystem has less room left than one of the trial's files
        (something filled it while the trial ran: the run had room when it started), as a clause for the
        error, and the first one's host; ("", None) when every brick has room or they cannot be read."""
        if self._room is None:
            return "", None
        plan, _ = self._room
        try:
            free = brick_free(self.ex, list(plan.bricks))
        except GlmodelError:
            return "", None
        need = parse_size(workload.file_size)
        full = [b for b in plan.bricks if free.get(b.spec, need) < need]
        if not full:
            return "", None
        shown = ", ".join(f"{b.spec} {free[b.spec] / 2**20:,.0f} MB" for b in full[:3])
        return (f"; the brick filesystem filled during the trial (free now: {shown}; a file needs "
                f"{gluster_size(need)}): free space there, then collect again", full[0].host.address)

    def _offline(self, run: RunSpec) -> tuple[str, str | None]:
        """After a failed trial: the volume's bricks whose process is not running (a brick process that died
        during the trial takes its files with it), as a clause for the error, and the first one's host."""
        if self._room is None:
            return "", None
        try:
            down = [b for b in brick_status(self.ex, run.volume.name) if not b.online]
        except GlmodelError:
            return "", None
        if not down:
            return "", None
        shown = ", ".join(f"{b.host}:{b.path}" for b in down[:3])
        host = next((h.address for h in self.cluster.hosts if down[0].host in (h.address, h.name)), down[0].host)
        return f"; brick process(es) not running after the trial: {shown} (a brick that died takes its files)", host

    def _fits(self, workload: Workload) -> bool:
        if self._room is None:
            return True
        plan, free = self._room
        return shortfall(plan, free, workload.threads, parse_size(workload.file_size)) is None

    def _measure(self, run_id: int, run: RunSpec, workload: Workload, points: dict[str, str],
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
        self.store.finish_run(run_id, RunStatus.DONE, regime=rg, unstable=unstable)
        means = {m: sum(v[m] for _, v in kept) / len(kept) for m in kept[0][1]} if kept else {}
        line = (f"{run.label}: " + ", ".join(show_stored(m, v) for m, v in means.items()) +
                f" over {len(kept)} trial(s) [{rg}{', UNSTABLE: ' + reason if unstable else ''}]"
                + (f"; {len(remeasured)} disturbed trial(s) flagged and measured again (`glmodel runs show "
                   f"{run_id}` says what disturbed them)" if remeasured else ""))
        return line, engine_total, idx

    def _auto_size(self, run_id: int, run: RunSpec, workload: Workload,
                   points: dict[str, str]) -> tuple[Workload, int, float]:
        """Grow file_size until one trial's data phase (``io_seconds``) lasts the target time: by the power of
        two the last trial's rate says is needed (``sizing_step``), never past ``max_file_size`` or what the
        bricks can hold. The sizing trials are recorded as warm-ups."""
        p = self.plan.protocol
        assert p.target_seconds is not None
        idx, engine_total = 0, 0.0
        while True:
            values, engine_s, _ = self._trial(run_id, run, workload, points, idx, warmup=True)
            idx += 1
            engine_total += engine_s
            size = parse_size(workload.file_size)
            step = sizing_step(size, io_seconds(values, size, workload.threads), p.target_seconds,
                               p.max_file_size, fits=lambda n: self._fits(with_file_size(workload, n)))
            if step <= 1:
                return workload, idx, engine_total
            workload = with_file_size(workload, size * step)

    def _trial(self, run_id: int, run: RunSpec, workload: Workload, points: dict[str, str], idx: int,
               warmup: bool) -> tuple[dict[str, float], float, list[str]]:
        """One trial, stored with its context; (values, engine seconds, what disturbed it)."""
        p = self.plan.protocol
        started_at: datetime = now()
        t0 = time.monotonic()
        hosts = [h.address for h in self.cluster.hosts]
        before = snapshot(self.ex, hosts)
        replicated = workload.target == "gluster" and run.volume.layout != "distribute"
        heal = heal_pending(self.ex, run.volume.name) if replicated else None
        if p.remount == "trial":
            points = remount(self.ex, run.volume.name)
        record = TrialRecord(idx=idx, warmup=warmup, status="ok", file_size=parse_size(workload.file_size),
                             started_at=started_at, seconds=0.0, engine_seconds=0.0, argv=[])
        result = self.engines[workload.engine].run(self._request(run, workload, points))
        record.argv, record.engine_seconds, record.error = result.argv, result.seconds, result.error
        record.raw = result.raw
        record.measurements = list(result.measurements)
        values = result.metrics
        record.status = "ok" if values else "failed"
        after = snapshot(self.ex, hosts)
        record.seconds = time.monotonic() - t0
        found = disturbances(before, after, record.seconds, heal) if values else []
        record.context = summary(before, after, heal, found)
        self.store.add_trial(run_id, record)
        if not values:
            host = result.host or _host_named(result.raw_text + " " + (record.error or ""), self.cluster)
            full, full_host = self._filled(workload)
            down, down_host = self._offline(run)
            raise TrialFailed(f"trial {idx} ({'warm-up' if warmup else 'measured'}, file {gluster_size(record.file_size)})"
                              f" failed: {record.error}{full}{down}", down_host or full_host or host,
                              " ".join(record.argv)[:2000])
        return values, record.engine_seconds, found


def volumes_of(expanded: Expanded) -> list[VolumeConfig]:
    """The distinct volumes of a plan's runs, in order."""
    return list({r.volume.name: r.volume for r in expanded.runs}.values())


def describe_failure(exc: GlmodelError) -> tuple[str | None, str | None]:
    """(host, command) named by an error, where it names them."""
    if isinstance(exc, CommandFailed):
        return exc.host, exc.command
    if isinstance(exc, (RemoteError, TrialFailed)):
        return exc.host, getattr(exc, "command", None)
    return None, None

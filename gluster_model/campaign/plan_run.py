"""A whole plan run: one campaign per hardware setting, each by a Collector, and the hardware put back after.

``run_plan`` is the library's entry point for ``glmodel collect`` (the CLI only parses options and renders what
the reporter is told), so a Python caller gets the same loop, the same restore of the lab's hardware, and the
same resumption.
"""

from __future__ import annotations

from typing import Protocol

from ..design.registry import DESIGNS
from ..errors import GlmodelError
from ..gluster.volume import VolumeConfig
from ..plan.factors import LAB_FACTORS
from ..plan.file import Expanded, PlanFile, side_runs
from ..remote.executor import Executor
from ..store.identity import Look, Purpose
from ..store.store import Store
from .adaptive import run_adaptive
from .collector import Collector, volumes_of
from .descent import Descents
from .lab_setting import lab_snapshot, restore_lab
from .progress import CampaignSummary, PlanReporter, SilentPlanReporter
from .records import LabSetting, again_campaign, interleaved_order, runs_done, setting_campaign, side_campaign
from .search import run_search


def run_plan(executor: Executor, plan: PlanFile, expanded: Expanded, store: Store, *,
             base: str, fail_fast: bool = False, reporter: PlanReporter | None = None,
             purpose: Purpose = Purpose.TRAINING) -> list[CampaignSummary]:
    """Run every unfinished run of an expanded plan, one campaign per lab hardware setting, each recorded with
    ``purpose`` (a search plan's campaigns as a search's).

    A plan that changes the lab's hardware leaves the lab as it found it, even when a run fails or the
    campaign is interrupted (the restore runs in ``finally``). One plan writes to a store at a time: a second
    ``run_plan`` on the same store (another collect or verify) is refused, naming the first.
    """
    import os

    with store.writing(f"glmodel pid {os.getpid()}: {base}"):  # a second collect on this store refuses by name
        return _run_plan(executor, plan, expanded, store, base=base, fail_fast=fail_fast, reporter=reporter,
                         purpose=purpose)


class RoundsRunner(Protocol):
    """A design's campaign that chooses its runs as it measures (``DesignSpec.rounds``)."""

    def __call__(self, executor: Executor, plan: PlanFile, expanded: Expanded, store: Store, *, name: str,
                 fail_fast: bool, reporter: PlanReporter, plan_volumes: list[VolumeConfig],
                 setting: LabSetting = ()) -> list[CampaignSummary]: ...


# The campaign of each design that chooses as it measures: adaptive (a committee's disagreement, round by round),
# search (rounds chosen from what the screening measured). One entry a design whose registry entry says rounds.
ROUNDS: dict[str, RoundsRunner] = {"adaptive": run_adaptive, "search": run_search}
assert set(ROUNDS) == {d.name for d in DESIGNS.values() if d.rounds}, "a design that runs in rounds has no runner"


def run_interleaved(executor: Executor, plan: PlanFile, expanded: Expanded, store: Store, *, base: str,
                    fail_fast: bool, reporter: PlanReporter, plan_volumes: list[VolumeConfig],
                    setting: LabSetting = ()) -> list[CampaignSummary]:
    """An interleaved comparison's campaigns (``interleaved_order``), each the runs of one side at the plan's
    hardware setting, recorded as one side of a comparison; resumes like any plan (a finished look runs
    nothing)."""
    side = plan.design.sides
    assert side is not None
    levels = dict(zip("AB", plan.factors[side]))
    summaries: list[CampaignSummary] = []
    for label, k in interleaved_order(base, plan.design.looks):
        part = side_runs(expanded, side, levels[label])
        look = Look(base, label, k)
        name = side_campaign(look)
        with reporter.campaign(name, len(part.runs), runs_done(store, name, part), store.where) as run_reporter:
            summary = Collector(executor, plan, part, store, campaign=name, fail_fast=fail_fast,
                                reporter=run_reporter, plan_volumes=plan_volumes, setting=setting,
                                purpose=Purpose.COMPARISON, look=look).run()
        summaries.append(summary)
        reporter.finished(summary)
    return summaries


def _run_plan(executor: Executor, plan: PlanFile, expanded: Expanded, store: Store, *,
              base: str, fail_fast: bool, reporter: PlanReporter | None,
              purpose: Purpose) -> list[CampaignSummary]:
    cluster = executor.cluster
    rep: PlanReporter = reporter or SilentPlanReporter()
    settings = expanded.lab_settings
    snap = lab_snapshot(cluster, rep.note) if settings != [()] else None
    plan_volumes = volumes_of(expanded)
    summaries: list[CampaignSummary] = []
    try:
        rounds = ROUNDS.get(plan.design.type)
        if rounds is not None:  # one campaign, its runs chosen as it goes (plan.expand allows no more)
            return rounds(executor, plan, expanded, store, name=setting_campaign(base, settings[0]),
                          fail_fast=fail_fast, reporter=rep, plan_volumes=plan_volumes, setting=settings[0])
        if plan.design.sides is not None:  # two sides in alternating campaigns (A B B A ...)
            return run_interleaved(executor, plan, expanded, store, base=setting_campaign(base, settings[0]),
                                   fail_fast=fail_fast, reporter=rep, plan_volumes=plan_volumes,
                                   setting=settings[0])
        hw = plan.design.hardware
        # today measured again after the others: how far a campaign drifts on this cluster (its own campaign)
        first = setting_campaign(base, settings[0])
        again = [(settings[0], again_campaign(first), first)] if hw is not None and hw.again and settings != [()] \
            else []
        # a descent's steps, each run only until its knob's stage has bound (campaign.descent)
        descents = Descents(store, first, settings, hw,
                            [f for f in plan.factors if f not in LAB_FACTORS])  # what names a run across settings
        for setting, name, again_of in [(s, setting_campaign(base, s), None) for s in settings] + again:
            skip = descents.left_out(setting)  # today (and its repeat) is no step: None
            if skip:
                rep.note(skip)
                continue
            part = expanded.with_setting(setting)
            with rep.campaign(name, len(part.runs), runs_done(store, name, part), store.where) as run_reporter:
                summary = Collector(executor, plan, part, store, campaign=name, fail_fast=fail_fast,
                                    reporter=run_reporter, setting=setting, plan_volumes=plan_volumes,
                                    purpose=purpose, again_of=again_of).run()
            summaries.append(summary)
            rep.finished(summary)
            said = descents.measured(setting, name)
            if said:
                rep.note(said)
    finally:
        if snap is not None:
            try:  # the hardware goes back as it was (nothing of the plan's is left on the bricks or NICs)
                rep.note("restoring the hardware as it was before the plan")
                restore_lab(executor, snap, lambda m: rep.note(f"restoring: {m}"))
            except GlmodelError as exc:
                rep.note(f"could not restore the hardware: {exc}; run `glmodel restore --cluster {cluster.source}`")
    return summaries

"""What ``collect --dry-run`` shows before anything runs: volumes, runs, trials, the estimated duration (calibrated
on the store's earlier trials of the cluster), lab settings, merged and impossible design points."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config.cluster import ClusterSpec
from ..plan.factors import Level, RunSpec
from ..plan.file import Expanded, PlanFile
from ..store.store import open_store, store_exists
from ..plan.search import MAX_BUDGET
from .estimate import TrialCost, estimate_seconds, stored_trial_cost, trial_count
from .records import again_campaign, setting_campaign


@dataclass
class Preview:
    campaign: str
    volumes: int
    runs: list[RunSpec]
    trials: tuple[int, int]  # fewest and most the protocol may run, warm-ups included
    seconds: float
    cost_source: str
    adaptive: tuple[int, int] | None = None  # (at most this many runs chosen, per round after the first)
    settings: list[tuple[str, int]] = field(default_factory=list)  # (campaign of a lab setting, its runs)
    duplicates: int = 0
    skipped: list[tuple[dict[str, Level], str]] = field(default_factory=list)
    cluster: str = ""
    servers: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)  # (name, brick directories)
    clients: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # how the plan adapted to the cluster
    search_budget: int | None = None  # a search plan: at most this many runs measured, screening included


def preview(cluster: ClusterSpec, plan: PlanFile, expanded: Expanded, base: str, store: str) -> Preview:
    """The plan's campaign as it would run; reads the store only to calibrate the estimate (never creates it)."""
    cost = TrialCost()
    if store_exists(store):
        # A store collect could not write to is refused here too, before anyone waits for the real run.
        with open_store(store, create=False) as st:
            cost = stored_trial_cost(st, cluster.name) or cost
    d = plan.design
    settings = expanded.lab_settings
    campaigns = [(setting_campaign(base, s), len(expanded.with_setting(s).runs)) for s in settings] \
        if settings != [()] else []
    seconds = estimate_seconds(expanded, plan.protocol, cost=cost)
    if campaigns and d.hardware is not None and d.hardware.again:  # today again at the end (its drift)
        campaigns.append((again_campaign(campaigns[0][0]), campaigns[0][1]))
        seconds += estimate_seconds(expanded.with_setting(settings[0]), plan.protocol, cost=cost)
    return Preview(
        base, len(expanded.volumes), expanded.runs, trial_count(expanded, plan.protocol),
        seconds, cost.source,
        (min(d.budget or 0, len(expanded.runs)), d.batch) if d.type == "adaptive" else None,
        campaigns,
        expanded.duplicates, expanded.skipped, cluster.name, [(h.name, h.brick_paths) for h in cluster.servers],
        [h.name for h in cluster.clients], list(expanded.notes),
        (d.budget or MAX_BUDGET) if d.type == "search" else None)

"""What the ``runs`` commands show, read from a store: runs with their trial counts, an adaptive campaign's
design log, one run with its trials. Names the user gave that the store lacks are one ``NotFound`` line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import NotFound
from ..plan.factors import show_features
from .identity import StoredDecision, StoredRun, StoredTrial
from .store import Store


def campaign_id(store: Store, name: str) -> int:
    """The id of campaign ``name``; NotFound names the campaigns the store has."""
    c = store.campaign(name)
    if c is None:
        names = ", ".join(x.name for x in store.campaigns()) or "none"
        raise NotFound(f"no campaign {name!r} in {store.where} (campaigns: {names})")
    return c.id


@dataclass
class RunList:
    rows: list[StoredRun]
    trials: dict[int, int]  # run id -> trials stored

    def to_json(self) -> list[dict[str, Any]]:
        return [{"id": r.id, "campaign": r.campaign, "status": r.status.value, "attempts": r.attempts,
                 "regime": r.regime, "unstable": r.unstable, "features": dict(r.features), "error": r.error,
                 "error_host": r.error_host, "error_command": r.error_command, "trials": self.trials[r.id]}
                for r in self.rows]


def run_list(store: Store, campaign: str | None = None, status: str | None = None) -> RunList:
    cid = campaign_id(store, campaign) if campaign is not None else None
    rows = [r for r in store.runs(cid) if status is None or r.status == status]
    per_run = store.trial_counts(cid)
    return RunList(rows, {r.id: per_run.get(r.id, 0) for r in rows})


@dataclass
class DesignLog:
    campaign: str
    entries: list[StoredDecision]
    labels: dict[str, str]  # config hash -> the run's features, readable

    def to_json(self) -> list[dict[str, Any]]:
        return [{"round": e.round, "config_hash": e.config_hash, "reason": e.reason,
                 "figures": {k: v for k, v in e.figures.items() if k != "predictions"}} for e in self.entries]


def design_log(store: Store, campaign: str) -> DesignLog:
    cid = campaign_id(store, campaign)
    log = store.design_log(cid)
    if not log:
        raise NotFound(f"campaign {campaign} has no design log (it did not use an adaptive design)")
    return DesignLog(campaign, log, {r.config_hash: show_features(r.features) for r in store.runs(cid)})


@dataclass
class RunDetail:
    run: StoredRun
    trials: list[StoredTrial]
    raw: str | None  # the raw output of the trial asked for


def run_detail(store: Store, run_id: int, raw_trial: int | None = None) -> RunDetail:
    run = store.run(run_id)
    if run is None:
        raise NotFound(f"no run {run_id} in {store.where}")
    trials = store.trials(run_id)
    raw = None
    if raw_trial is not None:
        match = [t for t in trials if t.idx == raw_trial]
        if not match:
            raise NotFound(f"run {run_id} has no trial {raw_trial} (trials: "
                           f"{', '.join(str(t.idx) for t in trials)})")
        raw = store.raw_output(match[0].id, "iozone")
    return RunDetail(run, trials, raw)

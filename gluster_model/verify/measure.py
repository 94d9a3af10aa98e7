"""Measuring a question: its runs collected as campaigns of their own (resumable, never pooled into training
data), and a verification rebuilt from a store that already measured it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.identity import Purpose, StoredCampaign
from ..errors import GlmodelError
from ..plan.file import PlanFile
from ..predict.scenarios import Question
from .build import _metrics, prepare, trained_plan, targets
from .compare import Verification, compare
from ..campaign.plan_run import run_plan
from ..config.cluster import cluster_from_data
from ..remote.executor import SSHExecutor
from ..dataset import trial_frame
from ..store import open_store

if TYPE_CHECKING:
    import pandas as pd

    from ..campaign.progress import PlanReporter
    from ..config.cluster import ClusterSpec
    from ..model.artifact import ModelFile
    from ..store.store import Store


def verify(cluster: ClusterSpec, mf: ModelFile, q: Question, plan: PlanFile, store: str | Store, *,
           metrics: Sequence[str] | None = None, level: float | None = None, fail_fast: bool = False,
           reporter: PlanReporter | None = None) -> Verification:
    """Measure every buildable scenario of ``q`` on ``cluster`` and compare with ``mf``'s predictions.

    ``store`` is an open store or a store's name (opened here, created if new); an SSH session to the cluster
    is opened only when there is something to measure. Every refusal (a scenario the cluster cannot build, a
    model input verify cannot set, a metric the plan does not measure) comes before either is opened.
    """
    from contextlib import ExitStack


    work = prepare(cluster, mf, q, plan, metrics)
    asked, found, vplan, base, expanded, names = (work.metrics, work.targets, work.plan, work.base, work.expanded,
                                                  work.campaigns)
    runs = expanded.runs
    with ExitStack() as stack:
        if runs:  # every host reached before the store is opened: one that cannot be stops it with nothing written
            ex = stack.enter_context(SSHExecutor(cluster))
            ex.reach_all()
        st = stack.enter_context(open_store(store)) if isinstance(store, str) else store
        if runs:
            run_plan(ex, vplan, expanded, st, base=base, fail_fast=fail_fast, reporter=reporter,
                     purpose=Purpose.VERIFICATION)
        frame = measured_frame(st, names)
    return compare(mf, q, found, frame, asked, level, plan=plan.name, campaigns=names, clusters=[cluster.name])


def measured_frame(store: Store, campaigns: Sequence[str]) -> pd.DataFrame:
    import pandas as pd


    parts = [trial_frame(store, c) for c in campaigns]
    parts = [p for p in parts if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


def from_store(store: Store, mf: ModelFile, q: Question) -> Verification | None:
    """The verification of ``q`` that `glmodel verify` already measured into ``store``, rebuilt from its
    campaigns (each records its plan and cluster), or None when no verification campaign measured this question."""
    groups: dict[str, list[StoredCampaign]] = {}
    for c in store.campaigns():
        if c.purpose is Purpose.VERIFICATION:
            groups.setdefault(c.plan_name, []).append(c)
    for plan_name, camps in groups.items():
        try:
            plan = PlanFile.model_validate(camps[0].plan)
            # a campaign recorded before clusters said whether they were labs: a lab's if any had a setting; a
            # cluster that is no lab and had a setting built it by emulation
            set_any = any(c.setting for c in camps)
            on_lab = bool(camps[0].cluster.get("lab", set_any))
            cluster = stored_cluster(camps[0].cluster, on_lab, emulated=set_any and not on_lab)
            metrics = _metrics(mf, plan, None)
            found = targets(mf, q, plan, cluster, metrics)
        except (GlmodelError, ValueError, KeyError, TypeError):
            continue  # verification of another question or model
        names = [c.name for c in camps]
        frame = measured_frame(store, names)
        hashes = set(frame["config_hash"]) if not frame.empty else set()
        if not any(t.run is not None and t.run.config_hash in hashes for t in found):
            continue
        return compare(mf, q, found, frame, metrics, None, plan=trained_plan(plan_name),
                       campaigns=names, clusters=[c.cluster_name for c in camps])
    return None


def stored_cluster(record: Mapping[str, Any], on_lab: bool, emulated: bool = False) -> ClusterSpec:
    """A cluster as a campaign recorded it (hosts, roles, bricks; no SSH settings), enough to rebuild runs; a
    lab's, or (``emulated``) one whose hardware settings were emulated on its hosts."""
    hosts = record["hosts"]
    data: dict[str, Any] = {"name": record["name"],
                            "servers": [{"host": h["address"], "brick_paths": list(h["brick_paths"])}
                                        for h in hosts if "server" in h["roles"]],
                            "clients": [{"host": h["address"]} for h in hosts if "client" in h["roles"]]}
    if on_lab:
        data["lab"] = {"state_dir": "."}
    elif emulated:
        data["emulation"] = {"allow": True}
    return cluster_from_data(data, "stored cluster", Path("."))

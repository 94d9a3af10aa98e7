"""What the report reads from the store: campaigns with their study, hosts, baselines, and trials in long form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...bench.workload import LATER_SETTINGS
from ...plan.factors import show_features
from ...store.identity import StoredHost
from ...store.store import Store

if TYPE_CHECKING:
    import pandas as pd



@dataclass
class CampaignView:
    name: str
    plan_name: str
    study: str | None
    cluster: str
    version: str
    created: Any
    runs: dict[str, int] = field(default_factory=dict)   # status -> count
    trials: int = 0
    hosts: list[StoredHost] = field(default_factory=list)
    description: str = ""


def campaigns(store: Store, names: list[str] | None = None) -> list[CampaignView]:
    out = []
    for c in store.campaigns():
        if names and c.name not in names:
            continue
        plan = c.plan or {}
        counts = store.counts(c.id)
        view = CampaignView(c.name, c.plan_name, plan.get("study"), c.cluster_name, c.glmodel_version,
                            c.created_at, {k[5:]: v for k, v in counts.items() if k.startswith("runs_")},
                            counts["trials"], store.hosts(c.id), plan.get("description", ""))
        out.append(view)
    return out


def study_trials(store: Store, campaign: str | None = None) -> pd.DataFrame:
    """One row per (trial, metric) with the run's features, engine, target, degraded, cache and a label."""
    import pandas as pd

    rows = store.trial_table(campaign)
    for r in rows:
        feats = r.pop("features") or {}
        for key, default in LATER_SETTINGS.items():  # a run stored without one had the default
            r[key] = feats.get(key, default)
        r["label"] = show_features(feats)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    for col in ("warmup", "outlier", "degraded"):
        frame[col] = frame[col].astype(bool)
    return frame


def baselines(store: Store, names: list[str]) -> pd.DataFrame:
    """Measured baselines of the given campaigns: network in Gbit/s per (client, server, direction), disk in
    MB/s per (server, brick, test)."""
    import pandas as pd

    rows = [r for r in store.baseline_table() if r["campaign"] in names and r["value"] is not None]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    frame["figure"] = [v / 1e9 if u == "bit/s" else v / 1e6 if u == "B/s" else v
                       for v, u in zip(frame["value"], frame["unit"])]
    frame["figure_unit"] = [{"bit/s": "Gbit/s", "B/s": "MB/s"}.get(u, u) for u in frame["unit"]]
    return frame.drop(columns=["value", "unit"])

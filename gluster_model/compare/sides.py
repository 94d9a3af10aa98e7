"""The two sides of a comparison, read from stores: a campaign (or the last N of a plan, pooled) with its
measured trials grouped into runs, and the hardware its baselines measured.

``--against`` names the other side: a campaign of the same store, ``last`` (the campaign of the same plan and
cluster before this one), ``last:N`` (the N before it, pooled: each campaign's run of a configuration is one run
more of it), or another store (a path or URL; ``--against-campaign`` picks its campaign, else its latest).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import GlmodelError
from ..store.identity import Purpose

if TYPE_CHECKING:
    import pandas as pd

    from ..store.store import Store

# The measured inputs a comparison holds both sides to: a difference beyond the tolerance may be why they differ.
HARDWARE = ("network_gbps", "network_rtt_ms", "disk_read_mbps", "disk_write_mbps", "disk_randread_iops",
            "disk_randwrite_iops", "cpu_score", "client_ram_gb")
_LAST = re.compile(r"^last(?::(\d+))?$")


class MismatchError(GlmodelError):
    """The two sides cannot be compared as given (a usage error: exit 2)."""

    cli_status = 2


@dataclass
class Side:
    """One side: where it was read, its campaigns, its plan and cluster, its measured trials (warm-ups and
    flagged trials left out), the medians of its measured hardware, and the store's schema version."""

    store: str
    campaigns: list[str]
    plan: str
    cluster: str
    frame: pd.DataFrame
    schema: int
    hardware: dict[str, float] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.campaigns[0] if len(self.campaigns) == 1 else f"the last {len(self.campaigns)} campaigns of {self.plan}"

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "campaigns": self.campaigns, "plan": self.plan, "cluster": self.cluster,
                "schema": self.schema, "trials": int(len(self.frame)), "hardware": self.hardware}


def _choosable(store: Store) -> list[dict[str, Any]]:
    """The store's campaigns a comparison can take, oldest first (verification campaigns check a model, they
    measure no state of the cluster of their own)."""
    return [c for c in store.campaigns() if c["purpose"] != Purpose.VERIFICATION.value]


def _latest(store: Store, option: str) -> dict[str, Any]:
    camps = _choosable(store)
    if not camps:
        raise MismatchError(f"{option}: {store.where} holds no campaign to compare")
    return camps[-1]


def _named(store: Store, name: str, option: str) -> dict[str, Any]:
    found = store.campaign(name)
    if found is None:
        have = ", ".join(c["name"] for c in _choosable(store)[-8:]) or "none"
        raise MismatchError(f"{option} {name}: no such campaign in {store.where} (latest ones: {have})")
    return found


def read_side(store: Store, campaigns: list[dict[str, Any]]) -> Side:
    """The trials of ``campaigns`` (one store) as one side."""
    import pandas as pd

    from ..dataset import trial_frame

    parts = [trial_frame(store, str(c["name"])) for c in campaigns]
    frame = pd.concat([p for p in parts if not p.empty], ignore_index=True) if any(not p.empty for p in parts) \
        else pd.DataFrame()
    hardware: dict[str, float] = {}
    for col in HARDWARE:
        if col in frame and frame[col].notna().any():
            hardware[col] = float(statistics.median(frame[col].dropna().astype(float)))
    first = campaigns[0]
    return Side(store.where, [str(c["name"]) for c in campaigns], str(first["plan_name"]), str(first["cluster_name"]),
                frame, store.version, hardware)


def this_side(store: Store, campaign: str | None, option: str = "--campaign") -> dict[str, Any]:
    """The campaign named, else the store's latest."""
    return _named(store, campaign, option) if campaign else _latest(store, "--store")


def history(store: Store, current: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """The ``n`` campaigns of the same plan, cluster and hardware setting recorded before ``current`` (newest
    last); a plan's other settings and its drift repeats are not its history."""
    before = [c for c in _choosable(store) if c["id"] < current["id"] and c["plan_name"] == current["plan_name"]
              and c["cluster_name"] == current["cluster_name"] and (c.get("setting") or {}) ==
              (current.get("setting") or {}) and not c.get("again_of")]
    if not before:
        raise MismatchError(f"--against last: {store.where} holds no campaign of plan {current['plan_name']} on "
                            f"{current['cluster_name']} at the same setting before {current['name']}")
    if len(before) < n:
        raise MismatchError(f"--against last:{n}: {store.where} holds {len(before)} earlier campaign(s) of plan "
                            f"{current['plan_name']} on {current['cluster_name']}, not {n}")
    return before[-n:]


def parse_against(text: str) -> int | None:
    """'last' -> 1, 'last:3' -> 3, anything else None (a campaign or a store)."""
    m = _LAST.match(text.strip())
    if m is None:
        return None
    n = int(m.group(1) or 1)
    if n < 1:
        raise MismatchError(f"--against {text}: give last or last:N with N at least 1")
    return n


def looks_like_store(text: str) -> bool:
    """A database URL, or a path to a file that exists."""
    return "://" in text or Path(text).is_file()

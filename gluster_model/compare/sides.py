"""The two sides of a comparison, read from stores: a campaign (or the last N of a plan, pooled) with its
measured trials grouped into runs, and the hardware its baselines measured.

``--against`` names the other side: a campaign of the same store, ``last`` (the campaign of the same plan and
cluster before this one), ``last:N`` (the N before it, pooled: each campaign's run of a configuration is one run
more of it), another store (a path or URL; ``--against-campaign`` picks its campaign, else its latest), or
``sides`` (an interleaved plan's two sides: the looks the store records as side A of one comparison against
those of side B, a configuration of B matched to A's with the options that tell the sides apart left out).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import GlmodelError
from ..hardware.settings import MEASURED_INPUTS
from ..plan.factors import show_features
from ..store.identity import Purpose, StoredCampaign

if TYPE_CHECKING:
    import pandas as pd

    from ..store.store import Store

# The measured inputs a comparison holds both sides to: a difference beyond the tolerance may be why they differ.
HARDWARE = MEASURED_INPUTS
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
    title: str | None = None  # what the side is, where its campaigns alone do not say (an interleaved side)

    @property
    def label(self) -> str:
        if self.title:
            return self.title
        return self.campaigns[0] if len(self.campaigns) == 1 else f"the last {len(self.campaigns)} campaigns of {self.plan}"

    def to_json(self) -> dict[str, Any]:
        return {"store": self.store, "campaigns": self.campaigns, "plan": self.plan, "cluster": self.cluster,
                "schema": self.schema, "trials": int(len(self.frame)), "hardware": self.hardware}


def _choosable(store: Store) -> list[StoredCampaign]:
    """The store's campaigns a comparison can take, oldest first (verification campaigns check a model, they
    measure no state of the cluster of their own)."""
    return [c for c in store.campaigns() if c.purpose is not Purpose.VERIFICATION]


def _latest(store: Store, option: str) -> StoredCampaign:
    camps = _choosable(store)
    if not camps:
        raise MismatchError(f"{option}: {store.where} holds no campaign to compare")
    return camps[-1]


def _named(store: Store, name: str, option: str) -> StoredCampaign:
    found = store.campaign(name)
    if found is None:
        have = ", ".join(c.name for c in _choosable(store)[-8:]) or "none"
        raise MismatchError(f"{option} {name}: no such campaign in {store.where} (latest ones: {have})")
    return found


def read_side(store: Store, campaigns: list[StoredCampaign]) -> Side:
    """The trials of ``campaigns`` (one store) as one side."""
    import pandas as pd

    from ..dataset import trial_frame

    parts = [trial_frame(store, c.name) for c in campaigns]
    frame = pd.concat([p for p in parts if not p.empty], ignore_index=True) if any(not p.empty for p in parts) \
        else pd.DataFrame()
    hardware: dict[str, float] = {}
    for col in HARDWARE:
        if col in frame and frame[col].notna().any():
            hardware[col] = float(statistics.median(frame[col].dropna().astype(float)))
    first = campaigns[0]
    return Side(store.where, [c.name for c in campaigns], first.plan_name, first.cluster_name,
                frame, store.version, hardware)


def this_side(store: Store, campaign: str | None, option: str = "--campaign") -> StoredCampaign:
    """The campaign named, else the store's latest."""
    return _named(store, campaign, option) if campaign else _latest(store, "--store")


def history(store: Store, current: StoredCampaign, n: int) -> list[StoredCampaign]:
    """The ``n`` campaigns of the same plan, cluster and hardware setting recorded before ``current`` (newest
    last); a plan's other settings, its drift repeats and the other side of a comparison are not its history."""
    before = [c for c in _choosable(store) if c.id < current.id and c.plan_name == current.plan_name
              and c.cluster_name == current.cluster_name and c.setting == current.setting
              and not c.again_of and c.side == current.side]
    if not before:
        raise MismatchError(f"--against last: {store.where} holds no campaign of plan {current.plan_name} on "
                            f"{current.cluster_name} at the same setting before {current.name}")
    if len(before) < n:
        raise MismatchError(f"--against last:{n}: {store.where} holds {len(before)} earlier campaign(s) of plan "
                            f"{current.plan_name} on {current.cluster_name}, not {n}")
    return before[-n:]


def interleaved(store: Store, campaign: str | None) -> tuple[Side, Side, list[str]]:
    """Side A and side B of the interleaved comparison ``campaign`` belongs to (one of its looks, or the
    comparison's own name; the store's latest campaign by default), B's configurations renamed to their partners
    on side A, and the factors that tell the sides apart. The looks are found by the store's ``comparison``,
    ``side`` and ``look`` columns, never by their names."""
    camps = _choosable(store)
    if campaign and store.campaign(campaign) is None and any(c.comparison == campaign for c in camps):
        base = campaign  # the comparison's name: no campaign of its own, its looks are x.A1 ...
    else:
        chosen = this_side(store, campaign)
        base = chosen.comparison or chosen.name
    looks = {side: sorted((c for c in camps if c.comparison == base and c.side == side),
                          key=lambda c: c.look.look if c.look else 0) for side in "AB"}
    if not looks["A"] or not looks["B"]:
        have = ", ".join(c.name for c in looks["A"] + looks["B"]) or "none"
        raise MismatchError(f"--against sides: {store.where} holds no interleaved comparison {base} with both "
                            f"sides measured (its looks: {have}); collect a plan whose design names `sides`")
    a, b = read_side(store, looks["A"]), read_side(store, looks["B"])
    runs = {side: [r for c in looks[side] for r in store.runs(c.id)] for side in "AB"}  # each read once
    features = {side: [dict(r.features) for r in runs[side]] for side in "AB"}
    keys = {k for f in features["A"] + features["B"] for k in f}
    apart = sorted(k for k in keys if not {str(f.get(k)) for f in features["A"]} &
                   {str(f.get(k)) for f in features["B"]})
    if not apart:
        raise MismatchError(f"--against sides: the two sides of {base} ran the same configurations; nothing tells "
                            "them apart")
    for side, label in ((a, "A"), (b, "B")):
        shown = show_features({k: features[label][0][k] for k in apart if k in features[label][0]})
        side.title = f"side {label} ({shown}; {', '.join(side.campaigns)})"

    def key(f: dict[str, Any]) -> str:
        return repr(sorted((k, str(v)) for k, v in f.items() if k not in apart))

    by_key = {key(dict(r.features)): r.config_hash for r in runs["A"]}
    partner = {r.config_hash: by_key.get(key(dict(r.features)), r.config_hash) for r in runs["B"]}
    if not b.frame.empty:
        b.frame = b.frame.assign(config_hash=b.frame["config_hash"].map(lambda h: partner.get(str(h), h)))
    return a, b, apart


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

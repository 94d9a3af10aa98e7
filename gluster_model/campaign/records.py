"""A campaign's records in the store: its name, its registration with plan and cluster, which runs are done, and
the key that says which hardware its baselines describe."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import __version__
from ..config.cluster import ClusterSpec
from ..hardware.facts import HostFacts
from ..hardware.settings import baselines_moved_by
from ..plan.factors import digest
from ..plan.file import Expanded, PlanFile
from ..store.identity import CampaignInfo, Look, Purpose, RunStatus, SearchStep, Setting
from ..store.store import Store

LabSetting = Setting


def campaign_name(plan: PlanFile, cluster: ClusterSpec) -> str:
    return f"{plan.name}@{cluster.name}"


def setting_campaign(base: str, setting: LabSetting) -> str:
    """Each lab hardware setting is a campaign of its own: its own host facts, baselines and hardware key.

    'hw@lab' + (('link', '1gbit'), ('brick_backing', 'xfs')) -> 'hw@lab:link=1gbit,brick_backing=xfs'
    (no spaces or brackets: the name is typed in shells and shown in rich tables)
    """
    return base if not setting else f"{base}:{','.join(f'{k}={v}' for k, v in setting)}"


def again_campaign(name: str) -> str:
    """The name of the campaign that measures campaign ``name``'s setting again at the plan's end (its drift;
    the store records which campaign it repeats, ``again_of``): 'hw@c:link=50%' -> 'hw@c:link=50%,again'."""
    return f"{name}{',' if ':' in name.partition('@')[2] else ':'}again"


def ensure_campaign(store: Store, cluster: ClusterSpec, plan: PlanFile, name: str, *,
                    purpose: Purpose = Purpose.TRAINING, setting: LabSetting = (), again_of: str | None = None,
                    look: Look | None = None, step: SearchStep | None = None) -> int:
    """The campaign's id in the store, recorded with its plan, cluster, purpose, hardware setting, comparison
    look and search round if it is new."""
    plan_json = plan.model_dump(mode="json")
    return store.ensure_campaign(name, plan.name, digest(plan_json), plan_json, cluster.name,
                                 cluster_record(cluster), __version__,
                                 CampaignInfo(purpose, setting, again_of, cluster.name, look, step))


def runs_done(store: Store, campaign: str, expanded: Expanded) -> int:
    """How many of ``expanded``'s runs the store already has done in ``campaign``."""
    existing = store.campaign(campaign)
    if existing is None:
        return 0
    planned = {r.config_hash for r in expanded.runs}
    return sum(1 for r in store.runs(existing.id) if r.status == RunStatus.DONE and r.config_hash in planned)


def cluster_record(cluster: ClusterSpec) -> dict[str, Any]:
    """The cluster as stored: hosts, roles, bricks; no SSH settings (identity paths, users) at all."""
    return {"name": cluster.name, "lab": cluster.lab_dir is not None, "hosts": [
        {"address": h.address, "name": h.name, "roles": sorted(h.roles), "brick_paths": list(h.brick_paths)}
        for h in cluster.hosts]}


def hardware_key(cluster: ClusterSpec, facts: Mapping[str, HostFacts], setting: LabSetting = ()) -> str:
    """Same key = same hosts with the same hardware facts (and lab setting), so earlier baselines still describe
    them. The lab's link rate is in no host fact, so the setting is part of the key. The key of given facts is
    the one every release made of them (a store's baselines stay found): its parts and their order are fixed."""
    hosts = []
    for address, f in sorted(facts.items()):
        bricks = f.bricks or {}
        fstypes = sorted((p, b.fstype) for p, b in bricks.items())
        limits = {"cpu_quota_cores": f.cpu_quota_cores,
                  "throttle": sorted((p, sorted(b.throttle.items())) for p, b in bricks.items() if b.throttle)}
        # Limits only where there are any, so a host without them keeps the key it had before they were facts.
        hosts.append([address, f.cpu_model, f.cpus, f.ram_bytes, f.nic, f.nic_speed_mbps, f.nic_mtu, fstypes,
                      *([limits] if any(limits.values()) else [])])
    return digest({"cluster": cluster.name, "hosts": hosts, **({"lab": dict(setting)} if setting else {})})


BASELINE_KINDS = ("network", "disk")


def baseline_key(kind: str, cluster: ClusterSpec, facts: Mapping[str, HostFacts], setting: LabSetting = (),
                 how: Mapping[str, Any] | None = None) -> str:
    """Same key = the same hosts, with the facts and setting knobs that can move a ``kind`` baseline's figures
    (``network``: iperf3 and round trips; ``disk``: fio) the same, measured the same way (``how``: the plan's
    iperf3 or fio settings), so a baseline of that kind measured under it still describes them when only other
    knobs changed (a setting that moves the disks keeps the network's baseline). Facts of both kinds: the CPU
    and its limit (each measurement's processes run on it); the network's: the NIC, its speed and MTU; the
    disk's: the RAM the page cache can hold (fio's buffered fallback), the bricks' filesystems and throttles.
    The knobs of each kind: ``Knob.baselines``."""
    if kind not in BASELINE_KINDS:
        raise ValueError(f"{kind!r} is not a baseline kind ({', '.join(BASELINE_KINDS)})")
    hosts: list[list[Any]] = []
    for address, f in sorted(facts.items()):
        row: list[Any] = [address, f.cpu_model, f.cpus, f.cpu_quota_cores]
        if kind == "network":
            row += [f.nic, f.nic_speed_mbps, f.nic_mtu]
        else:
            bricks = f.bricks or {}
            row += [f.ram_bytes, sorted((p, b.fstype, sorted((b.throttle or {}).items())) for p, b in bricks.items())]
        hosts.append(row)
    return digest({"kind": kind, "cluster": cluster.name, "hosts": hosts, "setting": knobs_moving(kind, setting),
                   "how": dict(how or {})})


def knobs_moving(kind: str, setting: LabSetting) -> dict[str, str]:
    """The knobs of ``setting`` that can move a ``kind`` baseline's figures (``Knob.baselines``), with their
    values."""
    return {k: v for k, v in setting if kind in baselines_moved_by(k)}


def order_coin(name: str) -> bool:
    """A fair coin drawn from a campaign's name: which of two arms goes first (an interleaved comparison's first
    pair, a search's first confirmation look). Drawn from the name, so a resumed plan keeps its order."""
    import hashlib

    return hashlib.sha256(name.encode()).digest()[0] % 2 == 1


def interleaved_order(base: str, looks: int) -> list[tuple[str, int]]:
    """The campaigns of an interleaved comparison in the order they run: ``looks`` a side, in alternating pairs
    (A B, B A, A B, ...), the first pair's order a coin drawn from the campaign's name (so a resumed plan keeps
    it, and neither side is always measured first): [("A", 1), ("B", 1), ("B", 2), ("A", 2)]."""
    first = "BA" if order_coin(base) else "AB"
    out: list[tuple[str, int]] = []
    for k in range(looks):
        pair = first if k % 2 == 0 else first[::-1]
        out.extend((side, k + 1) for side in pair)
    return out


def side_campaign(look: Look) -> str:
    """``<base>.A1``: side A's first look of an interleaved comparison (a label: the store keeps the look in
    columns, and nothing reads it back out of the name)."""
    return f"{look.comparison}.{look.side}{look.look}"

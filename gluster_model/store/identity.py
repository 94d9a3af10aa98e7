"""What a campaign is for and what it measured at, as data: its purpose, its hardware setting, the campaign it
measures again, the comparison side it is (an interleaved plan's look) and its cluster. The store keeps them in
columns of ``campaigns``; every exported row carries its purpose, setting, drift partner and cluster.

A campaign's name is a label for people. Nothing reads meaning back out of it, except ``legacy_info`` and
``legacy_look``: the readers of the names older glmodel releases wrote, used only to fill these columns for a
store migrated from an older schema (or read as it is) and for a table exported before the columns existed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

from ..bench.engine import Measured
from ..hardware.facts import HostFacts
from ..plan.factors import Level


class Purpose(str, Enum):
    """Why a campaign was measured; a model is fitted on training, search and comparison campaigns, never on the
    verification campaigns that check it."""

    TRAINING = "training"          # a plan's runs for a model (and a hardware plan's settings)
    VERIFICATION = "verification"  # `glmodel verify`: runs measured to check a model's answer
    SEARCH = "search"              # an option search's screening and confirmations
    COMPARISON = "comparison"      # one side of a before/after comparison

    @classmethod
    def parse(cls, text: str, where: str = "purpose") -> Purpose:
        try:
            return cls(text)
        except ValueError:
            raise ValueError(f"{where}: {text!r} is not a campaign purpose (use "
                             f"{', '.join(p.value for p in cls)})") from None


# A hardware setting: (knob, canonical value text) pairs in the plan's order, () at the cluster's own hardware.
Setting = tuple[tuple[str, str], ...]


SIDES = ("A", "B")  # an interleaved comparison's sides: A the change's before-level, B its after-level


@dataclass(frozen=True)
class Look:
    """One campaign of an interleaved comparison: which comparison, which side, which look at that side."""

    comparison: str  # what the comparison's looks share (the plan's campaign base): the store's key for them
    side: str        # "A" or "B"
    look: int        # 1, 2, ...: the order of this side's campaigns

    def __post_init__(self) -> None:
        if self.side not in SIDES or self.look < 1 or not self.comparison:
            raise ValueError(f"a comparison look needs a name, side A or B and a look from 1 (got "
                             f"{self.comparison!r}, {self.side!r}, {self.look!r})")


class SearchRound(str, Enum):
    """The round of an option search a campaign holds (``campaign.search``)."""

    SCREENING = "screening"  # the defaults and each single change, then the clear gains together
    MORE = "more"            # more trials: the defaults, and the changes that looked faster but were not yet clear
    CONFIRM = "confirm"      # one look of the confirmation: the defaults and the best, measured again


@dataclass(frozen=True)
class SearchStep:
    """One campaign of an option search: which search (its screening campaign's name, the store's key for its
    campaigns), which round, and for a confirmation which look (1, 2, ...; 0 for the other rounds)."""

    search: str
    round: SearchRound
    look: int = 0

    def __post_init__(self) -> None:
        if not self.search or (self.round is SearchRound.CONFIRM) != (self.look >= 1) or self.look < 0:
            raise ValueError(f"a search step needs the search's name, and a look from 1 for a confirmation only "
                             f"(got {self.search!r}, {self.round.value}, look {self.look})")


@dataclass(frozen=True)
class CampaignInfo:
    """A campaign's meaning, as the store records it beside its name."""

    purpose: Purpose = Purpose.TRAINING
    setting: Setting = ()
    again_of: str | None = None  # the campaign whose setting and runs this one measured again (its drift)
    cluster: str = ""
    look: Look | None = None     # the side of an interleaved comparison this campaign measured (schema 6)
    step: SearchStep | None = None  # the round of an option search this campaign holds (schema 7)

    def setting_dict(self) -> dict[str, str]:
        return dict(self.setting)

    def look_columns(self) -> dict[str, Any]:
        """The ``campaigns`` columns of its look and search step: comparison, side, search, search_round (None
        where they do not apply) and look (a comparison's look, or a search confirmation's)."""
        lk, st = self.look, self.step
        return {"comparison": lk.comparison if lk else None, "side": lk.side if lk else None,
                "look": lk.look if lk else (st.look or None) if st else None,
                "search": st.search if st else None, "search_round": st.round.value if st else None}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> CampaignInfo:
        """From a ``campaigns`` row (or a trial table row carrying the same columns)."""
        setting = row.get("setting") or {}
        look = Look(str(row["comparison"]), str(row["side"]), int(row["look"])) if row.get("comparison") else None
        step = SearchStep(str(row["search"]), SearchRound(str(row["search_round"])), int(row.get("look") or 0)) \
            if row.get("search") else None
        return cls(Purpose.parse(str(row.get("purpose") or Purpose.TRAINING.value)),
                   tuple((str(k), str(v)) for k, v in dict(setting).items()),
                   str(row["again_of"]) if row.get("again_of") else None, str(row.get("cluster_name") or ""), look,
                   step)


@dataclass(frozen=True)
class StoredBaseline(Measured):
    """One baseline as the store kept it: the measurement, the hardware it describes (its key) and the campaign
    that measured it (None once that campaign was deleted: the hardware's figures stay)."""

    id: int = 0
    hardware_key: str = ""
    campaign_id: int | None = None
    measured_at: datetime | None = None


@dataclass(frozen=True)
class StoredHost:
    """One host of a campaign as the store kept it: its address, name and roles in the cluster, and its facts."""

    address: str
    name: str
    roles: list[str]
    facts: HostFacts


@dataclass(frozen=True)
class StoredCampaign:
    """A campaign as the store keeps it: its id and name, the plan and cluster it was measured with (as
    recorded), the key of the hardware its baselines describe, and what it is for (``info``)."""

    id: int
    name: str
    plan_name: str
    plan_hash: str
    plan: Mapping[str, Any]
    cluster_name: str
    cluster: Mapping[str, Any]
    glmodel_version: str
    created_at: datetime | None
    updated_at: datetime | None
    hardware_key: str | None
    info: CampaignInfo

    @property
    def purpose(self) -> Purpose:
        return self.info.purpose

    @property
    def setting(self) -> dict[str, str]:
        return self.info.setting_dict()

    @property
    def again_of(self) -> str | None:
        return self.info.again_of

    @property
    def look(self) -> Look | None:
        return self.info.look

    @property
    def step(self) -> SearchStep | None:
        """The round of an option search this campaign holds (None: none)."""
        return self.info.step

    @property
    def comparison(self) -> str | None:
        """The interleaved comparison this campaign is a look of (None: none)."""
        return self.info.look.comparison if self.info.look else None

    @property
    def side(self) -> str | None:
        return self.info.look.side if self.info.look else None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StoredCampaign:
        """From a ``campaigns`` row (an older schema's with its missing columns filled: ``Store._with_info``)."""
        plan, cluster = row.get("plan"), row.get("cluster")
        return cls(int(row["id"]), str(row["name"]), str(row.get("plan_name") or ""), str(row.get("plan_hash") or ""),
                   plan if isinstance(plan, dict) else {}, str(row.get("cluster_name") or ""),
                   cluster if isinstance(cluster, dict) else {}, str(row.get("glmodel_version") or ""),
                   row.get("created_at"), row.get("updated_at"),
                   str(row["hardware_key"]) if row.get("hardware_key") else None,
                   CampaignInfo.from_row(row))


@dataclass(frozen=True)
class StoredDecision:
    """One entry of an adaptive or search campaign's design log: a chosen run (its configuration hash) with the
    reason, or the round's summary (``config_hash`` None) with its figures."""

    round: int
    config_hash: str | None
    reason: str
    figures: Mapping[str, Any]
    created_at: datetime | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StoredDecision:
        figures = row.get("figures")
        return cls(int(row["round"]), str(row["config_hash"]) if row.get("config_hash") else None,
                   str(row["reason"]), figures if isinstance(figures, dict) else {}, row.get("created_at"))


class RunStatus(str, Enum):
    """Where a run stands: planned, being measured (or killed while it was), measured, or given up on."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class StoredRun:
    """One run as the store keeps it: its campaign, identity (configuration hash, volume), state, the features it
    was measured at and its effective configuration, and the failure that ended it (host and command) if one did."""

    id: int
    campaign_id: int
    campaign: str  # the campaign's name
    seq: int
    config_hash: str
    volume_key: str
    status: RunStatus
    attempts: int
    unstable: bool
    regime: str | None  # cached | uncached | direct, once measured
    features: Mapping[str, Level]  # the plan's factors as the run set them (``RunSpec.features``)
    config: Mapping[str, Any]      # the effective configuration, as recorded
    error: str | None = None
    error_host: str | None = None
    error_command: str | None = None
    started_at: datetime | None = None
    finished_at: datetime | None = None

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> StoredRun:
        """From a ``runs`` row joined with its campaign's name (``campaign``)."""
        features, config = row.get("features"), row.get("config")
        return cls(int(row["id"]), int(row["campaign_id"]), str(row.get("campaign") or ""), int(row["seq"]),
                   str(row["config_hash"]), str(row["volume_key"]), RunStatus(str(row["status"])),
                   int(row.get("attempts") or 0), bool(row.get("unstable")), row.get("regime"),
                   features if isinstance(features, dict) else {}, config if isinstance(config, dict) else {},
                   row.get("error"), row.get("error_host"), row.get("error_command"), row.get("started_at"),
                   row.get("finished_at"))


@dataclass(frozen=True)
class StoredMeasurement:
    """One metric of a trial: its value in its unit, and the slowest and fastest client's where kept."""

    metric: str
    value: float
    unit: str
    min_value: float | None = None
    max_value: float | None = None


@dataclass(frozen=True)
class StoredTrial:
    """One trial as the store keeps it: its place in the run, whether it was a warm-up or flagged an outlier (and
    why), its outcome, the file size it used, its timings, the engine's argv, what could have disturbed it, and
    its measurements."""

    id: int
    run_id: int
    idx: int
    warmup: bool
    outlier: bool
    status: str  # ok | failed
    error: str | None
    file_size: int
    started_at: datetime | None
    seconds: float
    engine_seconds: float
    argv: tuple[str, ...]
    context: Mapping[str, Any] | None
    flagged_because: str | None
    measurements: tuple[StoredMeasurement, ...] = ()

    @classmethod
    def from_row(cls, row: Mapping[str, Any], measurements: tuple[StoredMeasurement, ...] = ()) -> StoredTrial:
        argv = row.get("argv")
        return cls(int(row["id"]), int(row["run_id"]), int(row["idx"]), bool(row["warmup"]), bool(row["outlier"]),
                   str(row["status"]), row.get("error"), int(row["file_size"]), row.get("started_at"),
                   float(row["seconds"]), float(row["engine_seconds"]),
                   tuple(str(a) for a in argv) if isinstance(argv, list) else (), row.get("context"),
                   row.get("flagged_because"), measurements)


SETTING_PREFIX = "setting_"  # an exported table's column per hardware knob a campaign set: setting_link, ...


def setting_columns(setting: Setting) -> dict[str, str]:
    """The exported table's columns for a campaign's setting: {'setting_link': '1gbit', ...}."""
    return {f"{SETTING_PREFIX}{k}": v for k, v in setting}


def setting_from_columns(row: Mapping[str, Any]) -> dict[str, str]:
    """A row's setting back from its ``setting_*`` columns (empty cells: knobs the campaign left alone)."""
    return {str(k)[len(SETTING_PREFIX):]: str(v) for k, v in row.items()
            if str(k).startswith(SETTING_PREFIX) and v is not None and v == v and str(v) != ""}


# -- names as releases before schema version 5 wrote them ----------------------------------------------------
_LEGACY_VERIFY = "verify."  # plan name prefix of a verification campaign
_LEGACY_AGAIN = "again"     # last part of a drift campaign's setting


def legacy_info(name: str, plan_name: str = "", plan: Mapping[str, Any] | None = None) -> CampaignInfo:
    """A campaign's meaning as older releases encoded it in its name ('plan@cluster:knob=value,...,again', plan
    names 'verify.<plan>') and its plan (a search design). Only for data written before the columns existed."""
    _, _, where = name.partition("@")
    cluster, colon, tail = where.partition(":")
    parts = [p for p in tail.split(",") if p] if colon else []
    again = bool(parts) and parts[-1] == _LEGACY_AGAIN
    setting = tuple((k, v) for k, _, v in (p.partition("=") for p in parts if p != _LEGACY_AGAIN))
    first = None
    if again:
        first = f"{name.partition('@')[0]}@{cluster}" + (":" + ",".join(f"{k}={v}" for k, v in setting) if setting
                                                         else "")
    design = (plan or {}).get("design") or {}
    purpose = Purpose.VERIFICATION if plan_name.startswith(_LEGACY_VERIFY) or name.startswith(_LEGACY_VERIFY) \
        else Purpose.SEARCH if isinstance(design, Mapping) and design.get("type") == "search" else Purpose.TRAINING
    return CampaignInfo(purpose, setting, first, cluster)


# -- names as releases before schema version 6 wrote them: an interleaved look was '<base>.A1' ----------------
_LEGACY_LOOK = re.compile(r"^(?P<base>.+)\.(?P<side>[AB])(?P<look>[1-9]\d*)$")


def legacy_look(name: str, purpose: Purpose) -> Look | None:
    """The comparison look a campaign of schema 5 was, from its name (only a comparison campaign's name is read:
    a training campaign that happens to end '.A1' is none)."""
    m = _LEGACY_LOOK.match(name) if purpose is Purpose.COMPARISON else None
    return Look(m.group("base"), m.group("side"), int(m.group("look"))) if m else None


# -- names as releases before schema version 7 wrote them: a search's rounds were '<name>.more', '<name>.confirm',
# '<name>.confirm2', ... beside its screening '<name>'
_LEGACY_MORE = re.compile(r"^(?P<search>.+)\.more$")
_LEGACY_CONFIRM = re.compile(r"^(?P<search>.+)\.confirm(?P<look>[2-9]|[1-9]\d+)?$")


def legacy_step(name: str, purpose: Purpose) -> SearchStep | None:
    """The search round a campaign of schema 6 held, from its name (only a search campaign's name is read: a
    training campaign that happens to end '.more' is none)."""
    if purpose is not Purpose.SEARCH:
        return None
    if m := _LEGACY_MORE.match(name):
        return SearchStep(m.group("search"), SearchRound.MORE)
    if m := _LEGACY_CONFIRM.match(name):
        return SearchStep(m.group("search"), SearchRound.CONFIRM, int(m.group("look") or 1))
    return SearchStep(name, SearchRound.SCREENING)

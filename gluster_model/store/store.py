"""The results store: open (SQLite file or any SQLAlchemy URL), migrate, and the campaign's writes and reads.

Every trial is written in one transaction together with its measurements and raw outputs, so a crash
(kill -9 included) leaves either the whole trial or none of it. Restarting a run deletes the trials of its
unfinished attempt in the same transaction that marks it running, so a resumed campaign never holds a
duplicate trial.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, delete, event, func, insert, inspect, select, update
from sqlalchemy.exc import (ArgumentError, DatabaseError, IntegrityError, NoSuchModuleError, OperationalError,
                            SQLAlchemyError)

from ..errors import ConfigError, StoreError
from . import schema as t
from ..bench.engine import Measured
from ..hardware.facts import HostFacts
from .identity import (CampaignInfo, RunStatus, StoredBaseline, StoredCampaign, StoredDecision, StoredHost,
                       StoredMeasurement, StoredRun, StoredTrial, legacy_info, legacy_look, legacy_step)
from .migrate import current_version, migrate
from .schema import SCHEMA_VERSION
from ..processes import zombie

DEFAULT_STORE = "glmodel.db"
_FEATURE_COLUMNS = ("layout", "replica", "disperse", "redundancy", "shard", "shard_block_size", "write_behind",
                    "read_ahead", "io_cache", "quick_read", "md_cache", "cache_size", "file_size", "record_size",
                    "threads", "sync", "servers", "clients")


def now() -> datetime:
    return datetime.now(UTC)


def store_url(value: str | Path) -> str:
    """A path becomes a SQLite URL; anything with '://' is taken as a SQLAlchemy URL."""
    text = str(value)
    if "://" in text:
        return text
    return f"sqlite:///{Path(text).expanduser().resolve()}"


def redact(url: str) -> str:
    """The URL without its password, for messages and logs."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url.split("@")[-1]


@dataclass
class TrialRecord:
    idx: int
    warmup: bool
    status: str
    file_size: int
    started_at: datetime
    seconds: float
    engine_seconds: float
    argv: list[str]
    error: str | None = None
    outlier: bool = False
    measurements: list[tuple[str, float, str, float | None, float | None]] = field(default_factory=list)
    raw: dict[str, str] = field(default_factory=dict)
    context: dict[str, Any] | None = None


@dataclass(frozen=True)
class KeptBaseline:
    """A baseline a setting kept from other hardware (``Store.keep_baseline``): the name of the campaign that
    measured it (None once that campaign was deleted) and how many figures were kept."""

    campaign: str | None
    figures: int


# Columns a store read as it is (read-only, not migrated) lacks before the schema version that added them: filled
# from the legacy reading of its campaigns' names (identity.legacy_info, legacy_look, legacy_step) instead.
_INFO_SINCE = {"purpose": 5, "setting": 5, "again_of": 5, "comparison": 6, "side": 6, "look": 6, "search": 7,
               "search_round": 7}
_INFO_COLUMNS = tuple(_INFO_SINCE)


class Store:
    def __init__(self, engine: Engine, where: str, version: int = SCHEMA_VERSION) -> None:
        self.engine = engine
        self.where = where
        self.version = version  # the schema it has; below SCHEMA_VERSION only when opened read-only

    def _has(self, column: str) -> bool:
        return self.version >= _INFO_SINCE.get(column, 0)

    def _campaign_columns(self) -> list[Any]:
        return [c for c in t.campaigns.c if self._has(c.name)]

    def _with_info(self, rows: list[dict[str, Any]], name: str = "name") -> list[dict[str, Any]]:
        """Rows of a store older than version 7 with the columns they lack, as their names said then."""
        if self.version >= 7:
            return rows
        infos: dict[str, CampaignInfo] = {}
        for r in rows:
            key = str(r[name])
            if key not in infos:
                plan = r.get("plan")
                info = legacy_info(key, str(r.get("plan_name") or ""), plan if isinstance(plan, dict) else None) \
                    if self.version < 5 else CampaignInfo.from_row(r)
                if self.version < 6:
                    info = replace(info, look=legacy_look(key, info.purpose))
                infos[key] = replace(info, step=legacy_step(key, info.purpose))
            info = infos[key]
            if self.version < 5:
                r.update(purpose=info.purpose.value, setting=info.setting_dict(), again_of=info.again_of)
            r.update(info.look_columns())
        return rows

    def _records(self, rows: list[dict[str, Any]]) -> list[StoredCampaign]:
        return [StoredCampaign.from_row(r) for r in self._with_info(rows)]

    # -- plumbing -------------------------------------------------------------------------------------------
    @contextmanager
    def tx(self) -> Iterator[Connection]:
        try:
            with self.engine.begin() as conn:
                yield conn
        except DatabaseError as exc:  # locked, gone, or pages overwritten ("database disk image is malformed")
            reason = str(exc.orig).splitlines()[0] if exc.orig is not None else str(exc).splitlines()[0]
            damaged = ("" if isinstance(exc, (OperationalError, IntegrityError)) else
                       " (the file is damaged; restore it from a copy)")
            raise StoreError(f"{self.where}: {reason}{damaged}") from None

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def writing(self, what: str) -> Iterator[None]:
        """Hold the store's one writer slot while a campaign writes (``collect``, ``verify``): a second writer
        refuses in one line naming the first. A slot whose process is gone on this host (killed with -9) is
        taken over; one held from another host is kept, since this host cannot tell whether it is gone."""
        import os
        import socket

        host, pid = socket.gethostname(), os.getpid()
        for attempt in range(2):
            try:
                with self.tx() as c:
                    row = c.execute(select(t.writers).where(t.writers.c.id == 1)).mappings().first()
                    if row is not None and (row["host"] != host or (row["pid"] != pid and _alive(row["pid"]))):
                        since = row["since"].strftime("%Y-%m-%d %H:%M") if row["since"] else "?"
                        raise StoreError(
                            f"{self.where}: another glmodel is writing to this store ({row['what'][:120]}, pid "
                            f"{row['pid']} on {row['host'][:60]}, since {since}); wait until it ends, or use "
                            "another --store" + ("" if row["host"] == host else
                                                 "; if that process is gone, delete the 'writers' row"))
                    if row is not None:
                        c.execute(delete(t.writers).where(t.writers.c.id == 1))
                    c.execute(insert(t.writers).values(id=1, host=host, pid=pid, what=what[:300], since=now()))
                break
            except StoreError as exc:
                if attempt or "UNIQUE" not in str(exc) and "duplicate key" not in str(exc):
                    raise  # two writers inserting at once: the loser looks again and is refused by name
        try:
            yield
        finally:
            with self.tx() as c:
                c.execute(delete(t.writers).where((t.writers.c.id == 1) & (t.writers.c.pid == pid)
                                                  & (t.writers.c.host == host)))

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- campaigns and hosts --------------------------------------------------------------------------------
    def campaign(self, name: str) -> StoredCampaign | None:
        with self.tx() as c:
            row = c.execute(select(*self._campaign_columns()).where(t.campaigns.c.name == name)).mappings().first()
        return self._records([dict(row)])[0] if row else None

    def campaigns(self) -> list[StoredCampaign]:
        """Every campaign, oldest first."""
        with self.tx() as c:
            rows = [dict(r) for r in c.execute(select(*self._campaign_columns()).order_by(t.campaigns.c.id)).mappings()]
        return self._records(rows)

    def ensure_campaign(self, name: str, plan_name: str, plan_hash: str, plan: dict[str, Any], cluster_name: str,
                        cluster: dict[str, Any], version: str, info: CampaignInfo | None = None) -> int:
        """The campaign's id, created on first use with what it is for (``info``); a changed plan is recorded
        (its new runs get added). A name already used for a campaign of another purpose or setting is refused."""
        info = info or CampaignInfo(cluster=cluster_name)
        with self.tx() as c:
            row = c.execute(select(t.campaigns).where(t.campaigns.c.name == name)).mappings().first()
            if row is None:
                return _insert(c, t.campaigns.insert().values(
                    name=name, plan_name=plan_name, plan_hash=plan_hash, plan=plan, cluster_name=cluster_name,
                    cluster=cluster, glmodel_version=version, created_at=now(), updated_at=now(),
                    purpose=info.purpose.value, setting=info.setting_dict(), again_of=info.again_of,
                    **info.look_columns()))
            had = CampaignInfo.from_row(dict(row))
            if (had.purpose, had.setting_dict(), had.again_of, had.look, had.step) != \
                    (info.purpose, info.setting_dict(), info.again_of, info.look, info.step):
                raise StoreError(f"{self.where}: campaign {name} was measured as {had.purpose.value} at "
                                 f"{_setting_text(had)}, not {info.purpose.value} at {_setting_text(info)}; "
                                 "give this campaign another name (--campaign)")
            if row["plan_hash"] != plan_hash:
                c.execute(update(t.campaigns).where(t.campaigns.c.id == row["id"])
                          .values(plan_hash=plan_hash, plan=plan, updated_at=now()))
            return int(row["id"])

    def search_campaigns(self, search: str) -> list[StoredCampaign]:
        """The campaigns of option search ``search`` (its screening campaign's name), oldest first: each with
        its round (``info.step``)."""
        return [c for c in self.campaigns() if c.step is not None and c.step.search == search]

    def campaign_infos(self) -> dict[str, CampaignInfo]:
        """Every campaign's purpose, setting, drift partner and cluster, by name."""
        return {c.name: c.info for c in self.campaigns()}

    def set_hardware_key(self, campaign_id: int, key: str) -> None:
        with self.tx() as c:
            c.execute(update(t.campaigns).where(t.campaigns.c.id == campaign_id).values(hardware_key=key))

    def put_hosts(self, campaign_id: int, facts: Mapping[str, HostFacts]) -> None:
        """The campaign's hosts as found at its start (address -> facts), replacing any kept before."""
        with self.tx() as c:
            c.execute(delete(t.hosts).where(t.hosts.c.campaign_id == campaign_id))
            for address, f in facts.items():
                c.execute(t.hosts.insert().values(
                    campaign_id=campaign_id, address=address, name=f.name or address, roles="+".join(f.roles),
                    cpu_model=f.cpu_model, cpus=f.cpus, ram_bytes=f.ram_bytes, kernel=f.kernel, os=f.os,
                    gluster_version=f.gluster_version, nic_speed_mbps=f.nic_speed_mbps,
                    facts=_jsonable(f.record())))

    def hosts(self, campaign_id: int) -> list[StoredHost]:
        """The campaign's hosts in the order they were kept, each with its facts as a typed record."""
        with self.tx() as c:
            return [StoredHost(str(r["address"]), str(r["name"]), [x for x in str(r["roles"]).split("+") if x],
                               HostFacts.read(r["facts"]))
                    for r in c.execute(select(t.hosts).where(t.hosts.c.campaign_id == campaign_id)
                                       .order_by(t.hosts.c.id)).mappings()]

    # -- adaptive designs -----------------------------------------------------------------------------------
    def add_design_log(self, campaign_id: int, round_: int, entries: Sequence[tuple[str | None, str, dict[str, Any]]]
                       ) -> None:
        """One round's decisions in one transaction: (config hash or None for the round summary, reason, figures)."""
        with self.tx() as c:
            for config_hash, reason, figures in entries:
                c.execute(t.design_log.insert().values(campaign_id=campaign_id, round=round_, config_hash=config_hash,
                                                       reason=reason, figures=_jsonable(figures), created_at=now()))

    def design_log(self, campaign_id: int) -> list[StoredDecision]:
        """The campaign's adaptive decisions in order (none for a store from before they were kept)."""
        with self.tx() as c:
            if not inspect(c).has_table(t.design_log.name):
                return []
            rows = list(c.execute(select(t.design_log).where(t.design_log.c.campaign_id == campaign_id)
                                  .order_by(t.design_log.c.id)).mappings())
        return [StoredDecision.from_row(dict(r)) for r in rows]

    # -- baselines ------------------------------------------------------------------------------------------
    def baselines(self, hardware_key: str) -> list[StoredBaseline]:
        """Every baseline measured of the hardware ``hardware_key``, in the order they were kept (a disturbed or
        failed one with its error)."""
        columns = [col for col in t.baselines.c if col.name != "kind_key" or self.version >= 8]
        with self.tx() as c:
            rows = c.execute(select(*columns).where(t.baselines.c.hardware_key == hardware_key)
                             .order_by(t.baselines.c.id)).mappings().all()
        return [StoredBaseline(str(r["kind"]), str(r["host"]), str(r["target"]), str(r["test"]),
                               None if r["value"] is None else float(r["value"]), str(r["unit"]), r["error"],
                               self._baseline_raw(dict(r)) if r["raw"] else None, id=int(r["id"]),
                               hardware_key=str(r["hardware_key"]), campaign_id=r["campaign_id"],
                               measured_at=r["measured_at"]) for r in rows]

    def _baseline_raw(self, row: Mapping[str, Any]) -> str:
        try:
            return decompress(row["raw"])
        except zlib.error:
            raise StoreError(f"{self.where}: the raw output of baseline {row['id']} ({row['kind']} {row['test']} on "
                             f"{row['host']}) is damaged (not zlib data); restore the store from a copy") from None

    def add_baselines(self, hardware_key: str, campaign_id: int | None, found: Sequence[Measured],
                      kind_keys: Mapping[str, str] | None = None) -> None:
        """Baselines measured of the hardware ``hardware_key`` by a campaign, in one transaction; ``kind_keys``:
        each kind's key of what can move its figures (``campaign.records.baseline_key``), for later settings."""
        keys = kind_keys or {}
        with self.tx() as c:
            for m in found:
                c.execute(t.baselines.insert().values(
                    hardware_key=hardware_key, campaign_id=campaign_id, kind=m.kind, host=m.host, target=m.target,
                    test=m.test, value=m.value, unit=m.unit, error=m.error, raw=compress(m.raw) if m.raw else None,
                    measured_at=now(), kind_key=keys.get(m.kind)))

    def keep_baseline(self, kind: str, kind_key: str, hardware_key: str) -> KeptBaseline | None:
        """Copy the newest undisturbed ``kind`` baseline measured under ``kind_key`` (of other hardware: a setting
        that changed only knobs that cannot move it) to ``hardware_key``, in one transaction; the copies keep the
        campaign that measured them and when. None where there is none to keep (then nothing was written)."""
        b = t.baselines
        with self.tx() as c:
            newest = c.execute(select(b.c.hardware_key, b.c.campaign_id).where(
                b.c.kind == kind, b.c.kind_key == kind_key, b.c.error.is_(None), b.c.hardware_key != hardware_key)
                .order_by(b.c.id.desc()).limit(1)).first()
            if newest is None:
                return None
            source = b.c.campaign_id.is_(None) if newest.campaign_id is None else b.c.campaign_id == newest.campaign_id
            rows = c.execute(select(b).where(b.c.kind == kind, b.c.kind_key == kind_key, b.c.error.is_(None),
                                             b.c.hardware_key == newest.hardware_key, source)
                             .order_by(b.c.id)).mappings().all()
            for r in rows:
                c.execute(b.insert().values({**{k: v for k, v in r.items() if k != "id"},
                                             "hardware_key": hardware_key}))
            by = None if newest.campaign_id is None else c.execute(
                select(t.campaigns.c.name).where(t.campaigns.c.id == newest.campaign_id)).scalar()
        return KeptBaseline(None if by is None else str(by), len(rows))

    # -- runs -----------------------------------------------------------------------------------------------
    def register_runs(self, campaign_id: int, runs: Sequence[Any]) -> dict[str, tuple[int, str]]:
        """Insert the plan's runs not yet known (status pending); return config hash -> (run id, status)."""
        with self.tx() as c:
            existing = {r.config_hash: (int(r.id), str(r.status)) for r in c.execute(
                select(t.runs.c.id, t.runs.c.config_hash, t.runs.c.status).where(t.runs.c.campaign_id == campaign_id))}
            base = int(c.execute(select(func.coalesce(func.max(t.runs.c.seq), 0))
                                 .where(t.runs.c.campaign_id == campaign_id)).scalar() or 0)
            for i, run in enumerate(runs, 1):
                if run.config_hash in existing:
                    continue
                feats = {k: run.features.get(k) for k in _FEATURE_COLUMNS}
                rid = _insert(c, t.runs.insert().values(
                    campaign_id=campaign_id, seq=base + i, config_hash=run.config_hash, volume_key=run.volume_key,
                    status="pending", attempts=0, unstable=False, features=dict(run.features),
                    config={"volume": run.volume.model_dump(mode="json"), "workload": run.workload.model_dump(mode="json")},
                    **feats))
                existing[run.config_hash] = (int(rid), "pending")
            return existing

    def start_run(self, run_id: int) -> int:
        """Mark a run running (one more attempt) and drop what an unfinished earlier attempt left; returns attempt."""
        with self.tx() as c:
            c.execute(delete(t.trials).where(t.trials.c.run_id == run_id))
            attempts = int(c.execute(select(t.runs.c.attempts).where(t.runs.c.id == run_id)).scalar() or 0) + 1
            c.execute(update(t.runs).where(t.runs.c.id == run_id).values(
                status="running", attempts=attempts, started_at=now(), finished_at=None, error=None,
                error_host=None, error_command=None, unstable=False, regime=None))
            return attempts

    def add_trial(self, run_id: int, trial: TrialRecord) -> int:
        """One trial with its measurements and raw outputs, in one transaction."""
        with self.tx() as c:
            tid = _insert(c, t.trials.insert().values(
                run_id=run_id, idx=trial.idx, warmup=trial.warmup, outlier=trial.outlier, status=trial.status,
                error=trial.error, file_size=trial.file_size, started_at=trial.started_at, seconds=trial.seconds,
                engine_seconds=trial.engine_seconds, argv=trial.argv, context=trial.context))
            for metric, value, unit, lo, hi in trial.measurements:
                c.execute(t.measurements.insert().values(trial_id=tid, metric=metric, value=value, unit=unit,
                                                         min_value=lo, max_value=hi))
            for kind, text in trial.raw.items():
                data = compress(text)
                c.execute(t.raw_outputs.insert().values(trial_id=tid, kind=kind, encoding="zlib",
                                                        size=len(text.encode()), data=data))
            return tid

    def flag_outliers(self, run_id: int, idxs: Sequence[int], because: str) -> None:
        if not idxs:
            return
        with self.tx() as c:
            c.execute(update(t.trials).where(t.trials.c.run_id == run_id, t.trials.c.idx.in_(list(idxs)))
                      .values(outlier=True, flagged_because=because))

    def finish_run(self, run_id: int, status: RunStatus, *, regime: str | None = None, unstable: bool = False,
                   error: str | None = None, error_host: str | None = None, error_command: str | None = None) -> None:
        with self.tx() as c:
            c.execute(update(t.runs).where(t.runs.c.id == run_id).values(
                status=RunStatus(status).value, regime=regime, unstable=unstable, error=error, error_host=error_host,
                error_command=error_command, finished_at=now()))

    # -- reads ----------------------------------------------------------------------------------------------
    def runs(self, campaign_id: int | None = None) -> list[StoredRun]:
        """The runs of a campaign (or of every campaign), in the campaigns' and then the plan's order."""
        q = select(t.runs, t.campaigns.c.name.label("campaign")).join(t.campaigns)
        if campaign_id is not None:
            q = q.where(t.runs.c.campaign_id == campaign_id)
        with self.tx() as c:
            rows = list(c.execute(q.order_by(t.runs.c.campaign_id, t.runs.c.seq)).mappings())
        return [StoredRun.from_row(dict(r)) for r in rows]

    def run(self, run_id: int) -> StoredRun | None:
        with self.tx() as c:
            row = c.execute(select(t.runs, t.campaigns.c.name.label("campaign")).join(t.campaigns)
                            .where(t.runs.c.id == run_id)).mappings().first()
        return StoredRun.from_row(dict(row)) if row else None

    def trials(self, run_id: int) -> list[StoredTrial]:
        """A run's trials in order, each with its measurements."""
        with self.tx() as c:
            rows = list(c.execute(select(t.trials).where(t.trials.c.run_id == run_id)
                                  .order_by(t.trials.c.idx)).mappings())
            ms = c.execute(select(t.measurements).join(t.trials).where(t.trials.c.run_id == run_id)
                           .order_by(t.measurements.c.id)).mappings()
            by_trial: dict[int, list[StoredMeasurement]] = {}
            for m in ms:
                by_trial.setdefault(int(m["trial_id"]), []).append(StoredMeasurement(
                    str(m["metric"]), float(m["value"]), str(m["unit"]), m["min_value"], m["max_value"]))
        return [StoredTrial.from_row(dict(r), tuple(by_trial.get(int(r["id"]), ()))) for r in rows]

    def trial_counts(self, campaign_id: int | None = None) -> dict[int, int]:
        """Trials stored per run id (one query, for listings)."""
        q = select(t.trials.c.run_id, func.count()).join(t.runs).group_by(t.trials.c.run_id)
        if campaign_id is not None:
            q = q.where(t.runs.c.campaign_id == campaign_id)
        with self.tx() as c:
            return {int(rid): int(n) for rid, n in c.execute(q)}

    def raw_output(self, trial_id: int, kind: str) -> str | None:
        with self.tx() as c:
            data = c.execute(select(t.raw_outputs.c.data).where(t.raw_outputs.c.trial_id == trial_id,
                                                                t.raw_outputs.c.kind == kind)).scalar()
        if data is None:
            return None
        try:
            return decompress(data)
        except zlib.error:
            raise StoreError(f"{self.where}: the {kind} output of trial {trial_id} is damaged (not zlib data); "
                             "restore the store from a copy") from None

    def counts(self, campaign_id: int | None = None, *, flagged: bool = True) -> dict[str, int]:
        """Rows per table (for one campaign if given): runs by status, trials, measurements, raw outputs; without
        ``flagged``, only trials kept (not flagged as outliers or disturbed) and theirs, plus how many were
        flagged (``trials_flagged``)."""
        with self.tx() as c:
            rq = select(t.runs.c.status, func.count()).group_by(t.runs.c.status)
            tq = select(func.count()).select_from(t.trials).join(t.runs)
            mq = select(func.count()).select_from(t.measurements).join(t.trials).join(t.runs)
            oq = select(func.count()).select_from(t.raw_outputs).join(t.trials).join(t.runs)
            fq = select(func.count()).select_from(t.trials).join(t.runs).where(t.trials.c.outlier.is_(True))
            if campaign_id is not None:
                rq = rq.where(t.runs.c.campaign_id == campaign_id)
                tq, mq, oq, fq = (q.where(t.runs.c.campaign_id == campaign_id) for q in (tq, mq, oq, fq))
            if not flagged:
                tq, mq, oq = (q.where(t.trials.c.outlier.is_(False)) for q in (tq, mq, oq))
            out = {f"runs_{s}": int(n) for s, n in c.execute(rq)}
            out["trials"] = int(c.execute(tq).scalar() or 0)
            out["measurements"] = int(c.execute(mq).scalar() or 0)
            out["raw_outputs"] = int(c.execute(oq).scalar() or 0)
            if not flagged:
                out["trials_flagged"] = int(c.execute(fq).scalar() or 0)
        return out

    def trial_table(self, campaign: str | None = None) -> list[dict[str, Any]]:
        """One row per trial: campaign, run, features, trial flags, and every metric (long form)."""
        info = [t.campaigns.c[n] for n in _INFO_COLUMNS if self._has(n)] + \
            ([t.campaigns.c.plan] if self.version < 5 else [])
        q = (select(t.campaigns.c.name.label("campaign"), t.campaigns.c.plan_name,
                    t.campaigns.c.cluster_name.label("cluster"), *info, t.runs.c.id.label("run_id"),
                    t.runs.c.config_hash,
                    t.runs.c.status.label("run_status"), t.runs.c.regime, t.runs.c.unstable,
                    *[t.runs.c[n] for n in _FEATURE_COLUMNS], t.runs.c.features,
                    t.trials.c.id.label("trial_id"), t.trials.c.idx.label("trial"), t.trials.c.warmup,
                    t.trials.c.outlier, t.trials.c.flagged_because, t.trials.c.status.label("trial_status"),
                    t.trials.c.seconds,
                    t.trials.c.engine_seconds, t.trials.c.file_size.label("trial_file_size"),
                    t.measurements.c.metric, t.measurements.c.value, t.measurements.c.unit)
             .select_from(t.trials.join(t.runs).join(t.campaigns)
                          .outerjoin(t.measurements, t.measurements.c.trial_id == t.trials.c.id)))
        if campaign is not None:
            q = q.where(t.campaigns.c.name == campaign)
        with self.tx() as c:
            rows = [dict(r) for r in c.execute(q.order_by(t.runs.c.id, t.trials.c.idx)).mappings()]
        if self.version < 7:
            rows = self._with_info(rows, "campaign")
            for r in rows:
                r.pop("plan", None)
        return rows

    def baseline_table(self) -> list[dict[str, Any]]:
        """Baselines with the campaigns they belong to (through the hardware key)."""
        q = (select(t.campaigns.c.name.label("campaign"), t.baselines.c.kind, t.baselines.c.host,
                    t.baselines.c.target, t.baselines.c.test, t.baselines.c.value, t.baselines.c.unit)
             .select_from(t.baselines.join(t.campaigns, t.campaigns.c.hardware_key == t.baselines.c.hardware_key))
             .where(t.baselines.c.error.is_(None)))
        with self.tx() as c:
            return [dict(r) for r in c.execute(q).mappings()]


def _setting_text(info: CampaignInfo) -> str:
    where = ",".join(f"{k}={v}" for k, v in info.setting) or "the cluster's own hardware"
    if info.step:
        where += f" ({info.step.round.value} round{f' {info.step.look}' if info.step.look else ''} of search " \
                 f"{info.step.search})"
    return where + (f" (side {info.look.side}, look {info.look.look} of {info.look.comparison})" if info.look else "")


def _insert(conn: Connection, stmt: Any) -> int:
    key = conn.execute(stmt).inserted_primary_key
    assert key is not None
    return int(key[0])


def compress(text: str) -> bytes:
    return zlib.compress(text.encode("utf-8"), 6)


def decompress(data: bytes) -> str:
    return zlib.decompress(data).decode("utf-8", errors="replace")


def _jsonable(obj: Any) -> Any:
    import json

    return json.loads(json.dumps(obj, default=str))


def store_exists(value: str | Path) -> bool:
    """Whether a store is there to read: an SQLite file (as a path or a URL) that exists, or any server URL."""
    url = store_url(value)
    return Path(url.removeprefix("sqlite:///")).is_file() if url.startswith("sqlite:///") else True


def open_store(value: str | Path = DEFAULT_STORE, *, create: bool = True) -> Store:
    """Open a store. With ``create`` (collect): make or migrate it; a SQLite file is created on first use, and
    only in a new or empty file. Without (every read-only command): read it as it is, read-only, never
    changing the file (no journal switch, no migration), and refuse anything that is not a glmodel store."""
    url = store_url(value)
    where = redact(url)
    path = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None
    if path is not None and (not url.removeprefix("sqlite:///") or path.is_dir()):
        raise ConfigError("--store", where, "names no store file (it is empty or a directory); give a file path "
                          "(glmodel.db) or sqlite:///path/to/glmodel.db")
    if path is not None and not create:
        if not path.is_file():
            raise StoreError(f"no store at {path} (collect writes one; pass --store)")
        # Read-only: a store on a read-only medium or owned by someone else is readable, and nothing is written.
        url = f"sqlite:///file:{path}?mode=ro&uri=true"
        if not Path(f"{path}-wal").exists() or not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)):
            # Without a -wal file no writer is at work and every commit is in the file, and where nothing can be
            # written nothing can change the file either: SQLite may read it as immutable, and the read leaves
            # no -wal/-shm files beside it. With a -wal file (a collect at work), read through it.
            url += "&immutable=1"
    elif path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        engine = create_engine(url, future=True, pool_pre_ping=True)
    except ImportError as exc:  # the URL is right, its driver is not installed
        driver = getattr(exc, "name", None) or str(exc).split("'")[1:2] or "the driver"
        pkg = {"psycopg": "psycopg[binary]", "psycopg2": "psycopg2-binary"}.get(str(driver), str(driver))
        raise ConfigError("--store", where, f"the database driver {driver} is not installed; install it into "
                          f"glmodel's environment (.venv/bin/pip install '{pkg}'), or use "
                          "postgresql+psycopg://... with psycopg") from None
    except (ArgumentError, NoSuchModuleError) as exc:
        raise ConfigError("--store", where, f"not a usable database URL ({exc}); use a file path, "
                          "sqlite:///path or postgresql+psycopg://user@host/db") from None
    if engine.dialect.name == "sqlite":
        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            if create:
                cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()
    try:
        if create and engine.dialect.name == "sqlite" and path is not None and path.exists() and path.stat().st_size:
            # A store collect is about to write to is checked whole first: a damaged page found half-way would
            # leave a campaign row (or more) written before the refusal.
            with engine.connect() as conn:
                verdict = [str(r[0]) for r in conn.exec_driver_sql("PRAGMA quick_check").fetchmany(3)]
            if verdict != ["ok"]:
                raise StoreError(f"{where} is damaged ({'; '.join(verdict)[:160]}); restore it from a copy, or "
                                 "collect into another --store")
        with engine.begin() as conn:
            found = current_version(conn)
            if not found and (create and inspect(conn).get_table_names() or not create):
                others = ", ".join(sorted(inspect(conn).get_table_names())[:5]) or "no tables"
                raise StoreError(f"{where} is not a glmodel store (it holds {others})" + (
                    "; glmodel creates a store only in a new or empty file: pass another --store" if create else ""))
            if create:
                migrate(conn, where=where)
            elif found > SCHEMA_VERSION:  # an older store is read as it is (what it lacks reads as empty)
                raise StoreError(f"{where} has schema version {found}, newer than this glmodel understands "
                                 f"({SCHEMA_VERSION}); upgrade glmodel")
        if create and engine.dialect.name == "sqlite":
            # WAL, once the file is known to be ours: readers (glmodel runs list) never block the collector, and
            # a killed process loses nothing committed. The mode is kept in the file.
            with engine.connect() as conn:
                conn.exec_driver_sql("PRAGMA journal_mode=WAL")
    except StoreError:
        engine.dispose()
        raise
    except (OperationalError, DatabaseError) as exc:
        engine.dispose()
        reason = str(exc.orig).splitlines()[0] if exc.orig is not None else str(exc)
        raise StoreError(f"cannot open store {where}: {reason}") from None
    except SQLAlchemyError as exc:
        engine.dispose()
        raise StoreError(f"cannot open store {where}: {str(exc).splitlines()[0]}") from None
    return Store(engine, where, SCHEMA_VERSION if create else found)


def _alive(pid: int) -> bool:
    """Whether a process of this host still runs (and is not a zombie)."""
    return not zombie(int(pid))

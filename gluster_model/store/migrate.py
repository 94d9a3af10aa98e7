"""Schema versions and the steps between them, applied in order in one transaction when a store opens.

Each step takes a store from version N-1 to N. A step, once released, never changes: a new schema is a
new step (ALTER TABLE, data moves) appended here, so a store written by any earlier glmodel keeps opening.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from sqlalchemy import Connection, inspect, select, text, update

from ..errors import StoreError
from .identity import Purpose, legacy_info, legacy_look, legacy_step
from .schema import SCHEMA_VERSION, campaigns, design_log, metadata, schema_info, writers

Step = Callable[[Connection], None]
_LATER = {"design_log", "writers"}  # tables added by later steps


def _add_columns(conn: Connection, table: str, columns: tuple[tuple[str, str], ...]) -> None:
    """ALTER TABLE ``table`` ADD each (name, SQL type) it lacks: a store created at the step's version by ``_v1``
    (the tables as schema.py has them now) has them already."""
    have = {c["name"] for c in inspect(conn).get_columns(table)}
    for name, kind in columns:
        if name not in have:
            conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {name} {kind}"))


def _v1(conn: Connection) -> None:
    """Version 1: the first schema (the tables of schema.py as first released)."""
    metadata.create_all(conn, tables=[t for t in metadata.sorted_tables if t.name not in _LATER])


def _v2(conn: Connection) -> None:
    """Version 2: the design_log table of adaptive designs."""
    design_log.create(conn, checkfirst=True)


def _v3(conn: Connection) -> None:
    """Version 3: each trial's context (what could have disturbed it) and why it was flagged."""
    _add_columns(conn, "trials", (("context", "JSON"), ("flagged_because", "TEXT")))


def _v4(conn: Connection) -> None:
    """Version 4: the writers table (one campaign writer at a time)."""
    writers.create(conn, checkfirst=True)


def _v5(conn: Connection) -> None:
    """Version 5: each campaign's purpose, hardware setting and the campaign it measures again, as columns;
    filled for the campaigns already there from what their names and plans said (``identity.legacy_info``)."""
    _add_columns(conn, "campaigns", (("purpose", "VARCHAR(20) NOT NULL DEFAULT 'training'"), ("setting", "JSON"),
                                     ("again_of", "VARCHAR(200)")))
    rows = conn.execute(select(campaigns.c.id, campaigns.c.name, campaigns.c.plan_name, campaigns.c.plan)).all()
    for row in rows:
        info = legacy_info(str(row.name), str(row.plan_name), row.plan if isinstance(row.plan, dict) else None)
        conn.execute(update(campaigns).where(campaigns.c.id == row.id).values(
            purpose=info.purpose.value, setting=info.setting_dict(), again_of=info.again_of))


def _v6(conn: Connection) -> None:
    """Version 6: the look of an interleaved comparison (comparison, side, look) as columns; filled for the
    comparison campaigns already there from their names (``<base>.A1``, ``identity.legacy_look``)."""
    _add_columns(conn, "campaigns", (("comparison", "VARCHAR(200)"), ("side", "VARCHAR(1)"), ("look", "INTEGER")))
    rows = conn.execute(select(campaigns.c.id, campaigns.c.name)
                        .where(campaigns.c.purpose == Purpose.COMPARISON.value)).all()
    for row in rows:
        look = legacy_look(str(row.name), Purpose.COMPARISON)
        if look is not None:
            conn.execute(update(campaigns).where(campaigns.c.id == row.id).values(
                comparison=look.comparison, side=look.side, look=look.look))


def _v7(conn: Connection) -> None:
    """Version 7: the round of an option search (search, search_round; a confirmation's look in ``look``) as
    columns; filled for the search campaigns already there from their names (``<name>.more``, ``<name>.confirm2``,
    ``identity.legacy_step``)."""
    _add_columns(conn, "campaigns", (("search", "VARCHAR(200)"), ("search_round", "VARCHAR(12)")))
    rows = conn.execute(select(campaigns.c.id, campaigns.c.name)
                        .where(campaigns.c.purpose == Purpose.SEARCH.value)).all()
    for row in rows:
        step = legacy_step(str(row.name), Purpose.SEARCH)
        if step is not None:
            conn.execute(update(campaigns).where(campaigns.c.id == row.id).values(
                search=step.search, search_round=step.round.value, look=step.look or None))


def _v8(conn: Connection) -> None:
    """Version 8: each baseline's ``kind_key`` (what can move a figure of its kind); the baselines already there
    keep none, so no later setting keeps them on a key they were not measured under."""
    _add_columns(conn, "baselines", (("kind_key", "VARCHAR(64)"),))
    conn.execute(text("CREATE INDEX IF NOT EXISTS ix_baselines_kind ON baselines (kind_key)"))


STEPS: dict[int, Step] = {1: _v1, 2: _v2, 3: _v3, 4: _v4, 5: _v5, 6: _v6, 7: _v7, 8: _v8}


def current_version(conn: Connection) -> int:
    if not inspect(conn).has_table(schema_info.name):
        return 0
    version = conn.execute(select(schema_info.c.version).where(schema_info.c.id == 1)).scalar()
    return int(version or 0)


def migrate(conn: Connection, steps: Mapping[int, Step] = STEPS, target: int = SCHEMA_VERSION,
            where: str = "store") -> tuple[int, int]:
    """Bring the store to ``target``; returns (version found, version now)."""
    found = current_version(conn)
    if found > target:
        raise StoreError(f"{where} has schema version {found}, newer than this glmodel understands ({target});"
                         " upgrade glmodel")
    for version in range(found + 1, target + 1):
        steps[version](conn)
        if version == 1 and found == 0:
            conn.execute(schema_info.insert().values(id=1, version=1))
        else:
            conn.execute(schema_info.update().where(schema_info.c.id == 1).values(version=version))
    return found, target

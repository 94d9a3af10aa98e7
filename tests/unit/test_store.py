"""Results store on real databases: writes, resume semantics, compression, migrations, the tidy table. What does
not depend on the file (trials, resume, the writer slot, the table's columns) runs against SQLite and a private
PostgreSQL server both; what is about the SQLite file (pages, journals, read-only opening) against SQLite."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Connection, create_engine, inspect, text

from gluster_model.config.cluster import cluster_from_data
from gluster_model.dataset import trial_frame
from gluster_model.errors import StoreError
from gluster_model.plan.file import PlanFile, expand
from gluster_model.store import TrialRecord, open_store
from gluster_model.store.identity import RunStatus, StoredMeasurement
from gluster_model.store.migrate import STEPS, current_version, migrate
from gluster_model.store.store import now, redact, store_url

from ..integration.postgres import postgres_server

_databases = itertools.count()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def postgres() -> Iterator[str]:
    """One private server for this module (its own port: several test processes may run one each)."""
    with postgres_server(_free_port()) as url:
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store of each kind: a SQLite file, or a fresh database on the private server."""
    if request.param == "sqlite":
        return str(tmp_path / "s.db")
    server = request.getfixturevalue("postgres")
    name = f"store_{next(_databases)}"
    engine = create_engine(server, isolation_level="AUTOCOMMIT")
    with engine.connect() as c:
        c.execute(text(f"CREATE DATABASE {name}"))
    engine.dispose()
    return server.rsplit("/", 1)[0] + "/" + name


def _runs():  # type: ignore[no-untyped-def]
    cluster = cluster_from_data({"name": "c", "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]}
                                                          for i in (1, 2, 3)], "clients": ["10.0.0.1"]},
                                "c.yaml", Path("."))
    plan = PlanFile.model_validate({"name": "t", "factors": {"layout": ["distribute", "replicate"], "replica": 3,
                                                             "record_size": ["4KB", "64KB"]}})
    return expand(plan, cluster).runs


def _trial(idx: int, write: float, warmup: bool = False) -> TrialRecord:
    return TrialRecord(idx=idx, warmup=warmup, status="ok", file_size=1 << 22, started_at=now(), seconds=2.0,
                       engine_seconds=1.8, argv=["iozone", "-t", "3"],
                       measurements=[("write", write, "kB/s", write / 3, write / 2), ("read", 2 * write, "kB/s", None, None)],
                       raw={"iozone": "Children see throughput ... " * 200})


def test_campaign_runs_trials_round_trip(store_at: str, tmp_path: Path) -> None:
    runs = _runs()
    with open_store(store_at) as st:
        cid = st.ensure_campaign("t@c", "t", "h1", {"name": "t"}, "c", {"name": "c"}, "0.1.0")
        assert st.ensure_campaign("t@c", "t", "h1", {"name": "t"}, "c", {"name": "c"}, "0.1.0") == cid
        status = st.register_runs(cid, runs)
        assert len(status) == 4 and {s for _, s in status.values()} == {"pending"}
        assert st.register_runs(cid, runs) == status  # idempotent: nothing new
        rid = status[runs[0].config_hash][0]
        st.start_run(rid)
        st.add_trial(rid, _trial(0, 1000.0, warmup=True))
        st.add_trial(rid, _trial(1, 2048.0))
        st.add_trial(rid, _trial(2, 4096.0))
        st.flag_outliers(rid, [2], "test")
        st.finish_run(rid, RunStatus.DONE, regime="cached")
        assert st.counts(cid) == {"runs_done": 1, "runs_pending": 3, "trials": 3, "measurements": 6,
                                  "raw_outputs": 3}
        assert st.counts(cid, flagged=False) == {"runs_done": 1, "runs_pending": 3, "trials": 2, "measurements": 4,
                                                 "raw_outputs": 2, "trials_flagged": 1}
        trials = st.trials(rid)
        assert [t.outlier for t in trials] == [False, False, True]
        assert [t.warmup for t in trials] == [True, False, False] and trials[2].flagged_because == "test"
        # each measurement as it was added, the slowest and fastest client's figure with it (None: not given)
        assert trials[1].measurements == (StoredMeasurement("write", 2048.0, "kB/s", 2048.0 / 3, 1024.0),
                                          StoredMeasurement("read", 4096.0, "kB/s", None, None))
        assert trials[1].argv == ("iozone", "-t", "3") and trials[1].file_size == 1 << 22
        run = st.run(rid)
        assert run is not None and run.status is RunStatus.DONE and run.regime == "cached" and run.attempts == 1
        assert run.features == runs[0].features and run.campaign == "t@c" and run.config_hash == runs[0].config_hash
        assert [r.status for r in st.runs(cid)].count(RunStatus.PENDING) == 3 and st.run(10_000) is None
        raw = st.raw_output(trials[1].id, "iozone")
        assert raw == "Children see throughput ... " * 200
        frame = trial_frame(st)
        # Only the measured, non-outlier trial of the finished run: 2048 kB/s = 2.0 MB/s.
        assert len(frame) == 1 and frame.loc[0, "write"] == 2.0 and frame.loc[0, "read"] == 4.0
        assert str(frame["layout"].dtype) == "category" and frame.loc[0, "record_size"] == runs[0].features["record_size"]
        assert len(trial_frame(st, include_warmups=True, include_outliers=True)) == 3
        _exported_tables_read_back_typed(trial_frame(st, include_warmups=True, include_outliers=True), tmp_path)
    # The raw text is stored compressed.
    eng = create_engine(store_url(store_at))
    with eng.connect() as c:
        size, stored = c.execute(text("select size, length(data) from raw_outputs limit 1")).one()
    eng.dispose()
    assert stored < size / 10


def _exported_tables_read_back_typed(frame, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What `glmodel export` writes, `glmodel fit --data` reads back with the same types and values."""
    import pandas as pd

    from gluster_model.dataset import read_table
    from gluster_model.errors import ConfigError

    for name, write in (("t.csv", frame.to_csv), ("t.parquet", frame.to_parquet)):
        write(tmp_path / name, index=False)
        back = read_table(tmp_path / name)
        assert list(back.columns) == list(frame.columns)
        for col in ("layout", "shard", "record_size", "write", "warmup"):
            assert str(back[col].dtype) == str(frame[col].dtype) or col == "warmup", (name, col)
        pd.testing.assert_series_equal(back["write"], frame["write"])
        assert back["shard"].tolist() == frame["shard"].tolist()
    bad = tmp_path / "bad.csv"
    frame.assign(shard="maybe").to_csv(bad, index=False)
    with pytest.raises(ConfigError, match="bad.csv: values: 'maybe' is not true or false"):
        read_table(bad)
    (tmp_path / "other.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ConfigError, match="not a `glmodel export` table"):
        read_table(tmp_path / "other.csv")


def test_restarting_a_run_drops_its_unfinished_trials(store_at: str) -> None:
    runs = _runs()
    with open_store(store_at) as st:
        cid = st.ensure_campaign("t@c", "t", "h", {}, "c", {}, "0")
        rid = st.register_runs(cid, runs)[runs[1].config_hash][0]
        assert st.start_run(rid) == 1
        st.add_trial(rid, _trial(0, 10.0))
        assert st.start_run(rid) == 2  # e.g. after a crash: attempt 2 starts from trial 0 again
        assert st.trials(rid) == []
        st.add_trial(rid, _trial(0, 11.0))
        # the same trial index twice is impossible; each database names the constraint its own way
        with pytest.raises(StoreError, match=r"trials\.run_id, trials\.idx|trials_run_id_idx_key"):
            st.add_trial(rid, _trial(0, 12.0))
        assert len(st.trials(rid)) == 1


def test_store_urls_and_missing_store(tmp_path: Path) -> None:
    assert store_url(tmp_path / "x.db") == f"sqlite:///{tmp_path / 'x.db'}"
    assert store_url("postgresql+psycopg://u:pw@h/db") == "postgresql+psycopg://u:pw@h/db"
    assert "pw" not in redact("postgresql+psycopg://u:pw@h/db")
    with pytest.raises(StoreError, match="no store at"):
        open_store(tmp_path / "absent.db", create=False)


def test_newer_schema_refused_and_old_schema_migrated(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    eng = create_engine(f"sqlite:///{path}")
    with eng.begin() as conn:  # a store as the first glmodel wrote it: schema version 1, no design_log
        assert migrate(conn, target=1) == (0, 1)
        assert "design_log" not in inspect(conn).get_table_names()
        for col in ("context", "flagged_because"):  # columns the first schema did not have
            conn.execute(text(f"ALTER TABLE trials DROP COLUMN {col}"))
        for col in ("purpose", "setting", "again_of", "comparison", "side", "look", "search", "search_round"):
            conn.execute(text(f"ALTER TABLE campaigns DROP COLUMN {col}"))  # nor these (versions 5, 6 and 7)
        conn.execute(text("DROP INDEX ix_baselines_kind"))
        conn.execute(text("ALTER TABLE baselines DROP COLUMN kind_key"))  # nor this (version 8)
    eng.dispose()
    with open_store(path) as st:  # opened by collect: brought to version 8 (the columns above), its data kept
        cid = st.ensure_campaign("t@c", "t", "h", {}, "c", {}, "0")
        st.register_runs(cid, _runs())
    eng = create_engine(f"sqlite:///{path}")

    def v9(conn: Connection) -> None:  # a future step: a new column with a default
        conn.execute(text("ALTER TABLE runs ADD COLUMN note VARCHAR(50) DEFAULT 'none'"))

    with eng.begin() as conn:
        assert current_version(conn) == 8 and {"design_log", "writers"} <= set(inspect(conn).get_table_names())
        assert {"context", "flagged_because"} <= {c["name"] for c in inspect(conn).get_columns("trials")}
        assert {"purpose", "setting", "again_of", "comparison", "side", "look", "search", "search_round"} <= \
            {c["name"] for c in inspect(conn).get_columns("campaigns")}
        assert "kind_key" in {c["name"] for c in inspect(conn).get_columns("baselines")}
        assert "ix_baselines_kind" in {i["name"] for i in inspect(conn).get_indexes("baselines")}
        assert migrate(conn, {**STEPS, 9: v9}, target=9) == (8, 9)
    with eng.begin() as conn:
        assert current_version(conn) == 9
        assert "note" in {c["name"] for c in inspect(conn).get_columns("runs")}
        assert conn.execute(text("select count(*), min(note) from runs")).one() == (4, "none")  # data kept
    eng.dispose()
    with pytest.raises(StoreError, match="schema version 9, newer than this glmodel understands"):
        open_store(path)


def test_a_store_with_overwritten_pages_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with open_store(path) as st:
        cid = st.ensure_campaign("t@c", "t", "h", {}, "c", {}, "0")
        st.register_runs(cid, _runs() * 1)
    with open_store(path) as st:  # (WAL checkpointed on close)
        pass
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(page, len(data), page):  # every page after the schema's: the tables' rows
        data[start:start + page] = b"\xab" * page
    path.write_bytes(bytes(data))
    with pytest.raises(StoreError) as err:
        with open_store(path, create=False) as st:
            st.runs(1)
    msg = str(err.value)
    assert str(path) in msg and "\n" not in msg and ("malformed" in msg or "damaged" in msg or "not a" in msg)


@pytest.mark.parametrize("value", ["sqlite:///", "DIR"])
def test_a_store_that_names_no_file_is_refused_naming_the_option(value: str, tmp_path: Path) -> None:
    from gluster_model.errors import ConfigError

    with pytest.raises(ConfigError, match=r"^--store: .*names no store file \(it is empty or a directory\)"):
        open_store(str(tmp_path) if value == "DIR" else value, create=False)


def test_a_read_only_command_leaves_no_journal_files_beside_the_store(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with open_store(path) as st:
        st.ensure_campaign("t@c", "t", "h", {}, "c", {}, "0")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]
    with open_store(path, create=False) as st:
        assert [c.name for c in st.campaigns()] == ["t@c"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]


def test_a_database_url_whose_driver_is_missing_names_the_driver_and_its_install(tmp_path: Path) -> None:
    from gluster_model.errors import ConfigError

    with pytest.raises(ConfigError, match=r"the database driver pg8000 is not installed; .*pip install 'pg8000'"):
        open_store("postgresql+pg8000://u@localhost/db")


def test_one_campaign_writer_at_a_time_and_a_dead_one_is_taken_over(store_at: str) -> None:
    """Two collects on one store: the second is refused in one line naming the first; once the first ends the
    slot is free; a writer killed with -9 (its pid gone) leaves a slot the next one takes over."""
    import os
    import socket
    import subprocess

    from gluster_model.errors import StoreError
    from gluster_model.store import schema

    with open_store(store_at) as first, open_store(store_at) as second:
        with first.writing("collect plan@lab"):
            with pytest.raises(StoreError, match=rf"another glmodel is writing to this store \(collect plan@lab, "
                                                 rf"pid {os.getpid()} on"):
                # the same process stands for another one here: a live pid that holds the slot
                with _other_pid(second):
                    with second.writing("collect again"):
                        pass
        with second.writing("collect again"):  # the first ended: free
            pass
        gone = subprocess.Popen(["true"])
        gone.wait()
        with second.tx() as c:  # a writer killed with -9 left its row
            c.execute(schema.writers.insert().values(id=1, host=socket.gethostname(), pid=gone.pid, what="killed",
                                                     since=__import__("datetime").datetime.now()))
        with second.writing("after the killed one"):
            with second.tx() as c:
                (row,) = c.execute(schema.writers.select()).mappings().all()
                assert row["pid"] == os.getpid() and row["what"] == "after the killed one"
        with second.tx() as c:
            assert c.execute(schema.writers.select()).first() is None


class _other_pid:
    """Make the store believe it runs as another live process (pid 1, init), for the refusal path."""

    def __init__(self, store: object) -> None:
        self.store = store

    def __enter__(self) -> None:
        import os

        self.real = os.getpid
        os.getpid = lambda: 1  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        import os

        os.getpid = self.real  # type: ignore[assignment]


def test_collect_refuses_a_damaged_store_before_writing_anything(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with open_store(path) as st:
        cid = st.ensure_campaign("t@c", "t", "h", {}, "c", {}, "0")
        st.register_runs(cid, _runs())
    data = bytearray(path.read_bytes())
    page = 4096
    for start in range(2 * page, len(data), page):  # the rows' pages, past the schema's
        data[start:start + page] = b"\xab" * page
    path.write_bytes(bytes(data))
    before = path.read_bytes()
    with pytest.raises(StoreError, match=r"is damaged \(|disk image is malformed"):
        open_store(path)  # as collect opens it
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["s.db"]


def test_a_shared_read_is_a_column_of_its_own_and_false_where_a_run_had_none(store_at: str) -> None:
    """Runs of one plan with and without shared_read: two configurations, and the table says which read which
    (a run stored without the setting had each client read its own file)."""
    cluster = cluster_from_data({"name": "c", "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]}
                                                          for i in (1, 2)], "clients": ["10.0.0.1", "10.0.0.2"]},
                                "c.yaml", Path("."))
    plan = PlanFile.model_validate({"name": "t", "factors": {"engine": "fio", "shared_read": [False, True]},
                                    "workload": {"tests": ["write", "read"]}})
    runs = expand(plan, cluster).runs
    assert [r.features.get("shared_read") for r in runs] == [None, True]
    assert runs[0].config_hash != runs[1].config_hash
    with open_store(store_at) as st:
        cid = st.ensure_campaign("t@c", "t", "h1", {"name": "t"}, "c", {"name": "c"}, "0.1.0")
        status = st.register_runs(cid, runs)
        for k, run in enumerate(runs):
            rid = status[run.config_hash][0]
            st.start_run(rid)
            st.add_trial(rid, _trial(0, 1000.0 * (k + 1)))
            st.finish_run(rid, RunStatus.DONE, regime="uncached")
        frame = trial_frame(st).sort_values("write")
    assert str(frame["shared_read"].dtype) == "boolean" and frame["shared_read"].tolist() == [False, True]


def test_the_dry_run_estimates_a_run_the_store_measured_at_what_its_trials_took(store_at: str,
                                                                              tmp_path: Path) -> None:
    """`collect --dry-run` reads the store's history of the cluster: a run measured before takes what its kept
    trials took (2 s each here, three trials a run), the others the stated costs, and it says which."""
    from gluster_model.campaign.estimate import TrialCost, estimate_seconds
    from gluster_model.campaign.preview import preview

    cluster = cluster_from_data({"name": "c", "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]}
                                                          for i in (1, 2, 3)], "clients": ["10.0.0.1"]},
                                "c.yaml", Path("."))
    plan = PlanFile.model_validate({"name": "t", "factors": {"layout": ["distribute", "replicate"], "replica": 3,
                                                             "record_size": ["4KB", "64KB"]},
                                    "protocol": {"warmups": 0, "repetitions": 3}})
    expanded = expand(plan, cluster)
    empty = preview(cluster, plan, expanded, "t@c", str(tmp_path / "none.db"))
    with open_store(store_at) as st:
        cid = st.ensure_campaign("t@c", "t", "h1", {"name": "t"}, "c", {"name": "c"}, "0.1.0")
        status = st.register_runs(cid, expanded.runs)
        rid = status[expanded.runs[0].config_hash][0]
        st.start_run(rid)
        for i in range(3):
            st.add_trial(rid, _trial(i, 2048.0))
        st.finish_run(rid, RunStatus.DONE, regime="cached")
    seen = preview(cluster, plan, expanded, "t@c", store_at)
    one = estimate_seconds(type(expanded)([expanded.runs[0]]), plan.protocol, baselines=None,
                           cost=TrialCost(volume_s=0))
    # the measured run: three trials of 2 s in place of the stated costs' estimate of it
    assert seen.seconds == pytest.approx(empty.seconds - one + 3 * 2.0)
    assert seen.cost_source.startswith("1 of 4 run(s) as their trials took in the store; the rest")


def test_a_setting_keeps_the_newest_undisturbed_baseline_of_its_kind_key_and_nothing_else(store_at: str) -> None:
    """``keep_baseline`` copies, under the new hardware's key, the newest pass of a kind measured under the same
    kind key by another hardware: every undisturbed figure of it, with the campaign that measured it and when;
    never a disturbed figure, another kind, another kind key, or an older pass."""
    from gluster_model.bench.engine import Measured

    def net(value: float, error: str | None = None) -> Measured:
        return Measured("network", "10.0.0.2", "10.0.0.1", "write", value, "bit/s", error, raw="{}")

    with open_store(store_at) as st:
        first = st.ensure_campaign("t@c:link=1gbit,disk=40MB/s", "t", "h", {}, "c", {}, "0")
        second = st.ensure_campaign("t@c:link=1gbit,disk=80MB/s", "t", "h", {}, "c", {}, "0")
        keys = {"network": "net-1gbit", "disk": "disk-40"}
        st.add_baselines("hw-old", first, [net(5e8)], keys)  # an older pass of the same link
        st.add_baselines("hw-a", first, [net(9e8, "disturbed: a hog"), net(9.4e8), net(9.3e8),
                                          Measured("disk", "10.0.0.1", "/b", "seq_write", 4e7, "B/s")], keys)
        st.add_baselines("hw-other", second, [net(4.7e8)], {"network": "net-500mbit"})
        assert st.keep_baseline("network", "net-100mbit", "hw-b") is None and st.baselines("hw-b") == []
        kept = st.keep_baseline("network", "net-1gbit", "hw-b")
        assert kept is not None and kept.campaign == "t@c:link=1gbit,disk=40MB/s" and kept.figures == 2
        rows = st.baselines("hw-b")
        source = [b for b in st.baselines("hw-a") if b.kind == "network" and b.error is None]
        assert [(b.kind, b.value, b.error, b.campaign_id, b.measured_at, b.raw) for b in rows] == \
            [(b.kind, b.value, b.error, b.campaign_id, b.measured_at, b.raw) for b in source]
        assert {b.hardware_key for b in rows} == {"hw-b"} and [b.value for b in rows] == [9.4e8, 9.3e8]
        # a hardware never keeps from itself: its own figures are the store's already
        assert st.keep_baseline("disk", "disk-40", "hw-a") is None
        assert st.keep_baseline("disk", "net-1gbit", "hw-c") is None  # a kind key is a kind's

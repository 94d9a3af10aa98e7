"""A campaign's purpose, hardware setting, drift partner, comparison look, search round and cluster as data:
columns of the store (schemas 5, 6 and 7), read unchanged from stores earlier releases wrote, in every exported row, and pooled from
two stores."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from gluster_model.dataset import export_trials, read_table, trial_frame
from gluster_model.errors import GlmodelError, StoreError
from gluster_model.store import open_store
from gluster_model.store.identity import (CampaignInfo, Look, Purpose, SearchRound, SearchStep, legacy_info,
                                          legacy_look, legacy_step)
from gluster_model.store.schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[2]
V4 = ROOT / "tests" / "data" / "stores" / "v4_store.db"  # written by the release of schema 4 (make_v4_store.py)
V4_EXPORT = V4.with_name("v4_store_export.csv")  # what that release's trial_frame gave for it
V5 = V4.with_name("v5_store.db")  # written by the release of schema 5 (make_v5_store.py): looks only in names
V5_COMPARE = V4.with_name("v5_store_compare.json")  # what that release's `compare --against sides --json` said
V6 = V4.with_name("v6_store.db")  # written by the release of schema 6 (make_v6_store.py): search rounds in names
V6_SEARCH = V4.with_name("v6_store_search.json")  # what that release's search_result said of its search

# What the v4 store's campaigns were, as that release said it in their names and plans.
EXPECTED = {
    "hw@lab:link=1gbit,disk=60MB/s": ("training", {"link": "1gbit", "disk": "60MB/s"}, None, "lab"),
    "hw@lab:link=100mbit,disk=60MB/s": ("training", {"link": "100mbit", "disk": "60MB/s"}, None, "lab"),
    "hw@lab:link=1gbit,disk=60MB/s,again": ("training", {"link": "1gbit", "disk": "60MB/s"},
                                            "hw@lab:link=1gbit,disk=60MB/s", "lab"),
    "verify.hw@lab:link=500mbit": ("verification", {"link": "500mbit"}, None, "lab"),
    "tune_x@lab:link=1gbit": ("search", {"link": "1gbit"}, None, "lab"),
    "study@prod": ("training", {}, None, "prod"),
}


def _infos(path: Path, *, create: bool) -> dict[str, tuple[str, dict[str, str], str | None, str]]:
    with open_store(path, create=create) as st:
        return {n: (i.purpose.value, i.setting_dict(), i.again_of, i.cluster) for n, i in st.campaign_infos().items()}


def test_a_store_of_the_previous_release_reads_the_same_read_only_and_migrated(tmp_path: Path) -> None:
    copy = tmp_path / "v4.db"
    shutil.copy(V4, copy)
    before = V4.read_bytes()
    assert _infos(V4, create=False) == EXPECTED  # read as it is: nothing written to it
    assert V4.read_bytes() == before
    assert _infos(copy, create=True) == EXPECTED  # migrated by a collect: the columns filled once
    with open_store(copy, create=False) as st:
        assert st.version == SCHEMA_VERSION
        migrated = trial_frame(st)
    with open_store(V4, create=False) as st:
        assert st.version == 4
        read_only = trial_frame(st)
    old = pd.read_csv(V4_EXPORT)
    for frame in (read_only, migrated):
        # the previous release's columns, value for value; verification campaigns left out as before
        pd.testing.assert_frame_equal(frame[list(old.columns)].astype(object).where(frame[list(old.columns)].notna()),
                                      old.astype(object).where(old.notna()), check_dtype=False)
        assert "verification" not in set(frame["purpose"])
    assert (migrated.drop(columns="store").equals(read_only.drop(columns="store")))


def test_every_exported_row_says_where_and_why_it_was_measured(tmp_path: Path) -> None:
    out = tmp_path / "t.csv"
    export_trials(V4, out)
    table = read_table(out)
    per = table.drop_duplicates("campaign").set_index("campaign")
    for name, (purpose, setting, again_of, cluster) in EXPECTED.items():
        if purpose == "verification":
            assert name not in per.index
            continue
        row = per.loc[name]
        assert (row["purpose"], row["cluster"]) == (purpose, cluster)
        assert (row["again_of"] if isinstance(row["again_of"], str) else None) == again_of
        assert {k: row.get(f"setting_{k}") for k in setting} == setting
        assert row["store"].endswith("v4_store.db")


def test_two_stores_pool_into_one_table_without_a_collision(tmp_path: Path) -> None:
    """The same campaign names, run ids and configurations in two stores (a copy measured elsewhere): every row
    stays apart by its store, and a store given twice is refused."""
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    shutil.copy(V4, a)
    shutil.copy(V4, b)
    with open_store(b) as st:  # one migrated, one as the old release left it
        assert st.version == SCHEMA_VERSION
    out = tmp_path / "pooled.csv"
    pooled = export_trials([a, b], out)
    single = trial_frame_of(a)
    assert len(pooled) == 2 * len(single)
    keys = pooled[["store", "run_id", "trial"]].astype(str).agg("|".join, axis=1)
    assert keys.is_unique and not pooled[["run_id", "trial"]].astype(str).agg("|".join, axis=1).is_unique
    assert set(pooled["store"]) == {f"sqlite:///{a}", f"sqlite:///{b}"}
    back = read_table(out)
    assert set(back["store"]) == set(pooled["store"]) and len(back) == len(pooled)
    with pytest.raises(GlmodelError, match="given twice"):
        export_trials([a, str(a)], tmp_path / "x.csv")


def trial_frame_of(path: Path) -> pd.DataFrame:
    with open_store(path, create=False) as st:
        return trial_frame(st)


def test_a_name_once_used_is_not_reused_for_another_purpose_or_setting(tmp_path: Path) -> None:
    with open_store(tmp_path / "s.db") as st:
        info = CampaignInfo(Purpose.TRAINING, (("link", "1gbit"),), None, "c")
        cid = st.ensure_campaign("p@c:x", "p", "h", {}, "c", {}, "0", info)
        assert st.ensure_campaign("p@c:x", "p", "h", {}, "c", {}, "0", info) == cid
        with pytest.raises(StoreError, match="measured as training at link=1gbit, not verification"):
            st.ensure_campaign("p@c:x", "p", "h", {}, "c", {}, "0",
                               CampaignInfo(Purpose.VERIFICATION, (("link", "1gbit"),), None, "c"))
        with pytest.raises(StoreError, match="not training at link=2gbit"):
            st.ensure_campaign("p@c:x", "p", "h", {}, "c", {}, "0",
                               CampaignInfo(Purpose.TRAINING, (("link", "2gbit"),), None, "c"))


def test_the_legacy_reading_of_names_and_shipped_tables() -> None:
    assert legacy_info("p@c") == CampaignInfo(Purpose.TRAINING, (), None, "c")
    assert legacy_info("p@c:again").again_of == "p@c"
    assert legacy_info("x", "verify.p").purpose is Purpose.VERIFICATION
    assert legacy_info("t@c", "t", {"design": {"type": "search"}}).purpose is Purpose.SEARCH
    with pytest.raises(ValueError, match="not a campaign purpose"):
        Purpose.parse("fitting")
    # a shipped table from before the columns: its verification campaigns are named as such, and its settings
    # are columns a `--where` can select
    table = read_table(ROOT / "data" / "upgrade_proof_ninth_balanced.csv")
    verifying = table["campaign"].astype(str).str.startswith("verify.")
    assert verifying.any() and (verifying == (table["purpose"] == "verification")).all()
    assert table["setting_link"].notna().all() and set(table["cluster"]) == {"lab"}


def _looks(path: Path) -> dict[str, Look | None]:
    with open_store(path, create=False) as st:
        return {n: i.look for n, i in st.campaign_infos().items()}


def _sides(path: Path, campaign: str | None = None) -> dict[str, object]:
    from gluster_model.compare import compare

    res = compare(str(path), "sides", campaign=campaign).to_json()
    keys = ("config", "metric", "mean_a", "mean_b", "runs", "trials", "ratio", "low", "high", "verdict")
    return {"exit_status": res["exit_status"], "a": res["a"]["campaigns"], "b": res["b"]["campaigns"],
            "rows": [{k: r[k] for k in keys} for r in res["rows"]]}


def test_a_schema_5_store_keeps_its_comparison_read_only_and_migrated(tmp_path: Path) -> None:
    """The looks of an interleaved comparison were only in their names at schema 5: read as it is and migrated,
    the store gives each look's side and number in columns, and compare says what that release said."""
    before = V5.read_bytes()
    said = json.loads(V5_COMPARE.read_text())
    want = {"hw@lab": None, **{f"regression@lab.{s}{k}": Look("regression@lab", s, k) for s in "AB" for k in (1, 2)}}
    assert _looks(V5) == want and V5.read_bytes() == before
    assert _sides(V5) == said and V5.read_bytes() == before
    copy = tmp_path / "v5.db"
    shutil.copy(V5, copy)
    with open_store(copy) as st:
        assert st.version == SCHEMA_VERSION
    assert _looks(copy) == want
    assert _sides(copy) == said and _sides(copy, "regression@lab") == said and _sides(copy, "regression@lab.B2") == said


def test_a_comparison_is_found_by_its_columns_not_its_names(tmp_path: Path) -> None:
    """Looks renamed to anything still pair up by their columns; a training campaign whose name looks like a
    look is none; a name once used for one look is refused for another."""
    copy = tmp_path / "v5.db"
    shutil.copy(V5, copy)
    with open_store(copy):
        pass  # migrated: the columns filled from the old names, once
    said = json.loads(V5_COMPARE.read_text())
    with sqlite3.connect(copy) as db:
        for old, new in (("A1", "before-monday"), ("A2", "before-tuesday"), ("B1", "after-monday"),
                         ("B2", "after-tuesday")):
            db.execute("UPDATE campaigns SET name = ? WHERE name = ?", (new, f"regression@lab.{old}"))
        db.execute("UPDATE campaigns SET name = 'hw@lab.A1' WHERE name = 'hw@lab'")
    got = _sides(copy, "after-tuesday")
    assert got["rows"] == said["rows"] and got["a"] == ["before-monday", "before-tuesday"]
    assert _sides(copy, "regression@lab")["rows"] == said["rows"]
    assert _looks(copy)["hw@lab.A1"] is None and legacy_look("hw@lab.A1", Purpose.TRAINING) is None
    from gluster_model.compare import MismatchError, compare

    with pytest.raises(MismatchError, match="no interleaved comparison hw@lab.A1"):
        compare(str(copy), "sides", campaign="hw@lab.A1")
    with open_store(copy) as st:
        info = st.campaign_infos()["after-monday"]
        assert info.look == Look("regression@lab", "B", 1)
        with pytest.raises(StoreError, match="side B, look 1 of regression@lab"):
            st.ensure_campaign("after-monday", "regression", "h", {}, "lab", {}, "0",
                               CampaignInfo(Purpose.COMPARISON, cluster="lab", look=Look("regression@lab", "A", 1)))
    with pytest.raises(ValueError, match="side A or B"):
        Look("x", "C", 1)


def test_a_campaign_comes_out_of_any_store_release_as_one_typed_record() -> None:
    """Old and new stores give the same record type: its id and name, plan and cluster as recorded, and what it
    is for as values (a Purpose, a setting dict, a Look), never a row to index by column names."""
    from gluster_model.store.identity import Purpose, StoredCampaign

    for path in (V4, V5):
        with open_store(path, create=False) as st:
            every = st.campaigns()
            infos = st.campaign_infos()
            assert every and all(isinstance(c, StoredCampaign) for c in every)
            assert [c.id for c in every] == sorted(c.id for c in every)  # oldest first
            for c in every:
                assert st.campaign(c.name) == c and c.info == infos[c.name]
                assert isinstance(c.purpose, Purpose) and isinstance(c.setting, dict) and c.plan_name
                assert c.side == (c.look.side if c.look else None)
            assert st.campaign("no such campaign") is None
    with open_store(V5, create=False) as st:
        looks = sorted((c.side, c.look.look) for c in st.campaigns() if c.look)
    assert looks == [("A", 1), ("A", 2), ("B", 1), ("B", 2)]


SEARCH_PLAN = {"name": "tune_x", "factors": {"record_size": "4KB", "write_behind": ["on", "off"]},
               "design": {"type": "search", "metric": "write", "budget": 20}, "workload": {"tests": ["write"]}}
V6_STEPS = {"tune_x@lab": SearchStep("tune_x@lab", SearchRound.SCREENING),
            "tune_x@lab.more": SearchStep("tune_x@lab", SearchRound.MORE),
            "tune_x@lab.confirm": SearchStep("tune_x@lab", SearchRound.CONFIRM, 1),
            "tune_x@lab.confirm2": SearchStep("tune_x@lab", SearchRound.CONFIRM, 2),
            "sweep@lab.more": None}  # a training campaign: its name is not read


def _steps(path: Path) -> dict[str, SearchStep | None]:
    with open_store(path, create=False) as st:
        return {n: i.step for n, i in st.campaign_infos().items()}


def _search(path: Path, name: str = "tune_x@lab") -> dict[str, object]:
    from gluster_model.campaign.search import search_result
    from gluster_model.plan.file import PlanFile

    plan = PlanFile.model_validate(SEARCH_PLAN)
    with open_store(path, create=False) as st:
        return {"all looks": search_result(st, name, plan).to_json(),
                "first look": search_result(st, name, plan, looks=1).to_json()}


def test_a_schema_6_store_keeps_its_search_rounds_read_only_and_migrated(tmp_path: Path) -> None:
    """A search's rounds were only in its campaigns' names at schema 6: read as it is and migrated, the store
    gives each campaign's round (and a confirmation's look) as values, and the search says what that release
    said of it (a gain of about x1.29 over both looks, x1.27 over the first)."""
    before = V6.read_bytes()
    said = json.loads(V6_SEARCH.read_text())
    assert _steps(V6) == V6_STEPS and _search(V6) == said and V6.read_bytes() == before
    assert said["all looks"]["verdict"] == "set" and said["first look"]["runs"] == 6
    copy = tmp_path / "v6.db"
    shutil.copy(V6, copy)
    with open_store(copy) as st:
        assert st.version == SCHEMA_VERSION
    with sqlite3.connect(copy) as db:  # the columns themselves, as the migration filled them
        cols = {r[0]: r[1:] for r in db.execute("SELECT name, search, search_round, look FROM campaigns")}
    assert cols["tune_x@lab.confirm2"] == ("tune_x@lab", "confirm", 2) and cols["sweep@lab.more"] == (None, None, None)
    assert cols["tune_x@lab.more"] == ("tune_x@lab", "more", None)
    assert _steps(copy) == V6_STEPS and _search(copy) == said


def test_a_search_is_found_by_its_columns_not_its_names(tmp_path: Path) -> None:
    """Rounds renamed to anything are still the search's, in their order of looks; a campaign named like a round
    of another purpose is none; a name once used for one round is refused for another."""
    copy = tmp_path / "v6.db"
    shutil.copy(V6, copy)
    with open_store(copy):
        pass  # migrated: the columns filled from the old names, once
    said = json.loads(V6_SEARCH.read_text())
    with sqlite3.connect(copy) as db:
        for old, new in ((".more", "extra trials"), (".confirm", "check tuesday"), (".confirm2", "check monday")):
            db.execute("UPDATE campaigns SET name = ? WHERE name = ?", (new, f"tune_x@lab{old}"))
    got = _search(copy)
    for look in ("all looks", "first look"):
        assert {k: v for k, v in got[look].items() if k != "decisions"} == \
            {k: v for k, v in said[look].items() if k != "decisions"}
    assert _search(copy, "sweep@lab")["all looks"]["runs"] == 0  # the training campaign is no round of a search
    assert legacy_step("sweep@lab.more", Purpose.TRAINING) is None
    with open_store(copy) as st:
        assert [c.name for c in st.search_campaigns("tune_x@lab")] == [
            "tune_x@lab", "extra trials", "check tuesday", "check monday"]
        with pytest.raises(StoreError, match="confirm round 2 of search tune_x@lab"):
            st.ensure_campaign("check monday", "tune_x", "h", {}, "lab", {}, "0", CampaignInfo(
                Purpose.SEARCH, cluster="lab", step=SearchStep("tune_x@lab", SearchRound.CONFIRM, 3)))


def test_the_legacy_reading_of_a_search_s_names_and_the_step_s_checks() -> None:
    s = Purpose.SEARCH
    assert legacy_step("t@c:link=1gbit", s) == SearchStep("t@c:link=1gbit", SearchRound.SCREENING)
    assert legacy_step("t@c:link=1gbit.more", s) == SearchStep("t@c:link=1gbit", SearchRound.MORE)
    assert legacy_step("t@c.confirm", s) == SearchStep("t@c", SearchRound.CONFIRM, 1)
    assert legacy_step("t@c.confirm12", s) == SearchStep("t@c", SearchRound.CONFIRM, 12)
    assert legacy_step("t@c.confirm1", s) == SearchStep("t@c.confirm1", SearchRound.SCREENING)  # never written
    assert legacy_step("t@c.confirm", Purpose.COMPARISON) is None
    with pytest.raises(ValueError, match="a look from 1 for a confirmation only"):
        SearchStep("t", SearchRound.MORE, 2)
    with pytest.raises(ValueError, match="a look from 1 for a confirmation only"):
        SearchStep("t", SearchRound.CONFIRM)

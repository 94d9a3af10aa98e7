"""A tuning search on the real lab through `glmodel collect`: its rounds in the store's design log before their
runs, the confirmation measured apart with twice the trials, the answer recomputed from the stored trials, and a
second collect that runs nothing again."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import yaml

from gluster_model.campaign.records import order_coin as first_look_reversed
from gluster_model.campaign.search import search_result
from gluster_model.dataset import trial_frame
from gluster_model.lab import LabState
from gluster_model.plan.file import load_plan
from gluster_model.store import open_store
from gluster_model.store.identity import SearchRound, SearchStep

from .conftest import glmodel, kept_trials

PLAN = {"name": "searchci", "factors": {"layout": "replicate", "replica": 3, "engine": "fio", "file_size": "4MB",
                                        "record_size": "1MB", "threads": 3, "sync": "none",
                                        # the lab's clients read their own brick (choose-local): the read
                                        # policy cannot matter here, and read-ahead on costs reads
                                        "read_hash_mode": [1, 3], "read_ahead": [False, True]},
        "design": {"type": "search", "metric": "read", "budget": 6},
        "workload": {"tests": ["write", "read"]},
        "protocol": {"warmups": 0, "repetitions": 3, "outlier_rule": "none", "remount": "never"},
        "baselines": {"network": False, "disk": False}}


def test_search_rounds_are_logged_confirmed_apart_and_resumed(lab: LabState, tmp_path: Path) -> None:
    path = tmp_path / "search.yaml"
    path.write_text(yaml.safe_dump(PLAN))
    store = str(tmp_path / "s.db")
    args = ("collect", "--cluster", str(lab.cluster_file), "--plan", str(path), "--store", store)
    done = glmodel(*args, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    out = " ".join(done.stdout.split())
    plan = load_plan(path)
    with open_store(store, create=False) as st:
        names = [c.name for c in st.campaigns()]
        search = st.campaign("searchci@lab")
        assert search is not None
        # every campaign of the search (screening and confirmations) is recorded as one, whatever its name, with
        # its round as the store's columns (the confirmation's looks numbered from 1)
        assert {i.purpose.value for i in st.campaign_infos().values()} == {"search"}
        steps = {c.name: c.step for c in st.search_campaigns("searchci@lab")}
        assert set(steps) == set(names) and all(s is not None and s.search == "searchci@lab" for s in steps.values())
        assert steps["searchci@lab"] == SearchStep("searchci@lab", SearchRound.SCREENING)
        assert steps["searchci@lab.confirm"] == SearchStep("searchci@lab", SearchRound.CONFIRM, 1)
        assert sorted(s.look for s in steps.values() if s and s.round is SearchRound.CONFIRM) == \
            list(range(1, 1 + sum(1 for n in names if ".confirm" in n)))
        log = st.design_log(int(search.id))
        screening = st.runs(int(search.id))
        result = search_result(st, "searchci@lab", plan)
        confirm = st.campaign("searchci@lab.confirm")
        assert confirm is not None
        confirm_runs = st.runs(int(confirm.id))
        frame = pd.concat([trial_frame(st, c) for c in ("searchci@lab.confirm", "searchci@lab.confirm2")
                           if st.campaign(c) is not None], ignore_index=True)
        counts = {r.id: len(kept_trials(st.trials(r.id))) for r in confirm_runs}
        screened_trials = [len(kept_trials(st.trials(r.id))) for r in screening]
        all_runs = sum(len(st.runs(int(c.id))) for c in st.campaigns())
        every = pd.concat([trial_frame(st, str(c.name)) for c in st.campaigns()], ignore_index=True)
    # round 0 is the defaults and one change per option level, each decided (logged) before it ran
    reasons = [e.reason for e in log if e.round == 0]
    assert reasons[0] == "defaults" and sorted(reasons[1:]) == ["screening: read_ahead=True",
                                                                "screening: read_hash_mode=3"]
    assert {e.config_hash for e in log if e.round == 0} <= {r.config_hash for r in screening}
    assert all(n >= 3 for n in screened_trials)
    # the confirmation: its own campaign, twice the protocol's trials, the defaults always among its runs
    assert "searchci@lab.confirm" in names and all(n == 6 for n in counts.values())
    defaults_hash = screening[0].config_hash
    assert defaults_hash in {r.config_hash for r in confirm_runs}
    assert result.runs == all_runs <= 6
    if result.changed:  # the answer is recomputed from the confirmation's stored runs
        # the two arms in the order the search's name draws, the second look (where there is one) the other way
        order = [r.config_hash for r in confirm_runs]
        assert (order[0] != defaults_hash) == first_look_reversed("searchci@lab")
        looks = [frame[frame["campaign"] == c] for c in ("searchci@lab.confirm", "searchci@lab.confirm2")]
        if not looks[1].empty:
            with open_store(store, create=False) as st:
                second = st.campaign("searchci@lab.confirm2")
                assert second is not None
                assert [r.config_hash for r in st.runs(int(second.id))] == order[::-1]
        # the ratio of the arms' mean run log, each run one look: computed here from the trials alone
        centre = {}
        for is_defaults in (True, False):
            means = [sum(map(math.log, values)) / len(values) for look in looks
                     if len(values := look[(look["config_hash"] == defaults_hash) == is_defaults]["read"].tolist())]
            assert means
            centre[is_defaults] = sum(means) / len(means)
        assert result.gain is not None and abs(result.gain.ratio - math.exp(centre[False] - centre[True])) < 1e-9
        assert result.gain.low < result.gain.ratio < result.gain.high
        assert result.confirmed == (result.gain.low > 1)  # advice to set it only when clear of the defaults
        assert bool(result.commands()) == result.confirmed
        assert result.verdict in ("set", "keep", "undecided")
    else:
        assert len(confirm_runs) == 1 and result.commands() == []
    assert ("keep Gluster's defaults" in out) != result.confirmed
    assert ("undecided, so keep Gluster's defaults for now" in out) == (result.verdict == "undecided")
    # every configuration's trials over all rounds, as the store kept them, printed beside the answer
    by_config = every.dropna(subset=["read"]).groupby("config_hash")["read"]
    assert sorted((c.trials, round(c.worst, 6), round(c.best, 6)) for c in result.candidates) == sorted(
        (len(v), round(v.min(), 6), round(v.max(), 6)) for _, v in by_config)
    defaults_row = next(c for c in result.candidates if c.changes == "defaults")
    assert defaults_row.trials == len(by_config.get_group(defaults_hash)) >= 9  # screening + more + confirmation
    assert "every candidate over all its trials" in out and f"{defaults_row.trials} trials mean" in out
    # a second collect finds every round done and runs nothing
    again = glmodel(*args, timeout=600)
    assert again.returncode == 0, again.stderr[-2000:]
    with open_store(store, create=False) as st:
        assert sum(len(st.runs(int(c.id))) for c in st.campaigns()) == all_runs
        trials_after = sum(len(st.trials(r.id)) for c in st.campaigns() for r in st.runs(int(c.id)))
    assert trials_after >= 3 * all_runs

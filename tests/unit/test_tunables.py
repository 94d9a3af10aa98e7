"""The options administrators ask about: one registry read by plans, the dataset and tune; advice that sets them
prints the commands, the live values to check first and what each trades."""

from __future__ import annotations

import itertools
import typing
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gluster_model.bench.workload import FixedWorkload
from gluster_model.config.cluster import cluster_from_data
from gluster_model.dataset import BOOLEAN, CATEGORICAL, FAMILIES, GLUSTER_DEFAULTS, NUMERIC
from gluster_model.gluster.tunables import ADMIN_TUNABLES, TRANSLATOR_FACTORS, TRANSLATORS, TUNABLES, options_of
from gluster_model.gluster.volume import VolumeConfig, known_options
from gluster_model.model import artifact
from gluster_model.model.fit import fit_frame
from gluster_model.plan.factors import FACTORS, realize
from gluster_model.plan.file import PlanFile, expand
from gluster_model.predict.tune import OPTION_KEYS, tune
from gluster_model.present.tune import advice_lines

ASKED = {"read_hash_mode", "choose_local", "client_io_threads", "client_event_threads", "server_event_threads",
         "parallel_readdir", "nl_cache", "metadata_cache", "write_behind_window", "io_thread_count", "cache_size",
         "read_ahead"}


def test_every_option_admins_ask_about_is_a_factor_a_feature_and_tunable() -> None:
    assert ASKED <= set(TUNABLES)
    for t in TUNABLES.values():
        assert t.note and t.name in FACTORS and t.name in OPTION_KEYS and t.name in GLUSTER_DEFAULTS
        assert t.name in {*NUMERIC, *CATEGORICAL, *BOOLEAN} and t.name in FAMILIES["gluster"]
        # every key a tunable sets is one GlusterFS 10 knows (a group's members, a switch's companions)
        assert set(t.settings(t.levels[0] if t.levels else t.default)) <= known_options() | {t.option}
        for level in t.levels:
            assert level != t.default  # a level a plan tries is a change
    assert FACTORS["read_hash_mode"].choices == ("0", "1", "2", "3", "4", "5")


def test_the_study_translators_are_named_once() -> None:
    # the cluster file's translator keys are the registry's, and a point switches each by its own option
    allowed = typing.get_args(typing.get_args(VolumeConfig.model_fields["translators"].annotation)[0])
    assert set(allowed) == set(TRANSLATORS) == set(TRANSLATOR_FACTORS.values())
    for factor, key in TRANSLATOR_FACTORS.items():
        t = TUNABLES[factor]
        opts = realize({factor: not t.default}, FixedWorkload(tests=["write"]), {}).volume.volume_options()
        assert opts[TRANSLATORS[key]] == t.value_text(not t.default) and TRANSLATORS[key] == t.option


def test_a_point_sets_each_option_and_its_companions() -> None:
    run = realize({"layout": "replicate", "replica": 3, "read_hash_mode": "3", "parallel_readdir": True,
                   "client_event_threads": 4, "write_behind_window": 4 << 20, "metadata_cache": True},
                  FixedWorkload(tests=["read"]), {})
    opts = run.volume.volume_options()
    assert opts["cluster.read-hash-mode"] == "3" and opts["client.event-threads"] == "4"
    assert opts["performance.parallel-readdir"] == "on" and opts["performance.readdir-ahead"] == "on"
    assert opts["performance.write-behind-window-size"] == "4MB"
    assert opts["features.cache-invalidation"] == "on" and opts["performance.md-cache-timeout"] == "600"
    assert run.features["read_hash_mode"] == "3" and run.features["metadata_cache"] is True
    # a different option is a different volume and run
    other = realize({"layout": "replicate", "replica": 3, "read_hash_mode": "1"}, FixedWorkload(tests=["read"]), {})
    assert other.volume.name != run.volume.name and other.config_hash != run.config_hash
    with pytest.raises(ValueError, match="not with md_cache off"):
        realize({"metadata_cache": True, "md_cache": False}, FixedWorkload(), {})
    with pytest.raises(ValueError, match="which a factor of the plan sets too"):
        realize({"client_event_threads": 4}, FixedWorkload(), {"client.event-threads": "8"})
    # nl-cache and metadata-cache share cache-invalidation: both on agree, so both can be set
    assert options_of({"nl_cache": True, "metadata_cache": True})["features.cache-invalidation"] == "on"


def test_a_plan_varies_them_and_refuses_a_level_gluster_has_not() -> None:
    cluster = cluster_from_data({"name": "c", "servers": [{"host": f"10.0.0.{i}", "brick_paths": ["/b"]}
                                                          for i in (1, 2, 3)],
                                 "clients": ["10.0.0.1", "10.0.0.2"]}, "c.yaml", Path("."))
    plan = PlanFile.model_validate({"name": "p", "factors": {"layout": "replicate", "replica": 2,
                                                           "read_hash_mode": [1, 3], "nl_cache": ["off", "on"]}})
    runs = expand(plan, cluster).runs
    assert len(runs) == 4 and {r.features["read_hash_mode"] for r in runs} == {"1", "3"}
    with pytest.raises(ValueError, match="not one of 0, 1, 2, 3, 4, 5"):
        PlanFile.model_validate({"name": "p", "factors": {"read_hash_mode": [9]}})


def _frame(seed: int = 0) -> pd.DataFrame:
    """Known truth: read-hash-mode 3 raises reads 60% (two clients' files no longer share one brick), client
    event threads do nothing, and parallel-readdir does nothing for these reads."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, (mode, threads, pr) in enumerate(itertools.product(["1", "2", "3"], [2, 4, 8], [False, True])):
        read = 100 * (1.6 if mode == "3" else 1.25 if mode == "2" else 1)
        for _ in range(3):
            rows.append({"read_hash_mode": mode, "client_event_threads": threads, "parallel_readdir": pr,
                         "config_hash": f"c{i}", "read": read * rng.lognormal(0, 0.03)})
    return pd.DataFrame(rows)


def test_tune_sets_an_admin_option_with_its_trade_off_and_the_live_check(tmp_path: Path) -> None:
    fits, _ = fit_frame(_frame(), "gluster", ["read"], models=["loglinear"], importance_n=64, bootstrap=0,
                        cv_repeats=1)
    path = tmp_path / "m.json"
    artifact.save(artifact.build(fits, {"data": "synthetic"}), path)
    advice = tune(artifact.load(path), [], ["read"], volume="vol0")
    (read,) = advice.metrics
    assert read.recommended.options["read_hash_mode"] == "3"
    assert read.commands("vol0") == ["gluster volume set vol0 cluster.read-hash-mode 3"]
    assert read.checks("vol0") == ["gluster volume get vol0 cluster.read-hash-mode"]
    assert set(read.safety()) == {"read_hash_mode"}
    assert "client_event_threads" in read.not_mattering and "parallel_readdir" in read.not_mattering
    text = "\n".join(advice_lines(advice))
    assert "gluster volume get vol0 cluster.read-hash-mode" in text
    assert text.index("volume get") < text.index("volume set")  # check first, then set
    assert "trade-off of cluster.read-hash-mode: which replica serves a file's reads" in text
    assert 1.5 < read.recommended.value / read.defaults.value < 1.7


def test_a_group_is_one_command_and_its_members_are_checked() -> None:
    t = TUNABLES["metadata_cache"]
    assert t.commands("v", True) == ["gluster volume set v group metadata-cache"]
    assert t.commands("v", False) == []
    assert "performance.md-cache-timeout" in t.keys and "features.cache-invalidation" in t.keys
    assert {a.name for a in ADMIN_TUNABLES if a.kind == "group"} == {"nl_cache", "metadata_cache"}

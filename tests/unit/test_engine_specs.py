"""The engines are one table: what each can run, the plan's engine factor, estimates and the client checks read it."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from gluster_model.bench.engine_specs import ENGINE_NAMES, ENGINE_SPECS
from gluster_model.bench.engines import TRIAL_ENGINES
from gluster_model.bench.metrics import FILE_TESTS
from gluster_model.bench.workload import Workload
from gluster_model.config.cluster import cluster_from_data
from gluster_model.plan.factors import FACTORS
from gluster_model.preflight import CLIENT_TOOLS, judge_host, parse_probe_output, probe_script


def test_every_engine_that_runs_trials_has_its_spec_and_is_a_plan_level() -> None:
    assert set(TRIAL_ENGINES) == set(ENGINE_SPECS) and FACTORS["engine"].choices == ENGINE_NAMES
    for name, spec in ENGINE_SPECS.items():
        assert TRIAL_ENGINES[name].name == name and spec.tests
        # each test the spec claims is accepted with this engine, and one it lacks is refused naming who runs it
        tests = sorted(spec.tests - set(FILE_TESTS)) or ["file_create"]
        assert Workload(engine=name, tests=tests, file_size="64KB", record_size="4KB").engine == name
        for test in {"random", "file_create"} - spec.tests:
            with pytest.raises(ValueError, match=f"engine {name} runs .*not {test}; they run with engine"):
                Workload(engine=name, tests=[test])
    # a read needs the written files with iozone and dd; fio lays out its own file
    assert Workload(engine="dd", tests=["read"]).expected_metrics() == ["write", "read"]
    assert Workload(engine="fio", tests=["read"]).expected_metrics() == ["read"]


def test_a_client_is_checked_for_every_engine_tool_and_a_missing_one_names_its_fix(tmp_path: Path) -> None:
    c = cluster_from_data({"servers": [{"host": "10.0.0.1", "brick_paths": ["/b"]}], "clients": ["10.0.0.2"]},
                          "t.yaml", Path("/"))
    client = next(h for h in c.hosts if h.is_client and not h.is_server)
    script = probe_script(client)
    sections = parse_probe_output(subprocess.run(["sh", "-c", script], capture_output=True, text=True,
                                                 timeout=60).stdout)
    assert {t.name for t in CLIENT_TOOLS} == {"iozone", "fio"} and {"iozone", "fio"} <= set(sections)
    # the same probe with fio absent: one failing check naming the package
    sections["fio"] = (127, "")
    rep = judge_host(client, sections, list(c.servers), 0)
    bad = {ch.name: ch for ch in rep.checks if not ch.ok}
    assert set(bad) == {"fio"} and bad["fio"].fix == "install it: apt-get install fio"
    assert rep.facts["fio_version"] is None and rep.facts["iozone_version"]
    assert shlex.split(script)

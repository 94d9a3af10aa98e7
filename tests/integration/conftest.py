"""One real 3-node lab for the integration tests: glusterd + sshd per node, each in a network namespace (10.213.1.x)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any
from pathlib import Path

import pytest

from gluster_model.lab import LabState, lab_down, lab_up, restore, snapshot


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "integration" in str(item.path):
            item.add_marker(pytest.mark.lab)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabState]:
    if os.geteuid() != 0:
        pytest.fail("the integration tests need root to run the GlusterFS lab (scripts/test.sh runs them as root)")
    lab_dir = tmp_path_factory.mktemp("lab")
    # 1 GiB loop images (when a test gives a node a disk): formatting 4 GiB ones would cost the suite seconds each.
    state = lab_up(lab_dir, nodes=3, brick_size=1 << 30)
    try:
        yield state
    finally:
        lab_down(lab_dir)


@pytest.fixture
def lab_put_back(lab: LabState) -> Iterator[LabState]:
    """The session lab, its every node's link, disk, RAM and CPU put back as they were after the test, passed
    or failed: a test that dies with the lab throttled must not slow or break the tests after it."""
    before = snapshot(LabState.load(lab.path) or lab)
    try:
        yield lab
    finally:
        now = LabState.load(lab.path)
        if now is not None and snapshot(now) != before:
            restore(now, before)


def kept_trials(trials: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trials a run kept. On a busy machine collect flags a trial that another process disturbed and
    measures it again, by design: the flagged one stays in the store with its reason, checked here, and is not
    a trial stored twice."""
    flagged = [t for t in trials if t["outlier"]]
    assert all(t["flagged_because"] for t in flagged), [t["idx"] for t in flagged if not t["flagged_because"]]
    return [t for t in trials if not t["outlier"]]


def glmodel(*args: str, check: bool = False, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess, as a user would."""
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "gluster_model.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"glmodel {' '.join(args)} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture
def cluster_file(lab: LabState) -> Path:
    return lab.cluster_file


def fitted_model(factory: pytest.TempPathFactory, name: str, write_table: Callable[[Path], None],
                 *fit_args: str) -> Path:
    """A model file `glmodel fit --data` writes from the table ``write_table`` makes, as a user would fit it."""
    d = factory.mktemp(name)
    write_table(d / "train.csv")
    glmodel("fit", "--data", str(d / "train.csv"), *fit_args, "--out", str(d / "model.json"), check=True,
            timeout=300)
    return d / "model.json"

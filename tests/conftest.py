from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--busy-core", action="store_true",
                     help="run the tests with a CPU-bound process on one core beside them, as on a machine doing "
                          "other work: the suite must pass all the same (bash scripts/test.sh --busy-core)")


@pytest.fixture(scope="session", autouse=True)
def busy_core(request: pytest.FixtureRequest) -> Iterator[int | None]:
    """With --busy-core: one process spinning on the last core for the whole session (its pid), ended after."""
    # under pytest-xdist every worker runs session fixtures: the first alone spins, one core busy as without it
    if not request.config.getoption("--busy-core") or os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        yield None
        return
    core = max(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 0
    hog = subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"])
    try:
        yield hog.pid
    finally:
        hog.kill()
        hog.wait()


@pytest.fixture
def data_dir() -> Path:
    return DATA

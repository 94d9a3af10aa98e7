"""The throughput metrics glmodel measures, named once: iozone's six, and which tests give which.

dd measures ``write`` and ``read`` too (per reader times come as ``read_time.N`` measurements, not metrics).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

Metric = Literal["write", "rewrite", "read", "reread", "random_read", "random_write"]
METRICS: tuple[Metric, ...] = get_args(Metric)

Test = Literal["write", "read", "random"]
# A test's metrics, first the one it is named for; the re-test (rewrite, reread) comes only with retests.
TEST_METRICS: dict[str, tuple[Metric, ...]] = {"write": ("write", "rewrite"), "read": ("read", "reread"),
                                               "random": ("random_read", "random_write")}
RETESTS: frozenset[Metric] = frozenset({"rewrite", "reread"})


def first_metric(tests: Sequence[str]) -> Metric:
    """The metric a list of tests is first measured by (``write`` when there are none)."""
    return TEST_METRICS[tests[0]][0] if tests else "write"

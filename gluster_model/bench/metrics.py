"""The metrics glmodel measures, named once: iozone's six throughputs, the small-file rates fio measures, and which
tests give which.

dd measures ``write`` and ``read`` too (per reader times come as ``read_time.N`` measurements, not metrics). fio
measures the six throughputs and the ``file_*`` rates (files per second over many small files per thread); its
IOPS and latency percentiles are kept as measurements beside each metric (``write.iops``, ``write.p99_us``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

Metric = Literal["write", "rewrite", "read", "reread", "random_read", "random_write",
                 "file_create", "file_stat", "file_list", "file_read", "file_delete"]
METRICS: tuple[Metric, ...] = get_args(Metric)

Test = Literal["write", "read", "random", "file_create", "file_stat", "file_list", "file_read", "file_delete"]
TESTS: tuple[Test, ...] = get_args(Test)
# A test's metrics, first the one it is named for; the re-test (rewrite, reread) comes only with retests.
TEST_METRICS: dict[str, tuple[Metric, ...]] = {"write": ("write", "rewrite"), "read": ("read", "reread"),
                                               "random": ("random_read", "random_write"),
                                               **{t: (t,) for t in TESTS if t.startswith("file_")}}  # type: ignore[misc]
RETESTS: frozenset[Metric] = frozenset({"rewrite", "reread"})
# Small-file tests (engine fio): each runs over ``files`` files of ``file_size`` per thread, in this order.
FILE_TESTS: tuple[Test, ...] = tuple(t for t in TESTS if t.startswith("file_"))
# The unit each metric is stored in: throughputs in kB/s as iozone prints them, small-file rates in files/s.
FILES_PER_S = "files/s"
UNITS: dict[str, str] = {m: (FILES_PER_S if m.startswith("file_") else "kB/s") for m in METRICS}


def first_metric(tests: Sequence[str]) -> Metric:
    """The metric a list of tests is first measured by (``write`` when there are none)."""
    return TEST_METRICS[tests[0]][0] if tests else "write"


def shown_unit(metric: str) -> str:
    """The unit a metric is modelled and shown in: files/s for the small-file rates, MB/s for throughputs."""
    return FILES_PER_S if UNITS.get(metric) == FILES_PER_S else "MB/s"


def show_stored(metric: str, value: float, unit: str | None = None) -> str:
    """A stored figure as people read it, in ``unit`` as stored (by default the metric's): ``write 16.9 MB/s``
    (stored in kB/s), ``file_create 614 files/s``, and the measurements kept beside a metric as stored,
    ``write.iops 512 op/s``, ``write.p99_us 92,800 µs``."""
    unit = unit or UNITS.get(metric, "kB/s")
    if unit == "kB/s":
        return f"{metric} {value / 1024:,.1f} MB/s"
    return f"{metric} {value:,.0f} {'µs' if unit == 'us' else unit}"

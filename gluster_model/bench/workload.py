"""A run's workload, the one spec every trial engine reads: threads, file and record size, tests, sync mode,
and which engine and filesystem measure it."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..config.cluster import Frozen
from ..units import parse_size
from .engine_specs import ENGINE_NAMES, ENGINE_SPECS
from .metrics import FILE_TESTS, RETESTS, TEST_METRICS, TESTS, Test

# iozone test numbers; write (-i 0) always runs first because the others need its files.
_TEST_NUMBER = {"write": "0", "read": "1", "random": "2"}
FILES_DEFAULT = 1000
# Settings added after the first store format, with their defaults: at the default they stay out of a run's
# identity (its config hash) and features, so runs stored before them keep both; readers fill them back in.
LATER_SETTINGS: dict[str, Any] = {"engine": "iozone", "target": "gluster", "degraded": False, "cache": None,
                                  "files": FILES_DEFAULT, "shared_read": False, "large_files": 1}


class FixedWorkload(Frozen):
    """The workload settings every run of a plan shares (a plan's ``workload:``; varied ones are its factors,
    and ``plan.factors.realize`` makes a run's ``Workload`` of both)."""

    tests: list[Test] = ["write", "read", "random"]
    include_flush: bool = True
    include_close: bool = True
    retests: bool = False


class Workload(Frozen):
    """A run's workload. ``engine`` picks iozone (distributed, -+m), dd (whole files, one process per thread,
    any block size) or fio (``fio --server`` on each client: the same throughput tests with IOPS and latency, and
    the small-file ``file_*`` tests over ``files`` files per thread); ``target`` reads and writes the Gluster
    mount or each client's own filesystem."""

    threads: int = Field(default=1, ge=1, le=1024)
    file_size: str = "64MB"
    record_size: str = "64KB"
    tests: list[Test] = ["write", "read", "random"]
    sync: Literal["none", "osync", "odirect"] = "none"
    include_flush: bool = True   # -e: fsync/fflush inside the timing, so writes are not just page cache
    include_close: bool = True   # -c: close() inside the timing (NFS/FUSE flush on close)
    retests: bool = False        # without it -+n: no rewrite/reread passes
    clients: int | None = Field(default=None, ge=1, description="how many of the cluster's clients to use")
    engine: str = Field(default="iozone", description=f"one of {', '.join(ENGINE_NAMES)} (bench.engine_specs)")
    files: int = Field(default=FILES_DEFAULT, ge=1, le=1_000_000,
                       description="files per thread for the small-file tests (engine fio)")
    target: Literal["gluster", "local"] = "gluster"
    degraded: bool = Field(default=False, description="read with one replica's brick stopped")
    cache: Literal["dropped", "kept"] | None = Field(default=None, description="drop caches before each pass, or "
                                                     "keep them warm (default: the protocol's drop_caches)")
    shared_read: bool = Field(default=False, description="every thread of every client reads one file, the first "
                              "client's first (one dataset many hosts read; engine fio)")
    large_files: int = Field(default=1, ge=1, le=4096,
                             description="files each thread's file_size is spread over for the large-file tests, "
                             "each random record going to one of them drawn at random (several VM images or data "
                             "files a process works on; engine fio)")

    @field_validator("file_size", "record_size")
    @classmethod
    def _size(cls, v: str) -> str:
        n = parse_size(v)
        if n < 1:
            raise ValueError("sizes are at least 1 byte")
        # Whole kilobytes keep iozone's unit (its -s/-r take kB); dd takes bytes.
        return f"{n // 1024}k" if n % 1024 == 0 else str(n)

    @field_validator("tests")
    @classmethod
    def _tests(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError(f"name at least one test: {', '.join(TESTS)}")
        return sorted(set(v), key=TESTS.index)

    @model_validator(mode="before")
    @classmethod
    def _whole_blocks(cls, data: Any) -> Any:
        """An engine that moves whole blocks (dd): a file is rounded up to a whole number of blocks (at least one),
        so the size recorded is the size moved."""
        spec = ENGINE_SPECS.get(str(data.get("engine"))) if isinstance(data, dict) else None
        if isinstance(data, dict) and spec is not None and spec.blocks:
            try:
                size, block = parse_size(data.get("file_size", "64MB")), parse_size(data.get("record_size", "64KB"))
            except ValueError:
                return data  # the field validators say what is wrong
            if block > 0 and size % block:
                data = {**data, "file_size": str(-(-size // block) * block)}
        return data

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, v: str) -> str:
        if v not in ENGINE_SPECS:
            raise ValueError(f"engine {v!r} is not one of {', '.join(ENGINE_NAMES)}")
        return v

    @model_validator(mode="after")
    def _engine(self) -> Workload:
        spec = ENGINE_SPECS[self.engine]
        why = spec.refusal(self.tests, parse_size(self.file_size), parse_size(self.record_size),
                           self.target != "gluster" or self.degraded)
        if why:
            raise ValueError(why)
        if self.shared_read and (self.engine != "fio" or "write" not in self.tests or "read" not in self.tests):
            raise ValueError("shared_read needs engine fio and the tests write (which lays out the file every "
                             "client then reads) and read")
        if self.large_files > 1:
            self._check_large_files()
        files = self.file_tests
        if files and files[0] != "file_create":
            raise ValueError("the small-file tests start with file_create (the others need its files)")
        return self

    def _check_large_files(self) -> None:
        """Several files a thread: fio's nrfiles, each file a whole number of records."""
        if self.engine != "fio" or self.shared_read:
            raise ValueError("large_files above 1 needs engine fio (its nrfiles) and no shared_read (one file every "
                             "client reads)")
        size, record = parse_size(self.file_size), parse_size(self.record_size)
        if size % (self.large_files * record):
            raise ValueError(f"large_files {self.large_files} splits file_size {self.file_size} into files that "
                             f"are not whole {self.record_size} records: make file_size a multiple of "
                             f"{self.large_files} x record_size")

    @property
    def identity(self) -> dict[str, object]:
        """The workload as it enters a run's config hash: settings at their defaults that older versions did not
        have are left out, so runs stored before them keep their hash (and a resume finds them done)."""
        out = self.model_dump(mode="json")
        for key, default in LATER_SETTINGS.items():
            if out.get(key) == default:
                out.pop(key)
        return out

    @property
    def file_tests(self) -> list[str]:
        """The small-file tests of this workload, in the order they run."""
        return [t for t in self.tests if t in FILE_TESTS]

    def expected_metrics(self) -> list[str]:
        large = [t for t in self.tests if t not in FILE_TESTS]
        # iozone and dd write first (the other tests need their files); fio lays out a file it reads itself
        if large and ENGINE_SPECS[self.engine].writes_first:
            large = ["write", *(t for t in large if t != "write")]
        tests = [*large, *self.file_tests]
        return [m for t in tests for m in TEST_METRICS[t] if self.retests or m not in RETESTS]

"""What each trial engine can measure, named once: its tests, the targets and sizes it takes, whether a read needs
the write pass's files, and the tool `glmodel check` looks for on the clients.

Pure data and rules (no remote side effects), so the workload's validation, the plan's ``engine`` factor,
estimates and the preflight checks all read one table; the engines that run trials are registered under the
same names in ``bench.engines``. A new engine is its spec here, its module, and its line in ``bench.engines``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .metrics import FILE_TESTS, TESTS

IOZONE_MAX_RECORD = 16 << 20
_LARGE = frozenset(t for t in TESTS if t not in FILE_TESTS)


@dataclass(frozen=True)
class ToolCheck:
    """A program a host needs: a shell line that prints its version on one line (non-zero when the program is
    missing) and how to install it."""

    name: str
    script: str
    fix: str


FIO_TOOL = ToolCheck("fio", "fio --version", "install it: apt-get install fio")


def _any_size(file_size: int, record_size: int) -> str | None:
    return None


def _iozone_sizes(file_size: int, record_size: int) -> str | None:
    if file_size % 1024 or record_size % 1024:
        return "iozone sizes are whole kilobytes (at least 1KB); use engine dd below that"
    if record_size > IOZONE_MAX_RECORD:
        return "iozone records go up to 16MB; use engine dd above that"
    return None


@dataclass(frozen=True)
class EngineSpec:
    """One engine's abilities: ``tests`` it runs, whether it measures ``local`` targets and degraded reads,
    whether its read needs the write pass's files (``writes_first``), whether it moves whole blocks only (a file
    is then rounded up to whole ``blocks``), a size rule and the client tool."""

    name: str
    tests: frozenset[str]
    local: bool = False
    writes_first: bool = True
    blocks: bool = False
    sizes: Callable[[int, int], str | None] = _any_size
    tool: ToolCheck | None = None

    def refusal(self, tests: Sequence[str], file_size: int, record_size: int, local: bool) -> str | None:
        """Why this engine cannot run the workload (None: it can), in a sentence that names the way out."""
        if local and not self.local:
            able = [s.name for s in ENGINE_SPECS.values() if s.local]
            return (f"engine {self.name} measures the Gluster mount; local targets and degraded reads run with "
                    f"engine {' or '.join(able)}")
        foreign = [t for t in tests if t not in self.tests]
        if foreign:
            able = [s.name for s in ENGINE_SPECS.values() if set(foreign) <= s.tests]
            where = f"; they run with engine {' or '.join(able)}" if able else ""
            return f"engine {self.name} runs {', '.join(t for t in TESTS if t in self.tests)}, not " \
                   f"{', '.join(foreign)}{where}"
        return self.sizes(file_size, record_size)


ENGINE_SPECS: Mapping[str, EngineSpec] = {s.name: s for s in (
    # distributed iozone (-+m): the study's tool and the default
    EngineSpec("iozone", _LARGE, sizes=_iozone_sizes,
               tool=ToolCheck("iozone", "command -v iozone >/dev/null && iozone -v | grep -m1 Version",
                              "install iozone3 (Debian non-free): scripts/setup.sh does it")),
    # whole files, one dd per thread, any block size; also the client's own filesystem
    EngineSpec("dd", frozenset({"write", "read"}), local=True, blocks=True),
    # fio --server on each client: throughputs with IOPS and latency, and the small-file tests
    EngineSpec("fio", _LARGE | frozenset(FILE_TESTS), writes_first=False,
               tool=FIO_TOOL),
)}
ENGINE_NAMES: tuple[str, ...] = tuple(ENGINE_SPECS)

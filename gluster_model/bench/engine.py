"""The one shape every trial engine shares: a request in, an ``EngineResult`` out.

An engine is a module with a spec (its workload), a run over a session (an ``Executor`` on a cluster) and a pure
parser; ``TrialEngine`` is what the collector asks of it, so the collector never branches on which engine
measured a trial, and a test can hand it an engine of its own. The registry of engines lives in
``bench.engines``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..errors import GlmodelError

if TYPE_CHECKING:
    from ..config.cluster import ClusterSpec, Host
    from ..remote.executor import Executor
    from .workload import Workload

# (metric, value, unit, slowest child's value, fastest child's value)
Measurement = tuple[str, float, str, "float | None", "float | None"]


@dataclass(frozen=True)
class TrialRequest:
    """One trial as the collector asks for it: where, what, and how long it may take."""

    cluster: ClusterSpec
    executor: Executor
    volume: str
    workload: Workload
    points: Mapping[str, str]  # client address -> mount point of the volume
    drop_caches: bool
    timeout: float
    startup_timeout: float


@dataclass
class EngineResult:
    """What a trial engine measured: aggregate metrics, every measurement, the raw output, and who failed it.

    ``metrics`` is empty when the trial failed; ``error`` says why and ``host`` names the host at fault where the
    engine knows it. ``raw`` maps a name (``iozone``, ``client_file``, ``dd``) to text kept in the store as is.
    """

    metrics: dict[str, float]
    measurements: list[Measurement]
    raw: dict[str, str]
    argv: list[str]
    seconds: float
    error: str | None = None
    host: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def raw_text(self) -> str:
        return "\n".join(self.raw.values())


@dataclass(frozen=True)
class Measured:
    """One figure of a baseline engine (iperf3, fio) in the shape the store keeps: what was measured where.

    ``target`` is the far end (the server of a network pair, the brick path of a disk test); ``value`` is None
    when the measurement failed, and ``error`` says why. Raw output is kept once per run of the tool.
    """

    kind: str  # network | disk
    host: str
    target: str
    test: str
    value: float | None
    unit: str
    error: str | None = None
    raw: str | None = None


class TrialEngine(Protocol):
    """A benchmark engine the collector can run trials with."""

    name: str

    def run(self, request: TrialRequest) -> EngineResult:
        """Measure one trial; failures are returned (``error``), never raised, so the trial is stored."""
        ...

    def after_run(self, request: TrialRequest) -> None:
        """Clean up what the run's trials shared (dd keeps its files between trials); may raise GlmodelError."""
        ...

    def overhead_seconds(self, workload: Workload, first_test_s: float) -> float:
        """A trial's seconds beyond moving its data, for estimates (``first_test_s``: the start-up of a trial's
        first test as calibrated on the store, or the lab's default)."""
        ...


def used_clients(cluster: ClusterSpec, points: Mapping[str, str], workload: Workload,
                 volume: str | None = None) -> list[Host]:
    """The clients a trial runs on: those with the volume mounted, in cluster-file order, the first
    ``workload.clients`` of them when it says how many."""
    clients = [h for h in cluster.clients if h.address in points][: workload.clients or None]
    if not clients:
        raise GlmodelError(f"volume {volume} is not mounted on any client" if volume
                           else "the volume is not mounted on any client")
    return clients


def spread(threads: int, clients: list[Host]) -> dict[str, int]:
    """Threads per client, dealt round-robin as iozone deals its threads (clients left with none are absent)."""
    out: dict[str, int] = {}
    for i in range(threads):
        h = clients[i % len(clients)]
        out[h.address] = out.get(h.address, 0) + 1
    return out

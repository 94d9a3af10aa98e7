"""A run's cache regime and the file sizes that put it where the plan wants it (past the clients' RAM, or long
enough for a target time)."""

from __future__ import annotations

import math

from ..bench.workload import Workload
from ..units import parse_size

def regime(workload: Workload, client_ram: int | None, clients_used: int) -> str:
    """Which cache regime a run lands in: direct (O_DIRECT), cached (data per client fits its RAM), uncached."""
    if workload.sync == "odirect":
        return "direct"
    if workload.cache is not None:  # the plan said: caches dropped before each pass, or kept warm
        return "uncached" if workload.cache == "dropped" else "cached"
    if not client_ram:
        return "unknown"
    per_client = parse_size(workload.file_size) * math.ceil(workload.threads / max(clients_used, 1))
    return "uncached" if per_client > client_ram else "cached"


def size_past_ram(workload: Workload, client_ram: int, clients_used: int, margin: float = 1.25) -> Workload:
    """The workload with files grown so each client handles ``margin`` × its RAM (uncached regime).

    A client's threads share its page cache, so the per-file size is the client's share divided by its threads.
    Files already large enough, and O_DIRECT runs (which bypass the cache), are left as they are.
    """
    if workload.sync == "odirect":
        return workload
    threads_per_client = math.ceil(workload.threads / max(clients_used, 1))
    need = math.ceil(client_ram * margin / threads_per_client / 1024) * 1024
    if parse_size(workload.file_size) >= need:
        return workload
    return workload.model_copy(update={"file_size": f"{need // 1024}k"})


def io_seconds(kbps: dict[str, float], file_size: int, threads: int) -> float:
    """Time a trial spent moving data: per test (metric -> aggregate kB/s), all threads' bytes over the throughput.

    This leaves out iozone's start-up and barriers (about 9 s on the lab), which do not grow with the file.
    """
    total = file_size * threads / 1024  # kB
    return sum(total / v for v in kbps.values() if v > 0)


"""A run's cache regime and the file sizes that put it where the plan wants it (past the clients' RAM, or long
enough for a target time)."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..bench.workload import Workload
from ..units import parse_size

# How far one sizing step may grow a file: a file that fits a cache runs faster than one that does not, so a
# rate measured on a small file can promise a large one more speed than it gets; sixteen times caps that risk.
MOST_PER_STEP = 16


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
    return with_file_size(workload, need)


def with_file_size(workload: Workload, size: int) -> Workload:
    """The workload with files of ``size`` bytes (whole KiB)."""
    return workload.model_copy(update={"file_size": f"{size // 1024}k"})


def io_seconds(kbps: dict[str, float], file_size: int, threads: int) -> float:
    """Time a trial spent moving data: per test (metric -> aggregate kB/s), all threads' bytes over the throughput.

    This leaves out iozone's start-up and barriers (about 9 s on the lab), which do not grow with the file.
    """
    total = file_size * threads / 1024  # kB
    return sum(total / v for v in kbps.values() if v > 0)



def sizing_step(size: int, seconds: float, target: float, limit: int,
                fits: Callable[[int], bool] = lambda _: True, most: int = MOST_PER_STEP) -> int:
    """How many times larger the next sizing trial's file is: 1 where this one's data phase (``seconds``)
    already lasts ``target``; else the power of two the measured rate says is needed (target / seconds,
    rounded up), at least 2, at most ``most``, halved until the file is within ``limit`` and ``fits`` (the
    bricks can hold it); 1 where not even a doubling is.

    Why a power of two: the file stays a whole number of blocks (a power-of-two multiple of a file that was)
    and the sizes a run tried read as a doubling ladder with rungs skipped. Why the rate: the data phase grows
    with the file (``io_seconds``), so one trial says how far the target is; doubling blindly spent up to a dozen
    sizing trials a run at small blocks (a 4 KB start that needs 16 MB)."""
    if seconds >= target:
        return 1
    need = target / seconds if seconds > 0 else float(most)
    step: int = min(2 ** max(1, math.ceil(math.log2(need) - 1e-9)), most)
    while step > 1 and (size * step > limit or not fits(size * step)):
        step //= 2
    return step

"""Ending local processes: the one SIGTERM-then-SIGKILL helper (the lab's daemons, a trial's iozone)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path


def zombie(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie, or gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return True


def terminate(pids: Iterable[int], grace: float) -> None:
    """SIGTERM each of ``pids``, then SIGKILL whatever is still alive after ``grace`` seconds. Callers choose the
    grace: a daemon that flushes state on SIGTERM gets longer than a benchmark child that only has to exit."""
    pids = list(pids)
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if not zombie(p)]
        if alive:
            time.sleep(0.05)
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

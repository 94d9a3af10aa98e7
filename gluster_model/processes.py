"""Ending processes: the one SIGTERM-then-SIGKILL helper for local ones (the lab's daemons, a trial's iozone), and
its shell form for a host's (``terminate_script``)."""

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


def terminate_script(pid: str, grace_s: float = 5.0, kill: bool = True) -> str:
    """Shell that SIGTERMs the process whose pid the shell expression ``pid`` gives (e.g. ``"$p"``, from a pid
    file the caller read), waits up to ``grace_s`` for it to exit and, with ``kill``, SIGKILLs it if it has
    not: ``terminate`` on a remote host. A caller that returns while the process is still exiting leaves it to
    be found running."""
    tries = max(1, round(grace_s / 0.1))
    # An exited process nobody has reaped yet (a zombie: a detached one whose new parent, the host's pid 1, does
    # not reap, as in a container) still answers kill -0, and would hold the caller the whole grace: it counts
    # as exited.
    out = (f"kill {pid} 2>/dev/null; i=0; while kill -0 {pid} 2>/dev/null && "
           f"! grep -qs '^State:[[:space:]]*Z' /proc/{pid}/status && [ $i -lt {tries} ]; "
           f"do i=$((i+1)); sleep 0.1; done")
    return out + (f"; kill -0 {pid} 2>/dev/null && kill -9 {pid}" if kill else "")

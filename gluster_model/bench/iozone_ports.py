"""iozone's fixed TCP ports on the machine the master runs on: who holds them, and ending what glmodel left.

iozone's distributed mode listens on fixed ports (iozone 3.4xx, MAXSTREAMS 1024 apart): the master on 20000..,
each child on 24096.. and 25120.. (glusterd's 24007 lies between them). Its children are told only the
master's address, not a port, so a stale process still listening on 20000 would take their connections: a
master's forked listener outlived a master killed with SIGKILL, and an interrupted trial left one behind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import psutil

from ..errors import GlmodelError
from ..processes import terminate
from ..text import printable

MASTER_PORTS = range(20000, 21024)
PORTS = (*MASTER_PORTS, *range(24096, 26144))
_PORT_SET = frozenset(PORTS)
MASTER_DIR = re.compile(r"/glmodel-iozone-[^/\s]+/")


@dataclass(frozen=True)
class Holder:
    """A process listening on one of iozone's ports."""

    port: int
    pid: int
    command: str

    @property
    def stale_glmodel_master(self) -> bool:
        """An iozone master (or its forked listener) glmodel started for a trial that is over: its client file
        lived in a temporary directory that run_iozone removes when the trial ends, however it ends."""
        argv = self.command.split()
        if not argv or Path(argv[0]).name != "iozone" or "-+m" not in argv:
            return False
        i = argv.index("-+m")
        path = argv[i + 1] if i + 1 < len(argv) else ""
        return bool(MASTER_DIR.search(path)) and not Path(path).exists()

    def __str__(self) -> str:
        return f"pid {self.pid} ({printable(self.command[:80])}) on port {self.port}"


def holders() -> list[Holder]:
    """Processes on this machine listening on a TCP port in iozone's range, lowest port first."""
    out = []
    for c in psutil.net_connections(kind="tcp"):
        if c.status != psutil.CONN_LISTEN or not c.laddr or c.laddr.port not in _PORT_SET or c.pid is None:
            continue
        try:
            command = " ".join(psutil.Process(c.pid).cmdline())
        except psutil.Error:
            continue  # it ended meanwhile
        out.append(Holder(c.laddr.port, c.pid, command))
    return sorted(out, key=lambda h: (h.port, h.pid))


def end(pids: set[int], grace: float = 3.0) -> None:
    """End a trial's leftover iozone processes: SIGTERM, SIGKILL after ``grace`` seconds (``processes``)."""
    terminate(pids, grace)


def free_master_port() -> list[Holder]:
    """Make sure iozone's master can listen here: end what an earlier glmodel trial left holding the master's
    ports (returned, so the caller can say so); raise naming any other process that holds them."""
    stale = [h for h in holders() if h.port in MASTER_PORTS and h.stale_glmodel_master]
    if stale:
        end({h.pid for h in stale})
    others = [h for h in holders() if h.port in MASTER_PORTS]
    if others:
        named = "; ".join(str(h) for h in others[:3]) + (f" (and {len(others) - 3} more)" if len(others) > 3 else "")
        raise GlmodelError(f"this machine: {named} hold{'s' if len(others) == 1 else ''} a port of iozone's master "
                           "(20000-21023), so the trial's iozone children would connect to it; end that process (or "
                           "wait until it ends) and run again")
    return stale

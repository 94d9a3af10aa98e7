"""Shared OpenSSH connections for the programs glmodel starts over ssh (iozone's children, through its RSH).

Every iozone trial starts one ssh session per thread; a new connection costs its key exchange and
authentication (about 0.2 s a session on the lab, most of a short trial's start-up). OpenSSH can carry many
sessions over one connection per host (ControlMaster): the first session of a process opens it, later ones
ride on it (a few ms). The connections' sockets live in one directory per glmodel process, created private
(0700: whoever can reach a socket can run commands on the host without a key), and the connections are
closed when the process exits; one left by a process that was killed exits by itself after ``PERSIST_S``
seconds without a session. Host keys are checked when a connection opens, as for any ssh.
"""

from __future__ import annotations

import atexit
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

PERSIST_S = 60
# A unix socket's path has room for 107 bytes; %C (a SHA-1 of the connection's ends) is 40 of them.
_MAX_DIR = 60


class SshMux:
    """The process's shared-connection directory (made on first use) and the ssh options that use it."""

    def __init__(self) -> None:
        self._dir: Path | None = None
        self._lock = threading.Lock()

    def options(self) -> list[str]:
        """``-o`` options for ssh that share this process's connections; none where no private directory with
        a short enough path can be made (then every session opens its own connection, as before)."""
        with self._lock:
            if self._dir is None:
                try:
                    made = Path(tempfile.mkdtemp(prefix="glmodel-ssh-"))  # mode 0700
                except OSError:
                    return []
                if len(str(made)) > _MAX_DIR:
                    made.rmdir()
                    return []
                self._dir = made
                atexit.register(self.close)
            where = self._dir / "%C"
        # a connection to a host that dropped off the network is given up within 15 s (its sessions with it),
        # as a new connection's ConnectTimeout would, instead of carrying new sessions into the void
        return ["-o", "ControlMaster=auto", "-o", f"ControlPath={where}", "-o", f"ControlPersist={PERSIST_S}",
                "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3"]

    def close(self, ssh: str = "ssh") -> None:
        """Close every shared connection and remove the directory (a later ``options`` makes a new one)."""
        with self._lock:
            where, self._dir = self._dir, None
        if where is None:
            return
        for sock in sorted(where.glob("*")):
            try:  # with a literal ControlPath the host given is not used
                subprocess.run([ssh, "-o", f"ControlPath={sock}", "-O", "exit", "glmodel"], capture_output=True,
                               timeout=10, check=False)
            except (OSError, subprocess.TimeoutExpired):
                pass
        shutil.rmtree(where, ignore_errors=True)


SSH_MUX = SshMux()

"""A private PostgreSQL server for the store tests: initdb in a temporary directory, own port, trust auth."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PORT = 54329


def _bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed; scripts/setup.sh --test installs it")
    return found[-1].parent


@dataclass
class Server:
    """A running private server: its URL, and stop and start for a test of the store going away."""

    url: str
    stop: Callable[[], None]
    start: Callable[[], None]


@contextmanager
def postgres_server(port: int = PORT) -> Iterator[str]:
    """Start a server owned by the 'postgres' user; yield a SQLAlchemy URL of a fresh database."""
    with postgres_control(port) as server:
        yield server.url


@contextmanager
def postgres_control(port: int = PORT) -> Iterator[Server]:
    """A server as ``postgres_server`` starts it, with its stop and start."""
    bindir = _bindir()
    # Its own directory under /tmp: pytest's temporary directories are private to root (mode 700).
    base = Path(tempfile.mkdtemp(prefix="glmodel-pg-"))
    base.chmod(0o755)
    data = base / "pgdata"
    data.mkdir()
    shutil.chown(data, "postgres", "postgres")

    def as_postgres(*argv: str) -> None:
        proc = subprocess.run(["runuser", "-u", "postgres", "--", *argv], capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {proc.stderr.strip() or proc.stdout.strip()}")

    def start() -> None:
        as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(data / "server.log"), "-o",
                    f"-p {port} -k {data} -c listen_addresses=127.0.0.1", "start")

    def stop() -> None:
        # fast: the server ends every client's connection at once, as a crash or a restart would
        as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")

    as_postgres(str(bindir / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres")
    start()
    try:
        as_postgres(str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "glmodel")
        yield Server(f"postgresql+psycopg://postgres@127.0.0.1:{port}/glmodel", stop, start)
    finally:
        try:
            stop()
        except RuntimeError:
            pass  # a test left it stopped
        shutil.rmtree(base, ignore_errors=True)

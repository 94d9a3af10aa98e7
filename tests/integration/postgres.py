"""A private PostgreSQL server for the store tests: initdb in a temporary directory, own port, trust auth."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PORT = 54329


def _bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if not found:
        raise RuntimeError("PostgreSQL is not installed; scripts/setup.sh --test installs it")
    return found[-1].parent


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a server owned by the 'postgres' user; yield a SQLAlchemy URL of a fresh database."""
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

    as_postgres(str(bindir / "initdb"), "-D", str(data), "--auth=trust", "-U", "postgres")
    as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(data / "server.log"), "-o",
                f"-p {PORT} -k {data} -c listen_addresses=127.0.0.1", "start")
    try:
        as_postgres(str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(PORT), "glmodel")
        yield f"postgresql+psycopg://postgres@127.0.0.1:{PORT}/glmodel"
    finally:
        as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop")
        shutil.rmtree(base, ignore_errors=True)

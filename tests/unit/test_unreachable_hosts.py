"""A cluster whose hosts cannot be reached, over real sockets (no stand-in): a port nobody listens on (refused),
one that accepts and closes (no SSH greeting) and one that accepts and stays silent (the greeting times out).
`check`, `collect --yes` and `verify --yes` each print one line per host and one summary, no traceback, exit 1,
and leave no store file behind."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
GLMODEL = [sys.executable, "-m", "gluster_model.cli"]


@pytest.fixture(scope="module")
def down(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A cluster file of 2 servers and 2 clients on loopback addresses, none of them an SSH server."""
    tmp = tmp_path_factory.mktemp("down")
    refused = socket.socket()
    refused.bind(("127.0.0.2", 0))
    refused_port = refused.getsockname()[1]
    refused.close()  # nothing listens there now: connection refused
    closing = socket.create_server(("127.0.0.3", 0))
    silent = socket.create_server(("127.0.0.4", 0))  # the kernel accepts; nobody ever says a word
    silent2 = socket.create_server(("127.0.0.5", 0))
    stop = threading.Event()

    def close_each() -> None:
        closing.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = closing.accept()
            except OSError:
                continue
            conn.close()

    thread = threading.Thread(target=close_each, daemon=True)
    thread.start()
    (tmp / "id").write_text((ROOT / "tests" / "data" / "clusters" / "id_test").read_text())
    (tmp / "known_hosts").write_text("")
    cluster = {"name": "down", "ssh": {"user": "root", "identity_file": "id", "known_hosts": "known_hosts",
                                       "connect_timeout": 1},
               "defaults": {"brick_paths": ["/data/brick1"]}, "emulation": {"allow": True},
               "servers": [{"host": "127.0.0.2", "ssh": {"port": refused_port}},
                           {"host": "127.0.0.3", "ssh": {"port": closing.getsockname()[1]}}],
               "clients": [{"host": "127.0.0.4", "ssh": {"port": silent.getsockname()[1]}},
                           {"host": "127.0.0.5", "ssh": {"port": silent2.getsockname()[1]}}]}
    (tmp / "down.yaml").write_text(yaml.safe_dump(cluster))
    yield tmp
    stop.set()
    thread.join()
    for s in (closing, silent, silent2):
        s.close()


def _run(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    # a terminal wide enough that a line is a line (a narrow one wraps each long line, as a terminal does)
    return subprocess.run([*GLMODEL, *args], cwd=tmp, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": "400"})


def _one_line_per_host(out: str) -> None:
    lines = [ln for ln in out.splitlines() if ln.strip()]
    assert "Traceback" not in out and "paramiko" not in out, out
    assert len(lines) == 5, out  # four hosts, one summary
    for host in ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"):
        assert sum(host in ln for ln in lines[:4]) == 1, out
    assert "refused" in next(ln for ln in lines if "127.0.0.2" in ln)
    for host in ("127.0.0.3", "127.0.0.4", "127.0.0.5"):  # closes at once; silent past the timeout (twice)
        assert "no SSH greeting" in next(ln for ln in lines if host in ln), out
    assert "restore" not in out  # nothing was changed anywhere: nothing to restore


def test_check_names_each_host_once_and_draws_no_empty_table(down: Path) -> None:
    r = _run(down, "check", "--cluster", "down.yaml")
    assert r.returncode == 1
    _one_line_per_host(r.stdout + r.stderr)
    assert "4 host(s) not ready: 127.0.0.2, 127.0.0.3, 127.0.0.4, 127.0.0.5" in r.stderr and "┃" not in r.stdout


def test_collect_and_verify_stop_before_the_store_is_written(down: Path) -> None:
    plan = {"name": "downplan", "factors": {"record_size": ["64KB", "1MB"]}}
    (down / "plan.yaml").write_text(yaml.safe_dump(plan))
    r = _run(down, "collect", "--cluster", "down.yaml", "--plan", "plan.yaml", "--store", "c.db", "--yes")
    assert r.returncode == 1, r.stderr
    _one_line_per_host(r.stdout + r.stderr)
    assert "4 of 4 host(s) cannot be reached" in r.stderr and "nothing was written" in r.stderr
    assert not (down / "c.db").exists()

    fit = _run(down, "fit", "--data", str(ROOT / "data" / "hardware_emulated.csv"), "--out", "m.json",
               "--metric", "write", "--model", "mlr", "--samples", "64", "--bootstrap", "0")
    assert fit.returncode == 0, fit.stderr
    question = yaml.safe_load((ROOT / "experiments" / "whatif" / "emulated_decision.yaml").read_text())
    question["candidates"] = question["candidates"][:1]  # one that 2 servers and 2 clients can build
    (down / "q.yaml").write_text(yaml.safe_dump(question))
    r = _run(down, "verify", "--cluster", "down.yaml", "--model", "m.json", "--scenarios", "q.yaml", "--plan",
             str(ROOT / "experiments" / "plans" / "hardware_emulated.yaml"), "--store", "v.db", "--yes")
    assert r.returncode == 1, r.stderr
    _one_line_per_host(r.stdout + r.stderr)
    assert not (down / "v.db").exists()


def test_a_host_marked_silent_is_refused_without_a_connection(down: Path) -> None:
    """Once a host was found silent, the SSH executor refuses its commands with what was seen, before any
    connection (a silent host's connection waits out its timeout, command after command)."""
    from gluster_model.config.cluster import load_cluster
    from gluster_model.errors import ConnectError
    from gluster_model.remote.executor import SSHExecutor

    with SSHExecutor(load_cluster(down / "down.yaml")) as ex:
        ex.mark_silent("127.0.0.4", "no answer from 127.0.0.4 within 10s")
        assert ex.silent() == {"127.0.0.4": "no answer from 127.0.0.4 within 10s"}
        with pytest.raises(ConnectError, match=r"^127\.0\.0\.4: no answer from 127\.0\.0\.4 within 10s$"):
            ex.run("127.0.0.4", ["true"])
        # the silent listener at 127.0.0.4 never answers: a connection attempt would end in a greeting timeout
        with pytest.raises(ConnectError, match="no SSH greeting"):
            ex.run("127.0.0.5", ["true"])

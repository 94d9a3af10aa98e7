"""The SSH executor against the lab's real sshd: reuse, parallel fan-out, failures, timeouts."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gluster_model.config.cluster import load_cluster
from gluster_model.errors import CommandFailed, MultiHostError
from gluster_model.lab import LabState
from gluster_model.remote.executor import SSHExecutor, shell

from .conftest import node_ip


@pytest.fixture
def executor(cluster_file: Path):  # type: ignore[no-untyped-def]
    with SSHExecutor(load_cluster(cluster_file)) as ex:
        yield ex


def test_quoting_keeps_arguments_literal(executor: SSHExecutor) -> None:
    weird = "a b; echo INJECTED $(id) 'q' \"dq\""
    out = executor.run(node_ip(1), ["printf", "%s", weird]).stdout
    assert out == weird


def test_connection_is_reused(executor: SSHExecutor) -> None:
    executor.run(node_ip(2), ["true"])
    client = executor._clients[node_ip(2)]
    for _ in range(5):
        executor.run(node_ip(2), ["true"])
    assert executor._clients[node_ip(2)] is client


def test_run_many_in_parallel(executor: SSHExecutor, lab: LabState) -> None:
    hosts = [n.address for n in lab.nodes]
    for h in hosts:
        executor.run(h, ["true"])  # connect first, so the timing below is about commands
    # Each host says when its command started and ended: they ran at once when every start comes before every
    # end (a test of overlap, not of a wall time that a busy machine stretches).
    results = executor.run_many(hosts, ["sh", "-c", "date +%s.%N; sleep 1; date +%s.%N"])
    assert set(results) == set(hosts) and all(r.ok for r in results.values())
    spans = [[float(x) for x in r.stdout.split()] for r in results.values()]
    assert max(start for start, _ in spans) < min(end for _, end in spans), spans
    per_host = executor.run_many(hosts, lambda h: ["echo", h])
    assert {h: r.stdout.strip() for h, r in per_host.items()} == {h: h for h in hosts}


def test_packets_go_out_at_once_and_lab_sessions_have_their_own_home(executor: SSHExecutor, lab: LabState) -> None:
    import socket

    node = lab.nodes[1]
    home = executor.run(node.address, shell('printf %s "$HOME"')).stdout
    sock = executor._clients[node.address].get_transport().sock  # type: ignore[union-attr]
    # Nagle off: a command's small packets do not wait for the peer's delayed ACK (about 40 ms a command).
    assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    # The node's shell reads its own (empty) home's profile, not the operator's ~/.bashrc.
    assert home == str(node.home) and Path(home).is_dir() and not any(Path(home).iterdir())


def test_failure_names_host_command_code_and_stderr(executor: SSHExecutor) -> None:
    with pytest.raises(CommandFailed) as info:
        executor.run(node_ip(3), shell("echo first >&2; echo 'it broke' >&2; exit 7"))
    err = info.value
    assert err.host == node_ip(3) and err.exit_code == 7
    assert "exited 7" in str(err) and "it broke" in str(err) and str(err).startswith(f"{node_ip(3)}: ")
    result = executor.run(node_ip(3), shell("exit 3"), check=False)
    assert result.exit_code == 3 and not result.ok


def test_aggregated_error_names_every_failing_host(executor: SSHExecutor) -> None:
    with pytest.raises(MultiHostError) as info:
        executor.run_many([node_ip(1), node_ip(2), node_ip(3)],
                          lambda h: shell("exit 0") if h == node_ip(2) else shell(f"echo no-{h} >&2; exit 4"))
    msg = str(info.value)
    assert node_ip(1) in msg and node_ip(3) in msg and node_ip(2) not in msg
    assert f"no-{node_ip(1)}" in msg and len(info.value.errors) == 2


def test_timeout(executor: SSHExecutor) -> None:
    started = time.monotonic()
    with pytest.raises(CommandFailed, match="timed out"):
        executor.run(node_ip(1), ["sleep", "30"], timeout=1)
    assert time.monotonic() - started < 20  # far below the 30 s sleep, with room for a busy machine
    assert executor.run(node_ip(1), ["echo", "still-usable"]).stdout.strip() == "still-usable"


def test_stdin_and_large_output(executor: SSHExecutor) -> None:
    assert executor.run(node_ip(1), ["cat"], stdin=b"hello\n").stdout == "hello\n"
    big = executor.run(node_ip(1), shell("head -c 3000000 /dev/zero | tr '\\0' x")).stdout
    assert len(big) == 3_000_000


def _variant(lab: LabState, tmp_path: Path, **ssh: str) -> Path:
    """The lab's cluster file with some ssh settings replaced (paths made absolute, the file moved)."""
    import yaml

    data = yaml.safe_load(lab.cluster_file.read_text())
    base = lab.cluster_file.parent
    data["ssh"] = {**data["ssh"], "identity_file": str(base / data["ssh"]["identity_file"]),
                   "known_hosts": str(base / data["ssh"]["known_hosts"]), **ssh}
    data["lab"] = {**data["lab"], "state_dir": str(base)}
    out = tmp_path / "c.yaml"
    out.write_text(yaml.safe_dump(data))
    return out


def _fails(path: Path) -> str:
    from gluster_model.errors import GlmodelError

    with SSHExecutor(load_cluster(path)) as ex, pytest.raises(GlmodelError) as err:
        ex.run(node_ip(1), ["true"])
    return str(err.value)


def test_ssh_failures_point_at_their_cause(lab: LabState, tmp_path: Path) -> None:
    import subprocess

    from gluster_model.errors import ConfigError, IdentityFileError, LoginRefused

    garbled = tmp_path / "garbled"
    garbled.write_text("not a key\n")
    msg = _fails(_variant(lab, tmp_path, identity_file=str(garbled)))
    assert msg.startswith(f"{node_ip(1)}: identity file {garbled} cannot be used"), msg
    assert IdentityFileError.fix.startswith("point ssh.identity_file")
    other = tmp_path / "other"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(other)], check=True)
    msg = _fails(_variant(lab, tmp_path, identity_file=str(other)))
    assert msg == f"{node_ip(1)}: SSH login as root with {other} was refused", msg
    assert "authorized_keys" in LoginRefused.fix and "host is up" not in LoginRefused.fix
    bad_known = tmp_path / "known"
    bad_known.write_text(f"{node_ip(1)} ssh-ed25519 AAAA!!notbase64\n")
    with pytest.raises(ConfigError) as err:
        with SSHExecutor(load_cluster(_variant(lab, tmp_path, known_hosts=str(bad_known)))) as ex:
            ex.run(node_ip(1), ["true"])
    assert str(err.value).startswith(f"{bad_known}: not a readable known_hosts file"), err.value

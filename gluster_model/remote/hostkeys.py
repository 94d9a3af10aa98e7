"""Host keys: fetch a host's key, compare it with known_hosts, and record it only when the user asks."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..errors import ConnectError, GlmodelError, HostKeyError
from .executor import fingerprint

if TYPE_CHECKING:
    import paramiko

    from ..config.cluster import ClusterSpec, Host

KeyStatus = Literal["known", "new", "changed"]


def known_hosts_name(address: str, port: int) -> str:
    """The name OpenSSH (and paramiko) look a host up by: bare for port 22, ``[addr]:port`` otherwise."""
    return address if port == 22 else f"[{address}]:{port}"


@dataclass(frozen=True)
class ObservedKey:
    host: str
    port: int
    key_type: str
    fingerprint: str
    status: KeyStatus
    key: paramiko.PKey


def fetch_host_key(address: str, port: int, timeout: float) -> paramiko.PKey:
    """Run the SSH key exchange only (no login) and return the server's host key."""
    import paramiko

    try:
        sock = socket.create_connection((address, port), timeout=timeout)
    except ConnectionRefusedError:
        raise ConnectError(address, f"connection to {address}:{port} refused; is sshd running there?") from None
    except OSError as exc:
        raise ConnectError(address, f"cannot reach {address}:{port}: {exc.strerror or exc}") from None
    transport = paramiko.Transport(sock)
    try:
        transport.start_client(timeout=timeout)
        key = transport.get_remote_server_key()
    except (paramiko.SSHException, EOFError, OSError) as exc:
        raise ConnectError(address, f"SSH key exchange with {address}:{port} failed: {exc}") from None
    finally:
        transport.close()
    return key


def key_status(known_hosts: Path, address: str, port: int, key: paramiko.PKey) -> KeyStatus:
    """Compare a key with the known_hosts file (hashed entries included)."""
    import paramiko

    if not known_hosts.is_file():
        return "new"
    keys = paramiko.HostKeys()
    try:
        keys.load(str(known_hosts))
    except (OSError, paramiko.SSHException) as exc:
        raise HostKeyError(address, f"cannot read known_hosts file {known_hosts}: {exc}") from None
    entry = keys.lookup(known_hosts_name(address, port))
    if not entry:
        return "new"
    if key.get_name() in entry:
        return "known" if entry[key.get_name()] == key else "changed"
    # The host has a known key of another type; a different type offered now is suspicious, not new.
    return "changed"


def observe(host: Host) -> ObservedKey:
    key = fetch_host_key(host.address, host.ssh.port, host.ssh.connect_timeout)
    status = key_status(host.ssh.known_hosts, host.address, host.ssh.port, key)
    return ObservedKey(host.address, host.ssh.port, key.get_name(), fingerprint(key), status, key)


def record(known_hosts: Path, observed: ObservedKey) -> None:
    """Append one host's key to known_hosts (created 0600 in a 0700 directory). Never replaces a key."""
    if observed.status != "new":
        raise HostKeyError(observed.host, f"refusing to record a key whose status is {observed.status}")
    known_hosts.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    line = f"{known_hosts_name(observed.host, observed.port)} {observed.key_type} {observed.key.get_base64()}\n"
    fd = os.open(known_hosts, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as fh:
        fh.write(line)


def observe_all(cluster: ClusterSpec) -> list[tuple[Host, ObservedKey | GlmodelError]]:
    """Every host's key, or the error that kept it from being read: one unreachable host hides no other."""
    out: list[tuple[Host, ObservedKey | GlmodelError]] = []
    for host in cluster.hosts:
        try:
            out.append((host, observe(host)))
        except GlmodelError as exc:
            out.append((host, exc))
    return out

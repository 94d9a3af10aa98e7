"""SSH executor (paramiko): one reused connection per host, per-command timeouts, bounded parallel fan-out.

This is one of the few places with side effects. Commands arrive as argv lists and are joined with
``shlex.join`` here, so no caller ever builds a remote command string by concatenation.
"""

from __future__ import annotations

import logging
import select
import shlex
import socket
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ALL_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, TypeVar

from ..errors import (
    CommandFailed,
    ConfigError,
    ConnectError,
    GlmodelError,
    HostKeyError,
    IdentityFileError,
    LoginRefused,
    MultiHostError,
    RemoteError,
    Unreachable,
)

if TYPE_CHECKING:
    import paramiko

    from ..config.cluster import ClusterSpec, Host

log = logging.getLogger(__name__)
# paramiko's transport threads log a failed handshake with its traceback; glmodel says what failed in one line
# (a ConnectError) and shows the tracebacks only with --debug (whose root handler this does not stop).
logging.getLogger("paramiko").addHandler(logging.NullHandler())
T = TypeVar("T")

Command = Sequence[str] | str


def quote_command(command: Command) -> str:
    """An argv list becomes a shell-safe string; a string is taken as an already-quoted shell command."""
    return command if isinstance(command, str) else shlex.join(command)


def shell(script: str) -> list[str]:
    """argv that runs a small POSIX shell script; every value inside it must already be shlex-quoted."""
    return ["sh", "-c", script]


# Set (to 1) in the shell that sources a join file when the command measures a device (``join_prefix``).
DEVICE_VAR = "GLMODEL_DEVICE"


def join_prefix(join_file: str, device: bool = False) -> str:
    """Shell text put before a command so it runs inside the group a join file names while the file exists
    (a cluster that allows emulation gives each host one: ``ClusterSpec.join_file``). The transport only sources
    the file; what the group is, and the file, are ``hardware.group``'s.

    ``device``: the command measures a device's capacity (fio on a brick, iperf3 on a link); the join file then
    keeps it out of the host's emulated CPU quota, inside its RAM and disk limits. A capacity measured inside
    the quota falls with it (on the lab a brick's 4 KiB IOPS fell 5x from 12% of the machine to 3%), and the
    model's disk and CPU stages would then move together and could not be told apart."""
    j = shlex.quote(join_file)
    return f"{DEVICE_VAR}=1; " * device + f"if [ -f {j} ]; then . {j}; fi; "


@dataclass(frozen=True)
class CommandResult:
    host: str
    command: str
    exit_code: int | None  # None: timed out
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


class Executor(Protocol):
    """What the rest of glmodel needs from a remote runner: the cluster it reaches (an operation on a cluster takes
    the executor alone, never the pair), and its commands."""

    cluster: ClusterSpec

    def run(self, host: str, command: Command, *, timeout: float | None = None, check: bool = True,
            stdin: bytes | None = None, device: bool = False) -> CommandResult:
        """``device``: the command measures a device's capacity (``join_prefix``)."""
        ...

    def run_many(self, hosts: Iterable[str], command: Command | Callable[[str], Command], *,
                 timeout: float | None = None, check: bool = True, device: bool = False
                 ) -> dict[str, CommandResult]: ...

    def map(self, hosts: Iterable[str], fn: Callable[[str], T], *,
            timeout: float | None = None) -> tuple[dict[str, T], dict[str, GlmodelError]]: ...

    def drop(self, address: str) -> None:
        """Forget a host's connection: the next command reconnects (after a change its old one may not survive,
        such as a smaller MTU)."""
        ...

    def mark_silent(self, address: str, why: str) -> None:
        """Remember a host found not answering: every later command to it fails at once with ``why``."""
        ...

    def silent(self) -> dict[str, str]:
        """The hosts found not answering, each with what was seen."""
        ...


class SSHExecutor:
    """Run commands on the hosts of a cluster over SSH.

    Host keys are checked against each host's known_hosts file with paramiko's RejectPolicy: an unknown
    or changed key is an error, never silently accepted (`glmodel trust` records keys on request).
    """

    def __init__(self, cluster: ClusterSpec) -> None:
        """Commands to a host of a cluster that allows emulation first join the host's group when it has one
        (``join_prefix``; the group itself is ``hardware.group``'s): what glmodel starts there gets the emulated RAM and CPU."""
        self.cluster = cluster
        self._clients: dict[str, paramiko.SSHClient] = {}
        self._locks: dict[str, threading.Lock] = {h.address: threading.Lock() for h in cluster.hosts}
        self._closed = False
        # Hosts found silent (a session to one waits, it does not fail): not waited for again, command after
        # command, for as long as this executor lives (one glmodel command; the next one asks them afresh).
        self._silent: dict[str, str] = {}

    # -- connections ---------------------------------------------------------------------------------
    def _host(self, address: str) -> Host:
        return self.cluster.host(address)

    def _connect(self, host: Host) -> paramiko.SSHClient:
        import paramiko

        client = paramiko.SSHClient()
        known = host.ssh.known_hosts
        if known.is_file():
            try:
                client.load_host_keys(str(known))
            except (OSError, paramiko.SSHException, ValueError, paramiko.hostkeys.InvalidHostKey) as exc:
                # The file is at fault, not the host: named first, as any other bad input file.
                raise ConfigError(str(known), "", f"not a readable known_hosts file ({str(exc).splitlines()[0]}); "
                                  f"fix or delete it, then run `glmodel trust --cluster {self.cluster.source}`") \
                    from None
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        where = f"{host.ssh.user}@{host.address}:{host.ssh.port}"
        try:
            client.connect(
                host.address,
                port=host.ssh.port,
                username=host.ssh.user,
                key_filename=str(host.ssh.identity_file) if host.ssh.identity_file else None,
                look_for_keys=host.ssh.identity_file is None,
                allow_agent=host.ssh.identity_file is None,
                timeout=host.ssh.connect_timeout,
                banner_timeout=host.ssh.connect_timeout,
                auth_timeout=host.ssh.connect_timeout,
            )
        except paramiko.BadHostKeyException as exc:
            client.close()
            raise HostKeyError(
                host.address,
                f"host key CHANGED (got {fingerprint(exc.key)}, known_hosts {known} has {fingerprint(exc.expected_key)});"
                f" if the host was reinstalled, delete its line from {known} and run"
                f" `glmodel trust --cluster {self.cluster.source}`",
            ) from None
        except paramiko.AuthenticationException:
            client.close()
            key = host.ssh.identity_file or "agent/default keys"
            raise LoginRefused(host.address, f"SSH login as {host.ssh.user} with {key} was refused") from None
        except (paramiko.SSHException, ValueError) as exc:
            client.close()
            if host.ssh.identity_file and _key_problem(exc):
                raise IdentityFileError(host.address, f"identity file {host.ssh.identity_file} cannot be used: "
                                        f"{str(exc).splitlines()[0] or type(exc).__name__}") from None
            if "not found in known_hosts" in str(exc):
                raise HostKeyError(
                    host.address,
                    f"host key not in {known}; check and record it with `glmodel trust --cluster {self.cluster.source}`",
                ) from None
            if "banner" in str(exc).lower() or "no existing session" in str(exc).lower():
                # the port accepts connections, but what answers (if anything) is no SSH server: it closed, or
                # stayed silent past the timeout (a host that hangs, a firewall, another service)
                raise ConnectError(host.address, f"no SSH greeting from {where} within "
                                   f"{host.ssh.connect_timeout:g}s: the port accepts connections but no SSH server "
                                   "answered on it") from None
            raise ConnectError(host.address, f"SSH to {where} failed: {exc}") from None
        except (paramiko.ssh_exception.NoValidConnectionsError, ConnectionRefusedError):
            client.close()
            raise ConnectError(host.address, f"connection to {where} refused; is sshd running there?") from None
        except (socket.timeout, TimeoutError):
            client.close()
            raise ConnectError(host.address, f"no answer from {where} within {host.ssh.connect_timeout:g}s") from None
        except OSError as exc:
            client.close()
            raise ConnectError(host.address, f"cannot reach {where}: {exc.strerror or exc}") from None
        transport = client.get_transport()
        if transport is not None:
            transport.set_keepalive(15)
            _no_delay(transport.sock)
        return client

    def _client(self, host: Host) -> paramiko.SSHClient:
        if self._closed:
            raise RemoteError(host.address, "executor is closed")
        with self._locks[host.address]:
            client = self._clients.get(host.address)
            transport = client.get_transport() if client else None
            if client is None or transport is None or not transport.is_active():
                if client is not None:
                    client.close()
                client = self._connect(host)
                self._clients[host.address] = client
            return client

    def drop(self, address: str) -> None:
        """Forget a host's connection (the next command reconnects)."""
        with self._locks[address]:
            client = self._clients.pop(address, None)
        if client is not None:
            client.close()

    def mark_silent(self, address: str, why: str) -> None:
        self._silent[address] = why

    def silent(self) -> dict[str, str]:
        return dict(self._silent)

    def close(self) -> None:
        self._closed = True
        for address in list(self._clients):
            self.drop(address)

    def reach_all(self) -> None:
        """Connect to every host at once; Unreachable naming each host that cannot be reached or logged into
        (its reason and fix), before a command changes anything anywhere."""
        hosts = list(self.cluster.hosts)
        with ThreadPoolExecutor(max_workers=min(16, len(hosts)) or 1) as pool:
            futures = {h.address: pool.submit(self._client, h) for h in hosts}
        failed: list[RemoteError] = []
        for h in hosts:
            exc = futures[h.address].exception()
            if isinstance(exc, RemoteError):
                failed.append(exc)
            elif exc is not None:
                raise exc
        if failed:
            raise Unreachable(failed, len(hosts))

    def __enter__(self) -> SSHExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- commands ------------------------------------------------------------------------------------
    def run(self, host: str, command: Command, *, timeout: float | None = None, check: bool = True,
            stdin: bytes | None = None, device: bool = False) -> CommandResult:
        """Run one command; raise CommandFailed on a non-zero exit or timeout unless ``check`` is False.
        ``device``: it measures a device's capacity, outside the host's emulated CPU quota (``join_prefix``)."""
        h = self._host(host)
        text = quote_command(command)
        if h.address in self._silent:
            raise ConnectError(h.address, self._silent[h.address])
        join = self.cluster.join_file(h.address)
        # While the host's hardware is emulated, every command runs inside its group (messages show the command).
        sent = text if join is None else join_prefix(join, device) + text
        limit = timeout if timeout is not None else h.ssh.command_timeout
        client = self._client(h)
        started = time.monotonic()
        try:
            result = replace(self._exec(client, h.address, sent, limit, stdin), command=text)
        except (EOFError, OSError, _ssh_exception()) as exc:
            self.drop(h.address)
            raise ConnectError(h.address, f"connection lost while running `{text[:80]}`: {exc or type(exc).__name__}") from None
        log.debug("%s: %s -> %s in %.2fs", h.address, text, result.exit_code, time.monotonic() - started)
        if check and not result.ok:
            raise CommandFailed(h.address, text, result.exit_code, result.stderr or result.stdout)
        return result

    @staticmethod
    def _exec(client: paramiko.SSHClient, address: str, text: str, limit: float, stdin: bytes | None) -> CommandResult:
        transport = client.get_transport()
        assert transport is not None
        # The command's limit bounds the channel's opening too: a host gone silent answers neither, and a look
        # that allows 20 s would otherwise wait 30 s here first.
        chan = transport.open_session(timeout=min(30.0, max(limit, 1.0)))
        started = time.monotonic()
        deadline = started + limit
        out: list[bytes] = []
        err: list[bytes] = []
        try:
            chan.exec_command(text)
            if stdin is not None:
                chan.sendall(stdin)
            chan.shutdown_write()
            while True:
                while chan.recv_ready():
                    out.append(chan.recv(1 << 16))
                while chan.recv_stderr_ready():
                    err.append(chan.recv_stderr(1 << 16))
                # sshd may send the exit status before the last of the output; only the EOF after it
                # says that no more data is coming.
                finished = chan.exit_status_ready() and (chan.eof_received or chan.closed)
                if finished and not chan.recv_ready() and not chan.recv_stderr_ready():
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return CommandResult(address, text, None, _decode(out), _decode(err), time.monotonic() - started)
                # The channel's fileno turns readable on stdout data or close; stderr is drained each pass.
                select.select([chan], [], [], min(remaining, 0.05))
            code = chan.recv_exit_status()
            while chan.recv_ready():
                out.append(chan.recv(1 << 16))
            while chan.recv_stderr_ready():
                err.append(chan.recv_stderr(1 << 16))
        finally:
            chan.close()
        return CommandResult(address, text, code, _decode(out), _decode(err), time.monotonic() - started)

    def run_many(self, hosts: Iterable[str], command: Command | Callable[[str], Command], *,
                 timeout: float | None = None, check: bool = True, device: bool = False) -> dict[str, CommandResult]:
        """Run a command on many hosts in parallel; with ``check``, one error names every failing host."""
        results, errors = self.map(hosts, lambda a: self.run(a, command(a) if callable(command) else command,
                                                             timeout=timeout, check=check, device=device),
                                   timeout=timeout)
        if errors:
            raise MultiHostError(list(errors.values()))
        return results

    def map(self, hosts: Iterable[str], fn: Callable[[str], T], *,
            timeout: float | None = None) -> tuple[dict[str, T], dict[str, GlmodelError]]:
        """Apply ``fn`` to each host on a bounded pool; the join itself times out. Returns (results, errors)."""
        addresses = list(dict.fromkeys(hosts))
        results: dict[str, T] = {}
        errors: dict[str, GlmodelError] = {}
        if not addresses:
            return results, errors
        biggest = max(self._host(a).ssh.command_timeout for a in addresses)
        join_limit = (timeout if timeout is not None else biggest) + max(
            self._host(a).ssh.connect_timeout for a in addresses) + 5
        pool = ThreadPoolExecutor(max_workers=min(self.cluster.max_parallel, len(addresses)),
                                  thread_name_prefix="glmodel-ssh")
        try:
            futures = {pool.submit(fn, a): a for a in addresses}
            done, pending = wait(futures, timeout=join_limit, return_when=ALL_COMPLETED)
            for fut in done:
                a = futures[fut]
                exc = fut.exception()
                if exc is None:
                    results[a] = fut.result()
                elif isinstance(exc, GlmodelError):
                    errors[a] = exc
                else:
                    errors[a] = RemoteError(a, f"unexpected {type(exc).__name__}: {exc}")
            for fut in pending:
                a = futures[fut]
                errors[a] = RemoteError(a, f"did not finish within {join_limit:g}s")
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
        ordered_errors = {a: errors[a] for a in addresses if a in errors}
        return {a: results[a] for a in addresses if a in results}, ordered_errors


def _key_problem(exc: Exception) -> bool:
    """Whether paramiko failed on the private key itself (garbled, encrypted, of a type it cannot read)."""
    import paramiko

    text = str(exc).lower()
    return isinstance(exc, (paramiko.PasswordRequiredException, ValueError)) or any(
        w in text for w in ("private key", "key file", "encrypted", "not a valid", "unpack", "no authentication"))


def _no_delay(sock: object) -> None:
    """Send each SSH packet at once (TCP_NODELAY), as OpenSSH does for interactive sessions.

    A command is a few small request packets answered by small ones; with Nagle's algorithm on, the last one
    waits for the peer's delayed ACK, which put about 40 ms on every command (measured on the lab: 44 ms per
    `true`, 2 ms with the option). A proxy channel instead of a socket is left as it is.
    """
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        pass


def _ssh_exception() -> type[BaseException]:
    import paramiko

    return paramiko.SSHException


def _decode(chunks: list[bytes]) -> str:
    return b"".join(chunks).decode("utf-8", errors="replace")


def fingerprint(key: paramiko.PKey | None) -> str:
    """OpenSSH-style SHA256 fingerprint of a host key."""
    if key is None:
        return "?"
    import base64
    import hashlib

    digest = hashlib.sha256(key.asbytes()).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def silent_hosts(executor: Executor, hosts: list[str], within: float, known: Iterable[str] = ()) -> list[str]:
    """The hosts that do not run ``true`` within ``within`` seconds (all asked at once): a session to a host that
    went silent (down, hung, its packets dropped) waits, it does not fail, so only an answer tells. ``known``:
    hosts already seen not answering for longer (not asked again: asking would only wait ``within`` for them).
    The executor remembers them all: the steps that follow (cleaning up, tearing a volume down) fail on them at
    once, where each would wait out its own timeout."""
    gone = set(known)
    ask = [a for a in hosts if a not in gone]
    results, errors = executor.map(ask, lambda a: executor.run(a, ["true"], timeout=within, check=False),
                                   timeout=within)
    silent = [a for a in hosts if a in gone or a in errors or (a in results and not results[a].ok)]
    for a in silent:
        executor.mark_silent(a, f"no answer from {a} within {within:g}s (down, hung or its packets dropped); not "
                                "asked again until glmodel runs anew")
    return silent


def silent_servers(executor: Executor) -> list[str]:
    """The cluster's servers found silent so far (``silent_hosts``): what waits on a brick waits on them."""
    silent = executor.silent()
    return [s.address for s in executor.cluster.servers if s.address in silent]

"""One exception hierarchy. Every message is a single line a user can act on."""

from __future__ import annotations

from collections.abc import Sequence


class GlmodelError(Exception):
    """Root of every error glmodel raises on purpose; the CLI prints ``str(err)`` and exits with ``cli_status``
    (after ``lines``, one line per host or item where the error is about several)."""

    cli_status = 1
    lines: tuple[str, ...] = ()


class ConfigError(GlmodelError):
    """A cluster, plan or scenario file (or a CLI value) is invalid."""

    cli_status = 2

    def __init__(self, source: str, key: str, problem: str) -> None:
        self.source = source
        self.key = key
        self.problem = problem
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {problem}")


class ParseError(GlmodelError):
    """Output of a remote tool did not have the shape we expect; names the tool and what was missing."""

    def __init__(self, what: str, problem: str, host: str | None = None) -> None:
        self.what = what
        self.host = host
        prefix = f"{host}: " if host else ""
        super().__init__(f"{prefix}cannot parse {what}: {problem}")


class RemoteError(GlmodelError):
    """Something went wrong talking to one host."""

    def __init__(self, host: str, message: str) -> None:
        self.host = host
        super().__init__(f"{host}: {message}")


class ConnectError(RemoteError):
    """The host could not be reached."""

    fix = "check that the host is up and sshd listens on that port"


class LoginRefused(ConnectError):
    """The host answered but refused the SSH login."""

    fix = "check ssh.user and that the identity file's public key is in that user's ~/.ssh/authorized_keys"


class IdentityFileError(ConnectError):
    """The private key the cluster file names cannot be used (garbled, encrypted, wrong type)."""

    fix = "point ssh.identity_file at an unencrypted private key (OpenSSH or PEM format)"


class HostKeyError(RemoteError):
    """The host's key is unknown or does not match known_hosts."""

    fix = "run `glmodel trust --cluster FILE`"


class CommandFailed(RemoteError):
    """A remote command exited non-zero (or timed out)."""

    def __init__(self, host: str, command: str, exit_code: int | None, stderr: str) -> None:
        self.command = command
        self.exit_code = exit_code
        self.stderr = stderr
        tail = stderr_tail(stderr)
        status = "timed out" if exit_code is None else f"exited {exit_code}"
        detail = f": {tail}" if tail else ""
        super().__init__(host, f"`{shorten(command)}` {status}{detail}")


class MultiHostError(GlmodelError):
    """Several hosts failed in one fan-out; the message names every one."""

    def __init__(self, errors: Sequence[GlmodelError]) -> None:
        self.errors = list(errors)
        super().__init__("; ".join(str(e) for e in self.errors))


class Unreachable(GlmodelError):
    """Hosts a command needs could not be reached (or logged into) before anything was changed or written: one
    line per host with its reason and fix, and one summary."""

    def __init__(self, errors: Sequence[RemoteError], total: int) -> None:
        self.errors = list(errors)
        fixes = [getattr(e, "fix", None) for e in self.errors]
        self.lines = tuple(f"{e}" + (f" (fix: {fix})" if fix else "") for e, fix in zip(self.errors, fixes))
        names = ", ".join(e.host for e in self.errors)
        super().__init__(f"{len(self.errors)} of {total} host(s) cannot be reached ({names}); nothing was changed "
                         "on any host and nothing was written to the store")


class StoreError(GlmodelError):
    """The results store cannot be opened, read or written."""


class NotFound(GlmodelError):
    """A campaign, run or trial the user named is not in the store (a usage error: exit 2)."""

    cli_status = 2


class LabError(GlmodelError):
    """The local lab could not be brought up, inspected or torn down."""


def stderr_tail(text: str, lines: int = 3, width: int = 300) -> str:
    """Last non-empty lines of a command's stderr, folded onto one line."""
    kept = [ln.strip() for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return shorten(" | ".join(kept), width)


def shorten(text: str, width: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"

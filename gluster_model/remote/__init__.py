"""Everything that crosses the network: the SSH executor, host-key handling, and fan-out to host groups."""

from .executor import CommandResult, Executor, SSHExecutor, quote_command

__all__ = ["CommandResult", "Executor", "SSHExecutor", "quote_command"]

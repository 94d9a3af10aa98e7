"""Where a command will write: checked before any work, so a long fit never ends in "cannot write" (nor leaves
a temporary file behind), and no command makes directories the user did not ask for."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import ConfigError


def check_output(path: Path, option: str, suffixes: tuple[str, ...] = (), directory: bool = False) -> Path:
    """``path`` as a file (or, with ``directory``, a directory) this process can create or replace.

    Refused in one line naming ``option``: a directory where a file is expected (or the reverse), a parent
    that does not exist or is not writable, and a suffix outside ``suffixes`` (e.g. a figure format).
    """
    where = str(path)
    if directory:
        if path.exists() and not path.is_dir():
            raise ConfigError(option, where, "is a file; give a directory (it is created if its parent exists)")
    elif path.is_dir():
        raise ConfigError(option, where, "is a directory; give a file name")
    if suffixes and path.suffix.lower() not in suffixes:
        raise ConfigError(option, where, f"unknown format {path.suffix or '(no suffix)'!r}; use {', '.join(suffixes)}")
    parent = path.parent if not (directory and path.is_dir()) else path
    if not parent.is_dir():
        raise ConfigError(option, where, f"directory {parent} does not exist; create it first")
    if not os.access(parent, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)) or \
            str(parent.resolve()).startswith(("/proc", "/sys")):
        raise ConfigError(option, where, "is not writable here")
    return path

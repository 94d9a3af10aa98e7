"""Text that came from a user's file (scenario names, hosts, labels) made safe to print: no terminal control
characters, no rich markup."""

from __future__ import annotations

import unicodedata


def printable(text: object) -> str:
    """``text`` with every control or format character (ESC, CR, bidi overrides, ...) shown as ``?``."""
    return "".join("?" if unicodedata.category(ch)[0] == "C" else ch for ch in str(text))


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: object) -> str:
    """``text`` as one printable line: a newline or carriage return a value carried (a host in a cluster file)
    is shown as ``\\n``/``\\r``, so it cannot start a forged line of its own; other control characters as ``?``."""
    return "".join(_ESCAPES.get(ch, "?" if unicodedata.category(ch)[0] == "C" else ch) for ch in str(text))

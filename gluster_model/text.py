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


MAX_TOKEN = 200  # characters of one unbroken value (a host name, a path, a level) an error line repeats back


def capped(text: str, limit: int = MAX_TOKEN) -> str:
    """``text`` with every run of more than ``limit`` non-space characters cut, its length said: a value a user
    gave (a 5,000-character host name) is named, not echoed whole."""
    import re

    return re.sub(r"\S{%d,}" % (limit + 1), lambda m: f"{m.group(0)[:limit]}…({len(m.group(0)):,} characters)", text)

"""Text that came from a user's file (scenario names, hosts, labels) made safe to print: no terminal control
characters, no rich markup."""

from __future__ import annotations

import unicodedata


def printable(text: object) -> str:
    """``text`` with every control or format character (ESC, CR, bidi overrides, ...) shown as ``?``."""
    return "".join("?" if unicodedata.category(ch)[0] == "C" else ch for ch in str(text))

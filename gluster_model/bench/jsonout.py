"""Find the one JSON result in a tool's output, whatever warnings stand before or after it.

fio prints warnings before its JSON, iperf3's stderr is merged into its stdout, and a wrapper may add a line
after; reading "from the first { to the end" throws a valid result away when anything follows it, or when a
warning itself holds a brace.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..errors import ParseError


def find_json_object(text: str, what: str, host: str | None = None) -> dict[str, Any]:
    """The first JSON object in ``text`` that starts a line and decodes whole; ParseError saying why there is
    none. Only a brace in the first column starts a candidate: the tools print their result's outer brace there
    and indent every inner one, so a truncated result is reported as truncated, never read from an inner part.
    """
    decoder = json.JSONDecoder()
    first_error: json.JSONDecodeError | None = None
    starts = [0] if text.startswith("{") else []
    starts += [m.start() + 1 for m in re.finditer(r"\n\{", text)]
    for pos in starts:
        try:
            obj, _ = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            first_error = first_error or exc
            continue
        if isinstance(obj, dict):
            return obj
    if first_error is not None:
        raise ParseError(what, f"invalid JSON ({first_error.msg} at char {first_error.pos}; output truncated?)",
                         host)
    excerpt = " ".join(text.split())
    raise ParseError(what, "no JSON object in it" + (f": {excerpt[:120]!r}" if excerpt else " (empty)"), host)


def figure(value: object) -> float:
    """A measured figure from a tool's JSON: a number that is finite and not negative; TypeError or ValueError
    for anything else (JSON's ``NaN`` and ``Infinity``, which Python's decoder takes, or a negative count, are
    garbled output, not measurements)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{value!r} is not a number")
    x = float(value)
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"{value!r} is not a measured figure")
    return x

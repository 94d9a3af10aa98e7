"""Several commands in one SSH round trip: each framed by markers that carry its exit status.

A command that fails, prints nothing or prints garbage cannot shift the parse of the next one, and a
missing end marker tells truncated output apart from a command that merely failed.
"""

from __future__ import annotations

import shlex

from ..errors import ParseError

MARK = "@@glmodel"


def section(name: str, argv: list[str]) -> str:
    """Shell text running ``argv`` (stdout and stderr together) between begin/end markers."""
    return begin(name) + f"{{ {shlex.join(argv)} ; }} 2>&1; " + end(name, '"$?"')


def begin(name: str) -> str:
    _check_name(name)
    return f"printf '\\n{MARK} begin {name}\\n'; "


def end(name: str, status: str) -> str:
    """The end marker; ``status`` is shell text expanding to the exit status (e.g. ``"$?"`` or ``"$r1"``)."""
    _check_name(name)
    return f"printf '\\n{MARK} end {name} %s\\n' {status}"


def _check_name(name: str) -> None:
    if not name or any(c.isspace() or c in "'\\%" for c in name):
        raise ValueError(f"bad section name {name!r}")


def parse_sections(text: str, what: str, host: str | None = None) -> dict[str, tuple[int, str]]:
    """Split marked output into {section: (exit status, text)}; raise ParseError if a section is cut off."""
    sections: dict[str, tuple[int, str]] = {}
    current: str | None = None
    buf: list[str] = []
    for line in text.splitlines():
        if line.startswith(f"{MARK} begin "):
            parts = line.split()
            if len(parts) != 3 or current is not None:  # a name, and the section before it ended
                raise ParseError(what, f"unexpected marker {line[:80]!r}" + (
                    f" inside section '{current}' (its end marker is missing)" if current else ""), host)
            current, buf = parts[2], []
        elif line.startswith(f"{MARK} end "):
            parts = line.split()
            if current is None or len(parts) != 4 or parts[2] != current or not parts[3].isdecimal():
                raise ParseError(what, f"unexpected marker {line[:80]!r}", host)
            sections[current] = (int(parts[3]), "\n".join(buf).strip())
            current = None
        elif current is not None:
            buf.append(line)
    if current is not None:
        raise ParseError(what, f"section '{current}' has no end marker (output truncated?)", host)
    return sections

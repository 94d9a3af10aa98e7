"""Values as people write them in plans and scenarios: byte sizes (binary units, as Gluster uses them) and
on/off switches. Light, so any command can use it."""

from __future__ import annotations

import re

_SIZE = re.compile(r"^(\d+)\s*([KMGT]?B?)$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "G": 1 << 30, "GB": 1 << 30,
          "T": 1 << 40, "TB": 1 << 40}


def parse_size(value: str | int) -> int:
    """'64MB', '64M', '4KB', 1048576 -> bytes (binary units, as Gluster uses them)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError(f"{value!r} is not a size (use e.g. 512KB, 64MB, 1GB)")
    if isinstance(value, int):
        if value < 0:
            raise ValueError("a size cannot be negative")
        return value
    m = _SIZE.match(value.strip())
    if not m:
        raise ValueError(f"'{value}' is not a size (use e.g. 512KB, 64MB, 1GB)")
    return int(m.group(1)) * _UNITS[m.group(2).upper()]


def parse_ints(text: str) -> list[int]:
    """A comma-separated list of whole numbers ("16,32,64")."""
    parts = [v.strip() for v in text.split(",") if v.strip()]
    if not parts or not all(v.isdecimal() for v in parts):
        raise ValueError("a comma-separated list of whole numbers, e.g. 16,32,64")
    return [int(v) for v in parts]


def gluster_size(n: int) -> str:
    """Bytes -> the shortest exact form Gluster accepts (64MB, 4KB, 100)."""
    for unit, mult in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n % mult == 0 and n >= mult:
            return f"{n // mult}{unit}"
    return str(n)


_SWITCH = {"on": True, "true": True, "yes": True, "off": False, "false": False, "no": False}


def parse_switch(value: bool | str) -> bool:
    """True/False, or on/off, true/false, yes/no in any case."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _SWITCH:
        return _SWITCH[value.strip().lower()]
    raise ValueError(f"{value!r} is not a switch (use on/off or true/false)")

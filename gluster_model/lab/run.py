"""The lab's one way to run a local command or touch a kernel file, and to find and end its processes.

Every hardware module of the lab (links, bricks, disk, RAM, CPU) and its lifecycle run commands through ``run``
and write kernel settings through ``write_knob``, so errors, time-outs and the "needs root" hint read the same.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..errors import LabError

Progress = Callable[[str], None]


def quiet(_: str) -> None:
    """A progress callback that says nothing."""


def run(argv: list[str], timeout: float = 30, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` locally; a missing tool, a time-out or (with ``check``) a failure is a LabError."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise LabError(f"`{argv[0]}` not found; run scripts/setup.sh to install the lab's packages") from None
    except subprocess.TimeoutExpired:
        raise LabError(f"`{' '.join(argv)}` did not finish within {timeout:g}s") from None
    if check and proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        hint = " (the lab needs root)" if "Operation not permitted" in proc.stderr else ""
        raise LabError(f"`{' '.join(argv)}` exited {proc.returncode}: {tail[0]}{hint}")
    return proc


def write_knob(path: Path, value: str) -> None:
    """Write one kernel setting (a cgroup or sysfs file); a refusal is a LabError naming the file and value."""
    try:
        with open(path, "w") as f:  # one write(2): the kernel parses each write as a whole line
            f.write(value)
    except OSError as exc:
        hint = " (the lab needs root)" if exc.errno in (1, 13) else ""
        raise LabError(f"cannot write {value!r} to {path}: {exc.strerror}{hint}") from None


def read_knob(path: Path) -> str | None:
    """A kernel file's text, or None when it does not exist."""
    try:
        return path.read_text()
    except OSError:
        return None


def port_open(address: str, port: int, timeout: float = 0.2) -> bool:
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise LabError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(0.05)


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def all_pids() -> Iterator[int]:
    for entry in Path("/proc").iterdir():
        if entry.name.isdecimal():
            yield int(entry.name)


def read_pid(path: Path) -> int | None:
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdecimal() else None


def names(pid: int, marker: str) -> bool:
    """Whether a process's command line names ``marker`` (a lab or node directory; pids get reused)."""
    return any(marker in arg for arg in cmdline(pid))


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc parent links)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out

"""Pure parsers for iozone output: throughput mode (-t) and auto/table mode (-a). Results in kB/s."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ParseError
from .metrics import METRICS

UNIT = "kB/s"

# iozone's label in "Children see throughput for N <label>" -> glmodel's metric name.
LABELS: dict[str, str] = {
    "initial writers": "write",
    "rewriters": "rewrite",
    "readers": "read",
    "re-readers": "reread",
    "reverse readers": "backward_read",
    "stride readers": "stride_read",
    "random readers": "random_read",
    "random writers": "random_write",
    "mixed workload": "mixed",
    "record rewriters": "record_rewrite",
    "pwrite writers": "pwrite",
    "pread readers": "pread",
    "fwriters": "fwrite",
    "freaders": "fread",
}

_CHILDREN = re.compile(r"Children see throughput for\s+(\d+)\s+(.+?)\s*=\s*([\d.]+)\s*(kB|KB|MB|ops)/sec", re.I)
_PARENT = re.compile(r"Parent sees throughput for\s+(\d+)\s+(.+?)\s*=\s*([\d.]+)\s*(kB|KB|MB|ops)/sec", re.I)
_STAT = re.compile(r"^(Min|Max|Avg) throughput per process\s*=\s*([\d.]+)\s*(kB|KB|MB|ops)/sec", re.I)
_MINXFER = re.compile(r"^Min xfer\s*=\s*([\d.]+)\s*(kB|KB|MB|ops)", re.I)


def _to_kb(value: float, unit: str) -> float:
    return value * 1024 if unit.upper() == "MB" else value


def _unit(units: set[str]) -> str:
    """The one unit of a run's figures: kB/s (kB or MB printed), or ops/s (iozone -O). Mixed is refused."""
    kinds = {"ops/s" if u.lower() == "ops" else UNIT for u in units}
    if len(kinds) > 1:
        raise ParseError("iozone output", "figures in both kB/sec and ops/sec in one run; cannot tell which is which")
    return kinds.pop() if kinds else UNIT


@dataclass(frozen=True)
class ThroughputMetric:
    """One test's figures; ``*_kbps`` are in the output's ``unit`` (kB/s, or ops/s for iozone -O)."""

    name: str
    threads: int
    children_kbps: float
    parent_kbps: float | None
    min_kbps: float
    max_kbps: float
    avg_kbps: float
    min_xfer_kb: float | None


@dataclass(frozen=True)
class IozoneOutput:
    mode: str  # "throughput" or "auto"
    metrics: dict[str, ThroughputMetric] = field(default_factory=dict)
    table: list[dict[str, float]] = field(default_factory=list)
    version: str | None = None
    flags: tuple[str, ...] = ()
    unit: str = UNIT  # "kB/s", or "ops/s" when iozone ran with -O (operations per second)
    command: str | None = None  # iozone's "Command line used" line
    notes: tuple[str, ...] = ()  # what the parser could not vouch for (an auto table whose end is missing)


def _metric_name(label: str) -> str:
    label = " ".join(label.split())
    return LABELS.get(label, label.replace(" ", "_").replace("-", "_"))


def _version(text: str) -> str | None:
    m = re.search(r"Version \$Revision:\s*([\d.]+)", text)
    return m.group(1) if m else None


def _flags(text: str) -> tuple[str, ...]:
    """Which sync/timing modes iozone says it ran with (O_DIRECT, O_SYNC, fsync, close)."""
    found = []
    for needle, flag in (("O_DIRECT feature enabled", "O_DIRECT"), ("SYNC Mode", "O_SYNC"),
                         ("Include fsync in write timing", "fsync"), ("Include close in write timing", "close")):
        if needle in text:
            found.append(flag)
    return tuple(found)


_COMMAND = re.compile(r"^\s*Command line used:\s*(.*)$", re.M)


def split_runs(text: str) -> list[str]:
    """The runs in an output file that holds several (one "Command line used" line each), in order."""
    starts = [m.start() for m in _COMMAND.finditer(text)]
    if len(starts) <= 1:
        return [text]
    # Each run's text begins after the previous run's completion line (its banner stands before the command).
    cuts = [0]
    for pos in starts[1:]:
        done = text.rfind("iozone test complete.", 0, pos)
        cuts.append(done + len("iozone test complete.") if done >= cuts[-1] else pos)
    return [text[a:b] for a, b in zip(cuts, [*cuts[1:], len(text)])]


def parse_runs(text: str, expected: list[str] | None = None) -> list[IozoneOutput]:
    """Every run in an output file (several iozone runs written one after another), each parsed on its own."""
    return [parse_iozone(part, expected) for part in split_runs(text)]


def results_complete(text: str, expected: list[str]) -> bool:
    """Whether every expected test's block has been printed to its last line ("Min xfer"): all iozone still
    does after that is sleep and say it is complete."""
    done: set[str] = set()
    current: str | None = None
    for line in text.splitlines():
        line = line.strip()
        m = _CHILDREN.search(line)
        if m:
            current = _metric_name(m.group(2))
        elif current is not None and _MINXFER.search(line):
            done.add(current)
            current = None
    return bool(expected) and all(name in done for name in expected)


def parse_throughput(text: str, expected: list[str] | None = None, ended_after_results: bool = False) -> IozoneOutput:
    """Parse throughput-mode output ("Children see throughput for N <test> = X kB/sec" blocks) of one run.

    Raises ParseError naming what is missing: the completion line (truncated output), a block's
    min/max/avg lines, or an expected metric; and for a file holding several runs (use ``parse_runs``) or
    one test reported twice, which would otherwise leave only the last figure. ``ended_after_results``: the
    master was ended once its last result was printed (``results_complete``), before its completion line;
    every expected block must then be whole to its "Min xfer" line instead.
    """
    if "Children see throughput" not in text:
        raise ParseError("iozone output", "no 'Children see throughput' line (did iozone run in -t mode?)")
    commands = _COMMAND.findall(text)
    if len(commands) > 1:
        raise ParseError("iozone output", f"holds {len(commands)} runs (one 'Command line used' line each); "
                         "read them one by one (parse_runs)")
    lines = [ln.strip() for ln in text.splitlines()]
    metrics: dict[str, ThroughputMetric] = {}
    units: set[str] = set()
    i = 0
    while i < len(lines):
        m = _CHILDREN.search(lines[i])
        if not m:
            i += 1
            continue
        name = _metric_name(m.group(2))
        if name in metrics:
            raise ParseError("iozone output", f"test '{name}' is reported twice; is this several runs in one file?")
        threads = int(m.group(1))
        children = _to_kb(float(m.group(3)), m.group(4))
        units.add(m.group(4))
        parent = None
        stats: dict[str, float] = {}
        min_xfer = None
        j = i + 1
        while j < len(lines) and not _CHILDREN.search(lines[j]) and not lines[j].startswith(
                ("Test running", "iozone test complete")):
            p = _PARENT.search(lines[j])
            st = _STAT.search(lines[j])
            x = _MINXFER.search(lines[j])
            if p:
                parent = _to_kb(float(p.group(3)), p.group(4))
                units.add(p.group(4))
            elif st:
                stats[st.group(1).lower()] = _to_kb(float(st.group(2)), st.group(3))
                units.add(st.group(3))
            elif x:
                min_xfer = float(x.group(1))
            j += 1
        missing = [k for k in ("min", "max", "avg") if k not in stats]
        if missing:
            raise ParseError("iozone output", f"'{name}' block lacks its {'/'.join(missing)} throughput per process line")
        metrics[name] = ThroughputMetric(name, threads, children, parent, stats["min"], stats["max"], stats["avg"],
                                         min_xfer)
        i = j
    if ended_after_results:
        if expected is None or not results_complete(text, expected):
            raise ParseError("iozone output", f"output truncated after {', '.join(metrics) or 'no test'}: a "
                             "result block is not whole")
    elif "iozone test complete." not in text:
        raise ParseError("iozone output", f"no 'iozone test complete.' line: output truncated after "
                         f"{', '.join(metrics) or 'no test'}")
    for name in expected or []:
        if name not in metrics:
            raise ParseError("iozone output", f"expected test '{name}' is missing (got {', '.join(metrics)})")
    return IozoneOutput("throughput", metrics, version=_version(text), flags=_flags(text), unit=_unit(units),
                        command=commands[0].strip() if commands else None)


# Column order of iozone's auto-mode table.
AUTO_COLUMNS = ("file_kb", "record_kb", *METRICS,
                "backward_read", "record_rewrite", "stride_read", "fwrite", "frewrite", "fread", "freread")


_AUTO_HEADER = re.compile(r"^\s*kB\s+reclen\s+write", re.I)


def parse_auto(text: str) -> IozoneOutput:
    """Parse auto/table mode (-a): one row per (file size, record size).

    A cell belongs to the header column whose right edge is nearest; iozone leaves the columns of tests it did
    not run blank, so position, not order, says which test a figure is. Older versions print the header as
    ``KB  reclen`` and some print fewer figures per row than the header names; both read the same way. A row
    whose cells do not fall one to a column, in order, is refused.
    """
    if len(_COMMAND.findall(text)) > 1:
        raise ParseError("iozone auto-mode output", "holds several runs (one 'Command line used' line each); "
                         "read them one by one (parse_runs)")
    if re.search(r"Output is in (ops|operations)", text, re.I):
        raise ParseError("iozone auto-mode output", "figures are operations per second (-O); glmodel's tables are "
                         "kB/s: run iozone without -O")
    lines = text.splitlines()
    complete = "iozone test complete." in text
    # Without iozone's closing line (pasted, or cut short), a last line without its newline was cut mid-row.
    cut = not complete and bool(lines) and not text.endswith("\n") and bool(lines[-1].strip())
    if cut:
        lines.pop()
    header_idx = next((k for k, ln in enumerate(lines) if _AUTO_HEADER.match(ln)), None)
    if header_idx is None:
        raise ParseError("iozone auto-mode output", "no 'kB  reclen  write ...' header line")
    ends = [m.end() for m in re.finditer(r"\S+", lines[header_idx])]
    if len(ends) < 4:
        raise ParseError("iozone auto-mode output", "header has too few columns")
    rows: list[dict[str, float]] = []
    for ln in lines[header_idx + 1:]:
        if not ln.strip():
            if rows:
                break
            continue
        if ln.strip().startswith("iozone test complete"):
            break
        row: dict[str, float] = {}
        last = -1
        for m in re.finditer(r"\S+", ln):
            if not re.fullmatch(r"\d+(\.\d+)?", m.group()):
                raise ParseError("iozone auto-mode output", f"non-numeric cell {m.group()!r} in row {ln.strip()!r}")
            col = min(range(len(ends)), key=lambda c: abs(ends[c] - m.end()))
            if col <= last or col >= len(AUTO_COLUMNS):
                raise ParseError("iozone auto-mode output", f"row {ln.strip()!r} does not line up with the header's "
                                 "columns")
            last = col
            row[AUTO_COLUMNS[col]] = float(m.group())
        if "file_kb" not in row or "record_kb" not in row:
            raise ParseError("iozone auto-mode output", f"row {ln.strip()!r} lacks file or record size")
        rows.append(row)
    notes: tuple[str, ...] = ()
    if not complete:
        notes = (f"no 'iozone test complete.' line: the end of the output is missing; {len(rows)} complete "
                 f"row(s) read" + ("; a last row cut mid-line left out" if cut else ""),)
    if not rows:
        raise ParseError("iozone auto-mode output", "header without any result row (output truncated?)")
    commands = _COMMAND.findall(text)
    return IozoneOutput("auto", table=rows, version=_version(text), flags=_flags(text),
                        command=commands[0].strip() if commands else None, notes=notes)


def parse_iozone(text: str, expected: list[str] | None = None) -> IozoneOutput:
    """Parse either mode, whichever the output is."""
    if "Children see throughput" in text:
        return parse_throughput(text, expected)
    return parse_auto(text)

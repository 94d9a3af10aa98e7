"""What a host's processes may really use: memory and CPU limits of their control group, disk throttles on the
brick devices, and a short fixed CPU score — host facts read the same way on a lab node and on a real server.

A host's RAM as a model sees it is the smaller of its memory and the limit of the control group glmodel's
commands run in (a container, a systemd slice, or a lab node's group); its CPU is measured, not named: the
score is the rate at which one process hashes a fixed buffer under whatever quota applies. Scripts are built
and parsed by pure functions; ``preflight`` runs them.
"""

from __future__ import annotations

import re
import shlex

from ..errors import ParseError
from .disk import V2_KEYS

# Limits at or above this are "no limit" (cgroup v1 prints 2^63 rounded down to a page).
_UNLIMITED = 1 << 60
SCORE_BYTES = 32 << 20
SCORE_REPEATS = 3

# One POSIX sh script: for each cgroup level from a process's own group up to the root, the memory and CPU
# limits of cgroup v1 and v2 (whichever exist) as "name=value" lines: the calling shell's (``LIMITS_SCRIPT``),
# or the host's glusterd's (``hardware.group``, for emulation).
_LIMITS = r"""
level() { # hierarchy-root relative-path file...
  d="$1${2%/}"
  while [ -n "$d" ]; do
    for f in $3; do [ -r "$d/$f" ] && printf '%s=%s\n' "$f" "$(tr '\n' ' ' < "$d/$f")"; done
    [ "$d" = "$1" ] && break
    d=${d%/*}; [ ${#d} -lt ${#1} ] && d="$1"
  done
}
while read -r _ mnt type opts _; do
  case "$type" in
    cgroup2) rel=$(awk -F: '$1=="0"{print $3}' /proc/@PID@/cgroup); level "$mnt" "$rel" "memory.max cpu.max" ;;
    cgroup)
      for c in memory cpu; do
        case ",$opts," in *",$c,"*)
          rel=$(awk -F: -v c="$c" '{n=split($2,a,","); for(i=1;i<=n;i++) if(a[i]==c) print $3}' /proc/@PID@/cgroup)
          if [ "$c" = memory ]; then level "$mnt" "$rel" "memory.limit_in_bytes"
          else level "$mnt" "$rel" "cpu.cfs_quota_us cpu.cfs_period_us"; fi ;;
        esac
      done ;;
  esac
done < /proc/self/mounts
"""


def limits_script(pid: str = "self") -> str:
    """The limits script for process ``pid`` (a number, or a shell word such as ``$gp``)."""
    return _LIMITS.replace("@PID@", pid)


LIMITS_SCRIPT = limits_script()


def parse_limits(text: str, mem_total: int | None = None, cpus: int | None = None) -> dict[str, float | int | None]:
    """{ram_limit_bytes, cpu_quota_cores} from LIMITS_SCRIPT's output: the tightest limit on any level.

    A cgroup v1 level prints its quota and period as two lines; v2 prints "quota period" as one. None: no limit.
    """
    mem: list[int] = []
    cores: list[float] = []
    quota: int | None = None
    for line in text.splitlines():
        if "=" not in line:
            continue
        key, value = line.split("=", 1)
        words = value.split()
        try:
            if key in ("memory.limit_in_bytes", "memory.max") and words and words[0] != "max":
                mem.append(_at_least(0, words[0]))
            elif key == "cpu.max" and len(words) == 2 and words[0] != "max":
                cores.append(_at_least(1, words[0]) / _at_least(1, words[1]))
            elif key == "cpu.cfs_quota_us" and words:
                quota = int(words[0])  # -1: no quota
            elif key == "cpu.cfs_period_us" and words and quota is not None:
                if quota > 0:
                    cores.append(quota / _at_least(1, words[0]))
                quota = None
        except ValueError:
            raise ParseError("cgroup limits", f"unexpected line {line.strip()[:80]!r}") from None
    limit = min([m for m in mem if m < _UNLIMITED], default=None)
    if limit is not None and mem_total is not None and limit >= mem_total:
        limit = None
    quota_cores = min(cores, default=None)
    if quota_cores is not None and cpus is not None and quota_cores >= cpus:
        quota_cores = None
    return {"ram_limit_bytes": limit, "cpu_quota_cores": quota_cores}


def _at_least(least: int, word: str) -> int:
    """``word`` as a whole number of at least ``least``; ValueError otherwise (a kernel prints none smaller)."""
    n = int(word)
    if n < least:
        raise ValueError(f"{word} < {least}")
    return n


def cpu_score_script(nbytes: int = SCORE_BYTES, repeats: int = SCORE_REPEATS) -> str:
    """Shell text printing the nanoseconds one sha256sum process takes to hash an ``nbytes`` file, ``repeats``
    times. The file is written (and read once, into the page cache) before timing starts, so the timed work is
    one process's hashing alone: a pipeline would count the feeding process too, which runs on another core
    when the host has one free but shares the quota when it is limited."""
    n, r = int(nbytes), int(repeats)
    return (f"f=$(mktemp) || exit 1; trap 'rm -f \"$f\"' EXIT; head -c {n} /dev/zero > \"$f\" && "
            f"sha256sum \"$f\" >/dev/null || exit 1; i=0; while [ $i -lt {r} ]; do s=$(date +%s%N); "
            f"sha256sum \"$f\" >/dev/null; e=$(date +%s%N); echo $((e - s)); i=$((i + 1)); done")


def parse_cpu_score(text: str, nbytes: int = SCORE_BYTES, host: str | None = None) -> float:
    """CPU score in MB/s of SHA-256 (10⁶ bytes per second) from the fastest repeat; refuses anything else."""
    times = []
    for line in text.split():
        if not line.isdecimal() or int(line) <= 0:
            raise ParseError("cpu score", f"not a time in nanoseconds: {line[:40]!r}", host)
        times.append(int(line))
    if not times:
        raise ParseError("cpu score", "no timing printed", host)
    return nbytes / (min(times) / 1e9) / 1e6


_V2_KINDS = {v2: kind for kind, v2 in V2_KEYS.items()}  # io.max key -> limit kind


def throttle_script(brick_paths: list[str]) -> str:
    """Shell text printing each brick's device (MAJ:MIN) and the physical device under it (``parse_under``), the
    block throttle entries of cgroup v1's root, and cgroup v2's ``io.max`` lines of the shell's own group and each
    group above it (a lab node's limit is in the node's group, which its sshd and every session it starts belong
    to)."""
    # A loop device's own number says nothing of the disk: the file behind it does (with its direct-I/O flag).
    parts = [f"d=$(stat -c '%Hd:%Ld' {shlex.quote(p)} 2>/dev/null); printf 'dev %s %s\\n' {shlex.quote(p)} \"$d\"; "
             f"[ -n \"$d\" ] && {{ b=$(cat /sys/dev/block/$d/loop/backing_file 2>/dev/null) && "
             "u=\"loop@$(stat -c '%Hd:%Ld' \"$b\")@$(cat /sys/dev/block/$d/loop/dio 2>/dev/null)\" || u=$d; "
             f"printf 'under %s %s\\n' {shlex.quote(p)} \"$u\"; }}; true" for p in brick_paths]
    files = " ".join(f"blkio.throttle.{k}_device" for k in ("read_bps", "write_bps", "read_iops", "write_iops"))
    parts.append(f"for f in {files}; do [ -r /sys/fs/cgroup/blkio/$f ] && sed \"s/^/$f /\" /sys/fs/cgroup/blkio/$f; "
                 "done; true")
    parts.append("g=$(sed -n 's/^0:://p' /proc/self/cgroup 2>/dev/null); "
                 "for r in /sys/fs/cgroup /sys/fs/cgroup/unified; do [ -n \"$g\" ] || break; d=$r$g; "
                 "while [ \"${#d}\" -ge \"${#r}\" ]; do [ -r \"$d/io.max\" ] && sed 's/^/io.max /' \"$d/io.max\"; "
                 "[ \"$d\" = \"$r\" ] && break; d=${d%/*}; done; done; true")
    return "; ".join(parts)


def parse_under(text: str) -> dict[str, str]:
    """{brick path: the physical device under it} from ``throttle_script``'s ``under`` lines: ``MAJ:MIN`` of the
    brick's filesystem, or ``loop@MAJ:MIN@dio`` for a loop device backed by a file on device MAJ:MIN."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "under" and re.fullmatch(r"(loop@)?\d+:\d+(@[01]?)?", words[2]):
            out[words[1]] = words[2]
    return out


def parse_throttles(text: str) -> dict[str, dict[str, int]]:
    """{brick path: {read_bps, write_bps, read_iops, write_iops}} for bricks whose device is throttled (v1 or
    v2; where several groups limit a device, the least limit)."""
    devices: dict[str, str] = {}
    limits: dict[str, dict[str, int]] = {}

    def limit(device: str, kind: str, value: int) -> None:
        have = limits.setdefault(device, {})
        have[kind] = min(value, have.get(kind, value))

    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "dev":
            devices[words[1]] = words[2]
        elif len(words) == 3 and words[0].startswith("blkio.throttle.") and words[2].isdecimal():
            limit(words[1], words[0].removeprefix("blkio.throttle.").removesuffix("_device"), int(words[2]))
        elif len(words) >= 3 and words[0] == "io.max":
            for word in words[2:]:
                key, _, value = word.partition("=")
                if key in _V2_KINDS and value.isdecimal():
                    limit(words[1], _V2_KINDS[key], int(value))
    return {path: limits[dev] for path, dev in devices.items() if dev in limits}

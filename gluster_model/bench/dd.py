"""dd as an engine: sequential reads and writes of whole files at any block size, one process per reader, each
timed by dd itself. Script builders and the parser are pure; ``run_dd_pass`` is the side effect.

Where iozone's distributed mode costs seconds of start-up per trial, a dd pass is one SSH round trip per client,
so studies of many short trials (30 reads of a 1 MB file) and of block sizes outside iozone's range (1 byte
to 128 MiB) stay cheap. Each dd reports its bytes and seconds ("N bytes ... copied, S s, ..." under LC_ALL=C),
so a reader's time excludes process start-up and the SSH round trip.
"""

from __future__ import annotations

import math
import re
import shlex
from dataclasses import dataclass, field
from typing import Literal

from ..config.cluster import ClusterSpec, Host
from ..errors import GlmodelError, ParseError
from ..remote.executor import Executor, shell

Op = Literal["write", "read"]
Sync = Literal["none", "osync", "odirect"]
_MARK = "GLMDD"
_COPIED = re.compile(r"^(\d+) bytes .*copied, ([0-9.]+(?:e-?\d+)?) s")


@dataclass(frozen=True)
class ReaderResult:
    """One dd process: how many bytes it moved in how many seconds, or why it failed."""

    host: str
    index: int
    bytes: int
    seconds: float
    error: str | None = None

    @property
    def kbps(self) -> float:
        return self.bytes / 1024 / self.seconds if self.seconds > 0 else 0.0


@dataclass
class DdPass:
    """One test pass over every client used: per-reader results and what ran."""

    op: Op
    readers: list[ReaderResult] = field(default_factory=list)
    scripts: dict[str, str] = field(default_factory=dict)
    raw: str = ""

    @property
    def kbps(self) -> float:
        """Aggregate throughput as iozone reports it: the sum of every reader's own rate (kB/s)."""
        return sum(r.kbps for r in self.readers)

    @property
    def errors(self) -> list[str]:
        return [f"{r.host} reader {r.index}: {r.error}" for r in self.readers if r.error]


def count_for(file_size: int, block_size: int) -> int:
    """Blocks per file: the file size rounded up to whole blocks (a 1 MB file at 3 MB blocks is one block)."""
    return max(1, math.ceil(file_size / block_size))


def dd_argv(op: Op, path: str, block_size: int, count: int, sync: Sync) -> list[str]:
    """argv of one dd: write zeros to ``path`` or read it to /dev/null.

    Writes: O_DIRECT (oflag=direct), O_SYNC (oflag=sync), or buffered with an fsync before dd reports
    (conv=fsync), so a buffered write is timed to stable storage as iozone -e does. Reads: O_DIRECT or buffered.
    """
    if op == "write":
        argv = ["dd", "if=/dev/zero", f"of={path}", f"bs={block_size}", f"count={count}"]
        argv.append({"odirect": "oflag=direct", "osync": "oflag=sync", "none": "conv=fsync"}[sync])
        return argv
    argv = ["dd", f"if={path}", "of=/dev/null", f"bs={block_size}", f"count={count}"]
    if sync == "odirect":
        argv.append("iflag=direct")
    return argv


def prepare_script(workdir: str, readers: int, file_size: int) -> str:
    """Make ``readers`` files of zeros of ``file_size`` bytes in ``workdir`` (kept when already that size), and
    flush them, so a read pass finds them on stable storage and caches can be dropped before it."""
    wd = shlex.quote(workdir)
    return (f"mkdir -p {wd} || exit 1; for i in $(seq 0 {readers - 1}); do f={wd}/f$i; "
            f"[ \"$(stat -c %s \"$f\" 2>/dev/null)\" = {file_size} ] || head -c {file_size} /dev/zero > \"$f\" "
            f"|| exit 1; done; sync")


def pass_script(op: Op, workdir: str, readers: int, block_size: int, count: int, sync: Sync) -> str:
    """Start ``readers`` dd processes at once on distinct files, wait for all, print one marked line each:
    ``GLMDD <index> <exit code> <dd's last stderr line>``."""
    wd = shlex.quote(workdir)
    jobs = []
    for i in range(readers):
        argv = shlex.join(dd_argv(op, f"{workdir}/f{i}", block_size, count, sync))
        jobs.append(f"( {argv} 2>\"$e/{i}\"; echo \"rc=$?\" >>\"$e/{i}\" ) &")
    report = (f"for i in $(seq 0 {readers - 1}); do rc=$(sed -n 's/^rc=//p' \"$e/$i\"); "
              f"echo \"{_MARK} $i $rc $(grep -v '^rc=' \"$e/$i\" | tail -n 1)\"; done")
    return (f"export LC_ALL=C; mkdir -p {wd} || exit 1; e=$(mktemp -d) || exit 1; "
            + " ".join(jobs) + f" wait; {report}; rm -rf \"$e\"")


def parse_pass(text: str, host: str, readers: int) -> list[ReaderResult]:
    """Per-reader results from a pass script's output; a reader missing, failed, or with no 'copied' line is
    an error naming the host and reader."""
    seen: dict[int, ReaderResult] = {}
    for line in text.splitlines():
        if not line.startswith(_MARK + " "):
            continue
        parts = line.split(" ", 3)
        if len(parts) < 3 or not parts[1].isdecimal():
            raise ParseError("dd pass output", f"garbled line {line[:80]!r}", host)
        idx, rc, rest = int(parts[1]), parts[2], parts[3] if len(parts) > 3 else ""
        m = _COPIED.match(rest.strip())
        if rc != "0" or m is None:
            seen[idx] = ReaderResult(host, idx, 0, 0.0, f"dd exited {rc or '?'}: {rest.strip()[:200] or 'no output'}")
        else:
            seen[idx] = ReaderResult(host, idx, int(m.group(1)), float(m.group(2)))
    missing = [i for i in range(readers) if i not in seen]
    if missing:
        raise ParseError("dd pass output", f"no result for reader(s) {', '.join(map(str, missing))}", host)
    return [seen[i] for i in range(readers)]


def reap_argv(workdir: str) -> list[str]:
    """pkill for dd processes still reading or writing files of ``workdir``: a remote dd outlives an interrupted
    or timed-out SSH session, and would go on loading the disk later trials are measured on."""
    return ["pkill", "-KILL", "-f", f"^dd .*(if|of)={re.escape(workdir)}/f[0-9]+( |$)"]


def workdirs(clients: list[Host], roots: dict[str, str], run_dir: str) -> dict[str, str]:
    """Each client's own directory under its root (mount point or local directory), named by the client, so
    clients sharing a volume never touch each other's files."""
    return {h.address: f"{roots[h.address]}/{run_dir}/{h.name}" for h in clients}


def make_workdirs(executor: Executor, clients: list[Host], roots: dict[str, str], run_dir: str,
                  *, shared: bool) -> None:
    """Create every client's work directory before a pass. On a shared volume the first client makes them all
    through its own mount: clients making their own raced to create the shared run directory, and Gluster's
    distribute layer then failed one client's ``mkdir -p`` with "File exists"."""
    if shared:
        first = clients[0]
        paths = [f"{roots[first.address]}/{run_dir}/{h.name}" for h in clients]
        executor.run(first.address, ["mkdir", "-p", "--", *paths], timeout=60)
    else:
        executor.run_many([h.address for h in clients],
                          lambda a: ["mkdir", "-p", "--", workdirs(clients, roots, run_dir)[a]], timeout=60)


def run_prepare(executor: Executor, dirs: dict[str, str], per_client: dict[str, int], file_size: int,
                timeout: float) -> None:
    """Create the files a read pass needs, on every client at once."""
    executor.run_many(list(per_client), lambda a: shell(prepare_script(dirs[a], per_client[a], file_size)),
                      timeout=timeout)


def reap(executor: Executor, dirs: dict[str, str]) -> None:
    executor.run_many(list(dirs), lambda a: reap_argv(dirs[a]), timeout=30, check=False)


def run_dd_pass(executor: Executor, op: Op, dirs: dict[str, str], per_client: dict[str, int], block_size: int,
                count: int, sync: Sync, timeout: float) -> DdPass:
    """One pass: every client's readers at once; failures of single readers are kept in the result."""
    out = DdPass(op)
    out.scripts = {a: pass_script(op, dirs[a], n, block_size, count, sync) for a, n in per_client.items()}
    results = executor.run_many(list(per_client), lambda a: shell(out.scripts[a]), timeout=timeout)
    raw = []
    for a, n in per_client.items():
        res = results[a]
        raw.append(f"## {a}\n{res.stdout}{res.stderr}")
        out.readers += parse_pass(res.stdout, a, n)
    out.raw = "\n".join(raw)
    return out


def remove_dirs(executor: Executor, clients: list[Host], roots: dict[str, str], run_dir: str) -> None:
    """Remove a run's directory under every root (a shared volume's directory once per client is harmless)."""
    executor.run_many([h.address for h in clients],
                      lambda a: ["rm", "-rf", "--", f"{roots[a]}/{run_dir}"], timeout=600, check=False)


def local_roots(cluster: ClusterSpec, clients: list[Host]) -> dict[str, str]:
    """Each client's directory on its own filesystem (the read-cost study's local target)."""
    if not clients:
        raise GlmodelError(f"{cluster.source}: no client to run dd on")
    return {h.address: h.local_dir for h in clients}

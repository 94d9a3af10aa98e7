"""Distributed iozone (-+m): workload spec, argv and client-file builders (pure), and the run itself.

The iozone master runs on the machine glmodel runs on; it starts one child per thread on the clients through
the command in its RSH environment variable, here a generated wrapper around OpenSSH that uses the cluster
file's identity and known_hosts with strict host-key checking. Children connect back to the master at the
address given with -+h.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import Field, field_validator, model_validator

from ..config.cluster import ClusterSpec, Frozen, Host
from ..errors import CommandFailed, GlmodelError, ParseError
from ..gluster.apply import drop_caches
from ..remote.executor import Executor, shell
from ..units import parse_size
from .engine import EngineResult, Measurement, TrialRequest
from .iozone_parse import UNIT, IozoneOutput, parse_throughput
from .iozone_ports import free_master_port
from .metrics import RETESTS, TEST_METRICS, Test

# iozone test numbers; write (-i 0) always runs first because the others need its files.
_TEST_NUMBER = {"write": "0", "read": "1", "random": "2"}
IOZONE_MAX_RECORD = 16 << 20


class IozoneWorkload(Frozen):
    """A run's workload. ``engine`` picks iozone (distributed, -+m) or dd (whole files, one process per thread,
    any block size); ``target`` reads and writes the Gluster mount or each client's own filesystem."""

    threads: int = Field(default=1, ge=1, le=1024)
    file_size: str = "64MB"
    record_size: str = "64KB"
    tests: list[Test] = ["write", "read", "random"]
    sync: Literal["none", "osync", "odirect"] = "none"
    include_flush: bool = True   # -e: fsync/fflush inside the timing, so writes are not just page cache
    include_close: bool = True   # -c: close() inside the timing (NFS/FUSE flush on close)
    retests: bool = False        # without it -+n: no rewrite/reread passes
    keep_files: bool = False     # -w: leave files behind
    clients: int | None = Field(default=None, ge=1, description="how many of the cluster's clients to use")
    engine: Literal["iozone", "dd"] = "iozone"
    target: Literal["gluster", "local"] = "gluster"
    degraded: bool = Field(default=False, description="read with one replica's brick stopped")
    cache: Literal["dropped", "kept"] | None = Field(default=None, description="drop caches before each pass, or "
                                                     "keep them warm (default: the protocol's drop_caches)")

    @field_validator("file_size", "record_size")
    @classmethod
    def _size(cls, v: str) -> str:
        n = parse_size(v)
        if n < 1:
            raise ValueError("sizes are at least 1 byte")
        # Whole kilobytes keep iozone's unit (its -s/-r take kB); dd takes bytes.
        return f"{n // 1024}k" if n % 1024 == 0 else str(n)

    @field_validator("tests")
    @classmethod
    def _tests(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("name at least one test: write, read, random")
        return sorted(set(v), key=list(_TEST_NUMBER).index)

    @model_validator(mode="before")
    @classmethod
    def _whole_blocks(cls, data: Any) -> Any:
        """dd moves whole blocks: a file is rounded up to a whole number of blocks (at least one), so the size
        recorded is the size moved."""
        if isinstance(data, dict) and data.get("engine") == "dd":
            try:
                size, block = parse_size(data.get("file_size", "64MB")), parse_size(data.get("record_size", "64KB"))
            except ValueError:
                return data  # the field validators say what is wrong
            if block > 0 and size % block:
                data = {**data, "file_size": str(-(-size // block) * block)}
        return data

    @model_validator(mode="after")
    def _engine(self) -> IozoneWorkload:
        size, record = parse_size(self.file_size), parse_size(self.record_size)
        if self.engine == "iozone":
            if size % 1024 or record % 1024:
                raise ValueError("iozone sizes are whole kilobytes (at least 1KB); use engine dd below that")
            if record > IOZONE_MAX_RECORD:
                raise ValueError("iozone records go up to 16MB; use engine dd above that")
            if self.target != "gluster" or self.degraded:
                raise ValueError("local targets and degraded reads run with engine dd")
        elif "random" in self.tests:
            raise ValueError("engine dd runs the write and read tests only")
        return self

    @property
    def identity(self) -> dict[str, object]:
        """The workload as it enters a run's config hash: settings at their defaults that older versions did not
        have are left out, so runs stored before them keep their hash (and a resume finds them done)."""
        out = self.model_dump(mode="json")
        for key, default in (("engine", "iozone"), ("target", "gluster"), ("degraded", False), ("cache", None)):
            if out.get(key) == default:
                out.pop(key)
        return out

    def expected_metrics(self) -> list[str]:
        tests = ["write", *(t for t in self.tests if t != "write")]  # iozone always writes first
        return [m for t in tests for m in TEST_METRICS[t] if self.retests or m not in RETESTS]


def build_argv(w: IozoneWorkload, client_file: str, master: str, iozone: str = "iozone") -> list[str]:
    """argv of the iozone master for a distributed throughput run."""
    argv = [iozone, "-+m", client_file, "-+h", master, "-t", str(w.threads), "-s", w.file_size, "-r", w.record_size]
    for t in ["write", *[t for t in w.tests if t != "write"]]:
        argv += ["-i", _TEST_NUMBER[t]]
    if w.sync == "odirect":
        argv.append("-I")
    elif w.sync == "osync":
        argv.append("-o")
    if w.include_flush:
        argv.append("-e")
    if w.include_close:
        argv.append("-c")
    if not w.retests:
        argv.append("-+n")
    if w.keep_files:
        argv.append("-w")
    return argv


def client_file(threads: int, workdirs: list[tuple[str, str]], iozone_path: str = "/usr/bin/iozone") -> str:
    """The -+m file: one line per thread, 'host workdir iozone-path', threads spread round-robin over clients."""
    if not workdirs:
        raise GlmodelError("iozone needs at least one client")
    lines = []
    for t in range(threads):
        host, workdir = workdirs[t % len(workdirs)]
        lines.append(f"{host} {workdir} {iozone_path}")
    return "\n".join(lines) + "\n"


def rsh_wrapper(cluster: ClusterSpec, hosts: list[Host], ssh: str = "ssh", ended: str | None = None) -> str:
    """A sh script iozone can use as RSH: per-host user/port/identity, strict host keys, no prompts.

    ``ended``: a file to which the script appends "HOST EXIT" when the ssh to a child ends in failure (the
    node dropped, the child was killed, it could not start): iozone's master does not notice a lost child and
    would wait for it until the trial's timeout.
    """
    cases = []
    for h in hosts:
        opts = ["-p", str(h.ssh.port), "-l", h.ssh.user, "-o", f"UserKnownHostsFile={h.ssh.known_hosts}"]
        if h.ssh.identity_file:
            opts += ["-i", str(h.ssh.identity_file), "-o", "IdentitiesOnly=yes"]
        cases.append(f"  {shlex.quote(h.address)}) set -- {shlex.join(opts)} \"$@\" ;;")
    return "\n".join([
        "#!/bin/sh",
        "# Generated by glmodel for iozone's RSH: strict host-key checking, key from the cluster file.",
        'host="$1"',
        'case "$host" in',
        *cases,
        '  *) echo "glmodel rsh: host $host is not in the cluster file" >&2; exit 255 ;;',
        "esac",
        *([f"{shlex.quote(ssh)} -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=10 \"$@\"",
           'rc=$?',
           f'[ "$rc" -eq 0 ] || printf \'%s %s\\n\' "$host" "$rc" >> {shlex.quote(ended)}',
           'exit "$rc"'] if ended else
          [f"exec {shlex.quote(ssh)} -o StrictHostKeyChecking=yes -o BatchMode=yes -o ConnectTimeout=10 \"$@\""]),
        "",
    ])


def ended_children(text: str) -> list[tuple[str, int]]:
    """(host, ssh exit status) of each child the RSH wrapper saw end in failure, from its ``ended`` file.

    >>> ended_children("127.1.1.2 255\\n")
    [('127.1.1.2', 255)]
    """
    out = []
    for line in text.splitlines():
        host, _, code = line.strip().rpartition(" ")
        if host and code.isdigit():
            out.append((host, int(code)))
    return out


def master_address(client: Host) -> str:
    """The local address the clients reach us at: the source address the kernel picks for the first client."""
    family = socket.AF_INET6 if ":" in client.address else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.connect((client.address, 9))  # UDP connect sends nothing; it only selects a route
        return str(s.getsockname()[0])


@dataclass(frozen=True)
class IozoneRun:
    argv: list[str]
    client_file: str
    output: IozoneOutput | None
    raw: str
    seconds: float
    error: str | None = None
    host: str | None = None  # the client the error is about, where one is known


STARTUP_TIMEOUT_S = 60.0  # a trial whose children did no I/O for this long is stopped
STOP_GRACE_S = 5.0        # after SIGTERM to iozone's process group, how long before SIGKILL


def run_iozone(cluster: ClusterSpec, executor: Executor, volume: str, workload: IozoneWorkload,
               mount_points: dict[str, str], timeout: float = 3600,
               startup_timeout: float = STARTUP_TIMEOUT_S) -> IozoneRun:
    """Run one distributed iozone trial on the volume's mount points and parse it.

    A failed, timed-out, stalled or unparsable run is returned, not raised: ``IozoneRun.error`` says why and
    ``IozoneRun.raw`` keeps whatever iozone printed, so it can be stored. The run's work directory on the
    volume is removed in every case, and however the trial ends (its end, the timeout, a lost child, a stall,
    Ctrl-C or SIGTERM of glmodel) no iozone process of it is left on any host.
    """
    clients = [h for h in cluster.clients if h.address in mount_points][: workload.clients or None]
    if not clients:
        raise GlmodelError(f"volume {volume} is not mounted on any client")
    run_dir = f"glmodel-iozone-{uuid.uuid4().hex[:8]}"
    workdirs = [(h.address, f"{mount_points[h.address]}/{run_dir}/{h.name}") for h in clients]
    reap = shlex.join(reap_argv(master_address(clients[0])))
    # One round trip per client: reap children a killed earlier master left (kill -9 skips every cleanup, and
    # they would hang this trial). The first client also makes every client's work directory, through its own
    # mount: when each client made its own, they raced to create the shared run directory on a replicated
    # volume, and the entry self-heal that followed ran during the write pass (writes measured 7% slow).
    first = clients[0]
    dirs = " ".join(shlex.quote(f"{mount_points[first.address]}/{run_dir}/{h.name}") for h in clients)
    executor.run_many([h.address for h in clients], lambda a: shell(
        f"{reap}; mkdir -p {dirs}" if a == first.address else f"{reap} || [ $? -eq 1 ]"), timeout=60)  # 1: none
    notes = [f"# ended a stale iozone left by an earlier trial: {h}" for h in free_master_port()]
    text = client_file(workload.threads, workdirs)
    master_done = False
    try:
        with tempfile.TemporaryDirectory(prefix="glmodel-iozone-") as tmp:
            cf = Path(tmp) / "clients"
            cf.write_text(text)
            wrapper = Path(tmp) / "rsh"
            ended = Path(tmp) / "ended"
            wrapper.write_text(rsh_wrapper(cluster, clients, ended=str(ended)))
            wrapper.chmod(0o700)
            argv = build_argv(workload, str(cf), master_address(clients[0]))
            env = {**os.environ, "RSH": str(wrapper)}
            started = time.monotonic()
            try:
                # Its own process group: the master forks a listener and starts its children's ssh sessions,
                # and only a signal to the whole group reaches them all (a terminal's Ctrl-C no longer does;
                # glmodel stops the group itself).
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                                        cwd=tmp, start_new_session=True, preexec_fn=_die_with_parent)
            except FileNotFoundError:
                raise GlmodelError("iozone is not installed on this machine (the master runs here); "
                                   "run scripts/setup.sh") from None
            try:
                master = master_address(clients[0])
                watch = _watch_master(proc, started, timeout, ended, startup_timeout,
                                      lambda: children_io(executor, clients, master))
            except BaseException:  # Ctrl-C, SIGTERM, or a Python caller's own exception
                stop_group(proc)
                raise
            seconds = time.monotonic() - started
            if watch.failure is not None:
                failure = watch.failure
                if watch.stalled:
                    failure += stall_diagnosis(executor, first.address, mount_points[first.address], watch.stdout)
                return IozoneRun(argv, text, None, "\n".join([*notes, watch.stdout + watch.stderr]), seconds,
                                 failure, watch.host)
            stdout, stderr = watch.stdout, watch.stderr
            master_done = True
    finally:
        _cleanup(executor, clients, mount_points, run_dir, reap=not master_done)
    raw = "\n".join([*notes, stdout]) + (("\n[stderr]\n" + stderr) if stderr.strip() else "")
    if proc.returncode != 0:
        err = CommandFailed("local", shlex.join(argv), proc.returncode, stderr or stdout)
        return IozoneRun(argv, text, None, raw, seconds, str(err))
    try:
        output = parse_throughput(stdout, workload.expected_metrics())
        if output.unit != UNIT:  # the store holds kB/s; a wrapper that added -O must not pass as throughput
            raise ParseError("iozone output", f"figures are in {output.unit}, not {UNIT}")
    except ParseError as exc:
        return IozoneRun(argv, text, None, raw, seconds, str(exc))
    return IozoneRun(argv, text, output, raw, seconds)


CHILD_GRACE_S = 5.0  # after a child's ssh failed, how long the master may still finish on its own


@dataclass(frozen=True)
class Watch:
    """How the master's run ended: ``failure`` is None when it ran to its end."""

    stdout: str
    stderr: str
    failure: str | None = None
    host: str | None = None
    stalled: bool = False


def _watch_master(proc: subprocess.Popen[str], started: float, timeout: float, ended: Path,
                  startup_timeout: float, progress: Callable[[], int]) -> Watch:
    """Wait for the iozone master. It is stopped (its whole process group) at the timeout; when a child's ssh
    failed and the master had not finished ``CHILD_GRACE_S`` later (it would wait for the lost child until the
    timeout); and when its children's I/O (``progress``: bytes they read and wrote, sockets included) did not
    grow over ``startup_timeout`` (iozone's distributed mode stops at "Test running:" when a child cannot
    write, and waits for it without end).

    The children are looked at every half ``startup_timeout`` and never in a trial shorter than that: a look
    every few seconds from the start slowed short O_DIRECT reads."""
    deadline = started + timeout
    failed_at: float | None = None
    step = startup_timeout / 2
    next_look, seen = started + step, [0]  # I/O seen at each look, from 0 at the start
    while True:
        try:
            out, err = proc.communicate(timeout=0.5)  # retrying after TimeoutExpired loses no output
            return Watch(out, err)
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        lost = ended_children(ended.read_text()) if ended.exists() else []
        if lost and failed_at is None:
            failed_at = now
        stalled = False
        if now >= next_look:
            seen.append(progress())
            # Two looks a half-timeout apart without growth (the start counts as a look that saw nothing).
            stalled = len(seen) >= 3 and seen[-1] <= seen[-3]
            next_look = now + step
        if not (now >= deadline or stalled or (failed_at is not None and now - failed_at >= CHILD_GRACE_S)):
            continue
        out, err = stop_group(proc)
        if lost:
            hosts = ", ".join(dict.fromkeys(h for h, _ in lost))
            codes = ", ".join(dict.fromkeys(str(c) for _, c in lost))
            return Watch(out, err, f"iozone's child on {hosts} ended early (ssh exit {codes}): the node dropped, or "
                                   "the child was killed or could not start; the master was stopped", lost[0][0])
        if stalled:
            what = "did no I/O in" if seen[-1] == 0 else "did no more I/O in the last"
            return Watch(out, err, f"iozone's children {what} {startup_timeout:.0f}s ({now - started:.0f}s after "
                                   "it started); stopped", stalled=True)
        return Watch(out, err, f"timed out after {timeout:g}s")


def stop_group(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Stop an iozone master the way it expects: SIGTERM to its process group (its handler tells the children
    to end and the forked listener exits with it), SIGKILL to whatever of the group outlives ``STOP_GRACE_S``.
    Returns what it printed."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass  # the whole group has ended
        try:
            out, err = proc.communicate(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # a listener that ignored SIGTERM while the master ended
        except ProcessLookupError:
            pass
        return out, err
    proc.wait()  # something outside the group holds its pipes (the reap that follows ends remote children)
    return "", ""


def children_io(executor: Executor, clients: list[Host], master: str) -> int:
    """Bytes the iozone children serving ``master`` have read and written so far (rchar + wchar of
    /proc/PID/io, sockets included), summed over the clients; a client that does not answer adds 0."""
    pattern = shlex.quote(reap_argv(master)[-1])
    script = (f"for p in $(pgrep -f {pattern}); do cat /proc/$p/io 2>/dev/null; done | "
              "awk '/^(rchar|wchar):/ {s += $2} END {printf \"%d\\n\", s}'")
    found, _ = executor.map([h.address for h in clients],
                            lambda a: executor.run(a, shell(script), timeout=20, check=False).stdout.strip(),
                            timeout=20)
    return sum(int(v) for v in found.values() if v.isdigit())


def stall_diagnosis(executor: Executor, host: str, mount_point: str, stdout: str) -> str:
    """What a stalled start looked like: iozone's last line and the space left on the volume."""
    before_stop = stdout.split("iozone: interrupted")[0]  # what it printed before the SIGTERM that stopped it
    last = next((line.strip() for line in reversed(before_stop.splitlines()) if line.strip()), "nothing")
    res = executor.run(host, ["df", "-B1", "--output=avail", mount_point], timeout=20, check=False)
    avail = res.stdout.split()[-1] if res.ok and res.stdout.split() else ""
    free = f"{int(avail) / 1e6:.0f} MB free on the volume" if avail.isdigit() else "free space unknown"
    return f" (iozone's last line: {last!r}; {free}: a brick that is full or does not answer stops iozone's start)"


def _die_with_parent() -> None:
    """In the iozone master: get SIGTERM when glmodel dies (even by kill -9), so no orphan keeps writing."""
    import ctypes

    try:
        # SIGTERM, not SIGKILL: iozone's handler then ends its forked listener and its children too.
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1 = PR_SET_PDEATHSIG
    except OSError:
        pass  # not glibc/Linux: an orphaned iozone then runs to its end


def reap_argv(master: str) -> list[str]:
    """pkill for the iozone children (``iozone -+s ... -+c MASTER``) that serve the master at ``master``.

    Started over RSH, they outlive a master that was interrupted or timed out, spin waiting for it, hold
    iozone's fixed ports (so the next trial hangs) and eat CPU that later trials are measured with.
    """
    return ["pkill", "-KILL", "-f", f"iozone -[+]s .*-[+]c {re.escape(master)}( |$)"]


def _cleanup(executor: Executor, clients: list[Host], mount_points: dict[str, str], run_dir: str,
             reap: bool) -> None:
    if reap:  # the master was interrupted or timed out: its children would spin on, waiting for it
        # Best effort: a client that dropped off cannot be reached, and that must not hide the trial's own error.
        executor.map([h.address for h in clients], lambda a: executor.run(
            a, reap_argv(master_address(clients[0])), timeout=30, check=False), timeout=30)
    # One client removes the run's directory for all (it is one shared volume).
    first = clients[0]
    executor.run(first.address, ["rm", "-rf", "--", f"{mount_points[first.address]}/{run_dir}"], timeout=600,
                 check=False)


class IozoneEngine:
    """Distributed iozone (``-+m``) as a trial engine: caches dropped first when asked, one master, a child per
    thread on the clients; each metric is the sum over children with the slowest and fastest child's rate."""

    name = "iozone"

    def run(self, request: TrialRequest) -> EngineResult:
        r = request
        if r.drop_caches:
            drop_caches(r.cluster, r.executor)
        run = run_iozone(r.cluster, r.executor, r.volume, r.workload, dict(r.points), timeout=r.timeout,
                         startup_timeout=r.startup_timeout)
        metrics: dict[str, float] = {}
        measurements: list[Measurement] = []
        if run.output is not None:
            for name, m in run.output.metrics.items():
                measurements.append((name, m.children_kbps, run.output.unit, m.min_kbps, m.max_kbps))
                metrics[name] = m.children_kbps
        return EngineResult(metrics=metrics, measurements=measurements,
                            raw={"iozone": run.raw, "client_file": run.client_file}, argv=run.argv,
                            seconds=run.seconds, error=run.error, host=run.host)

    def after_run(self, request: TrialRequest) -> None:
        pass  # each trial removes its own work directory

"""fio as a trial engine, the pure half: each client's job file for a workload, the ``--client`` argv, and the
parser of fio's JSON into per-metric figures. The side effects (servers, the runs, the passes glmodel times) are in
``bench.fio_trial``.

A client's job file holds one section per thread and metric, named ``<metric>.<thread>``; every metric's first
section starts a group (``stonewall`` + ``new_group``), so with ``group_reporting`` fio reports one entry per
metric and client, and the metrics run one after the other, as iozone's tests do. Large-file metrics reuse one
file per thread (``big.<thread>``), or the workload's ``large_files`` files (``big.<thread>.<n>``) sharing the
thread's ``file_size``: the read finds what the write wrote. Small-file metrics work over ``files``
files per thread in ``files.<thread>/`` (fio's server puts the name its client reached it by before each name,
``10.0.0.5.files.0``, and makes the directories): ``file_create`` opens (creates), writes and closes each,
``file_delete`` unlinks each (filedelete).

fio lays out the files a job reads or overwrites before it times the job, each client on its own: on the lab,
iops_spread_500's clients laid out their 8 KiB random files at different speeds and then ran their timed jobs
partly or wholly apart, each alone at the bricks' full rate, so the sum of their rates read up to twice what the
bricks gave both at once (random writes at 1,021-1,062 IOPS in some trials, 520-582 in others, on bricks of 500).
So a trial whose first large-file metric is not a write lays its files out first, in a fio run of its own with
``create_only`` (``layout_metrics``), and every client starts the timed jobs together, as iozone's children wait
at a barrier.

Three small-file tests are timed by glmodel between fio's runs, not by fio: ``file_list`` (``ls -l`` of each
client's directories), ``file_stat`` and ``file_read``. A stat or a small read fio times is a draw between the
clients' caches and the round trips: fio stats every file of a job while setting it up, just before it times the
job, and a file looked up less than a second before is answered by the kernel's FUSE attributes or md-cache without
a round trip, its content by quick-read (Gluster's defaults: ``performance.md-cache-timeout`` 1 s, the mount's
attribute and entry timeouts 1 s). On the lab at 1 ms of delay (two clients of two threads), fio's stats ran at
54,000-92,000 a second where the creates took 1.5 s, at 3,900 where they took 1.9 s; stat'ed by name 2.5 s after the
creates, 1,190. fio's reads of 8 KiB files ran at 2,090 a second in one trial and 1,090 in the next; read by name
2.5 s after, 1,130-1,180. glmodel waits ``COLD_WAIT_S`` past those timeouts and then stats or reads each thread's
files by name, one process a thread, without listing them (a listing's readdirp would fill md-cache): each file pays
its lookup. A volume tuned to cache longer (md-cache-timeout 600 with cache invalidation) still answers from its
cache, as it would its users.
"""

from __future__ import annotations

import ipaddress
import math
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import ParseError
from ..units import parse_size
from .fio import errno_name, side_bytes_per_s, side_completion_us
from .jsonout import figure, find_json_object
from .metrics import FILE_TESTS, RETESTS, TEST_METRICS, UNITS
from .workload import Workload

PORT = 8765  # fio's own default server port
# fio's job per metric: rw mode, or an engine that does one file operation per file
_JOB: dict[str, dict[str, str]] = {
    "write": {"rw": "write"}, "read": {"rw": "read"},
    "random_read": {"rw": "randread"}, "random_write": {"rw": "randwrite"},
    "file_create": {"rw": "write", "create_on_open": "1"}, "file_delete": {"ioengine": "filedelete"},
}
# which side of fio's report a metric's figures are in (filedelete counts as a read)
_SIDE = {"write": "write", "random_write": "write", "file_create": "write"}
PERCENTILES = {"p50": "50.000000", "p99": "99.000000"}
# what a shared read reads from the one file every client shares (the writes stay each thread's own)
SHARED_METRICS = frozenset({"read", "random_read"})


# the tests glmodel times between fio's runs: (the name its per-client figures are kept as, the name the fio run
# after it is kept as)
TIMED: dict[str, tuple[str, str]] = {"file_stat": ("file_stats", "fio_after_stat"),
                                     "file_list": ("listing", "fio_after_listing"),
                                     "file_read": ("file_reads", "fio_after_read")}
# Gluster's md-cache-timeout and the FUSE mount's attribute and entry timeouts are 1 s by default: a stat this long
# after the last operation on a file pays its round trips
COLD_WAIT_S = 2.5


def fio_metrics(workload: Workload) -> list[str]:
    """The metrics fio measures for a workload, in the order they run (no re-tests: fio has none; the tests in
    ``TIMED`` are timed by glmodel between fio's runs)."""
    return [m for t in workload.tests for m in TEST_METRICS[t] if m not in RETESTS and t not in TIMED]


def fio_runs(workload: Workload) -> list[tuple[str, list[str]]]:
    """The fio runs of one trial in order, each named as its raw output is kept, with the metrics it measures:
    ``fio``; ``fio_shared_read`` from the first shared read on (fio's servers do not wait for one another, so a
    reader must not start before every client's write has ended: its fio would lay out the file still being
    written); after each test glmodel times (``TIMED``), the run named for it (present even with nothing to run:
    the timed test comes before it)."""
    runs: list[tuple[str, list[str]]] = [("fio", [])]
    for test in workload.tests:
        if test in TIMED:
            runs.append((TIMED[test][1], []))
            continue
        for metric in TEST_METRICS[test]:
            if metric in RETESTS:
                continue
            if workload.shared_read and metric in SHARED_METRICS and runs[-1][0] == "fio":
                runs.append(("fio_shared_read", []))
            runs[-1][1].append(metric)
    return runs


def layout_metrics(workload: Workload) -> list[str]:
    """The metric whose files a layout run makes before the timed runs: the trial's first large-file metric when
    it is not a write (a read, a random read or write needs its files laid out; a write makes them as it is timed,
    and every later metric finds them)."""
    large = [m for _, metrics in fio_runs(workload) for m in metrics if m not in FILE_TESTS]
    if not large or large[0] == "write":
        return []
    return [large[0]]


def timed_before(run: str) -> str | None:
    """The test glmodel times just before a fio run of this name, if any."""
    return next((t for t, (_, name) in TIMED.items() if name == run), None)


def job_file(workload: Workload, directory: str, threads: int, metrics: Sequence[str],
             shared_directory: str | None = None, layout: bool = False) -> str:
    """The job file one client's fio server runs: ``threads`` sections per metric in ``directory``. With the
    workload's ``shared_read``, the read metrics of every section read ``shared_directory/big.0`` (the first
    client's first file) instead of their own, and no name is prefixed with the client's (so that path is
    known). With ``layout``, fio only lays out the jobs' files (``create_only``) and times nothing."""
    size, record = parse_size(workload.file_size), parse_size(workload.record_size)
    lines = ["[global]", "ioengine=psync", f"directory={directory}", "group_reporting=1", "fallocate=none",
             "invalidate=1", "percentile_list=50:99", *(["create_only=1"] if layout else [])]
    if workload.shared_read:
        if shared_directory is None:
            raise ValueError("a shared read needs the directory of the file every client reads")
        lines.append("unique_filename=0")  # names as written here, not prefixed with the fio client's address
    if workload.sync == "odirect":
        lines.append("direct=1")
    elif workload.sync == "osync":
        lines.append("sync=1")
    for metric in metrics:
        small = metric in FILE_TESTS
        for k in range(threads):
            lines += ["", f"[{metric}.{k}]"]
            if k == 0:
                lines += ["stonewall", "new_group"]
            lines += [f"{key}={value}" for key, value in _JOB[metric].items()]
            if small:
                lines += [f"filename_format=files.{k}/f.$filenum", f"nrfiles={workload.files}",
                          f"filesize={size}", f"size={size * workload.files}", f"bs={min(record, size)}",
                          "openfiles=1", "file_service_type=sequential"]
            elif workload.shared_read and metric in SHARED_METRICS:
                lines += [f"directory={shared_directory}", "filename=big.0", f"size={size}", f"bs={record}"]
            elif workload.large_files > 1:
                # fio splits size over nrfiles; a random record goes to a file drawn at random, so each brick's
                # share of a thread's records follows its share of the thread's files
                service = "random" if metric.startswith("random") else "sequential"
                lines += [f"filename_format=big.{k}.$filenum", f"nrfiles={workload.large_files}", f"size={size}",
                          f"bs={record}", f"file_service_type={service}"]
            else:
                lines += [f"filename=big.{k}", f"size={size}", f"bs={record}"]
            if not small and metric == "write" and workload.include_flush:
                lines.append("end_fsync=1")  # as iozone -e: the flush to stable storage is timed
    return "\n".join(lines) + "\n"


def server_address(address: str, port: int = PORT) -> str:
    """fio's server/client address form: ``ip:A,port`` for IPv4, ``ip6:A,port`` for IPv6, a name as is."""
    try:
        kind = "ip6" if ipaddress.ip_address(address).version == 6 else "ip"
    except ValueError:
        return f"{address},{port}"
    return f"{kind}:{address},{port}"


def client_argv(job_files: Mapping[str, str], port: int = PORT, fio: str = "fio") -> list[str]:
    """The one local fio that drives every client's server: ``--client=<server> <job file>`` per client."""
    argv = [fio, "--output-format=json"]
    for address, path in job_files.items():
        argv += [f"--client={server_address(address, port)}", path]
    return argv


@dataclass
class ClientFigure:
    """One metric on one client: its rate (kB/s or files/s), IOPS and completion-latency percentiles (us)."""

    rate: float
    iops: float
    latency_us: dict[str, float] = field(default_factory=dict)


@dataclass
class FioFigures:
    """Per metric, per client address: what fio measured."""

    by_metric: dict[str, dict[str, ClientFigure]]

    def totals(self) -> dict[str, float]:
        """Each metric summed over the clients (as iozone sums its children)."""
        return {m: sum(c.rate for c in per.values()) for m, per in self.by_metric.items()}

    def measurements(self) -> list[tuple[str, float, str, float | None, float | None]]:
        """Per metric its total with the slowest and fastest client's rate; its IOPS (sum over clients); its
        latency percentiles as the worst client's (with the best and worst)."""
        out: list[tuple[str, float, str, float | None, float | None]] = []
        for m, per in self.by_metric.items():
            rates = [c.rate for c in per.values()]
            out.append((m, sum(rates), UNITS[m], min(rates), max(rates)))
            out.append((f"{m}.iops", sum(c.iops for c in per.values()), "op/s", None, None))
            for name in PERCENTILES:
                lat = [c.latency_us[name] for c in per.values() if name in c.latency_us]
                if lat:
                    out.append((f"{m}.{name}_us", max(lat), "us", min(lat), max(lat)))
        return out


def parse_client_json(text: str, metrics: Sequence[str], clients: Sequence[str], file_size: int) -> FioFigures:
    """Per metric and client from ``fio --client ... --output-format=json``: every client must report every
    metric; a job fio marks as failed is a ParseError naming its client, metric and errno."""
    data = find_json_object(text, "fio client output")
    entries = data.get("client_stats")
    if not isinstance(entries, list):
        raise ParseError("fio client output", "no 'client_stats' list")
    out: dict[str, dict[str, ClientFigure]] = {m: {} for m in metrics}
    for e in entries:
        if not isinstance(e, dict):
            continue
        name, host = str(e.get("jobname", "")), str(e.get("hostname", ""))
        metric = name.rsplit(".", 1)[0]
        if metric not in out:
            continue  # "All clients": fio's merge over every group, not one metric's
        if e.get("error"):
            raise ParseError("fio client output", f"{metric} failed with error {e['error']} "
                             f"({errno_name(e['error'])})", host)
        try:
            side = e[_SIDE.get(metric, "read")]
            bps = side_bytes_per_s(side)  # fio 3's bw_bytes, or fio 2.x's bw in KiB/s
            iops = figure(side["iops"])
            pct = side_completion_us(side)[1]
        except (KeyError, TypeError, ValueError):
            raise ParseError("fio client output", f"{metric} lacks bw_bytes (or bw), iops or a completion "
                             "latency as a measured figure", host) from None
        if bps <= 0:
            raise ParseError("fio client output", f"{metric} moved nothing (bw {bps:g})", host)
        rate = bps / file_size if metric in FILE_TESTS else bps / 1024
        lat = {k: pct[v] for k, v in PERCENTILES.items() if v in pct}
        out[metric][host] = ClientFigure(rate, iops, lat)
    for metric, per in out.items():
        missing = [c for c in clients if c not in per]
        if missing:
            raise ParseError("fio client output", f"no {metric} figure from {', '.join(missing)}")
    return FioFigures(out)


def check_layout(text: str, metrics: Sequence[str], clients: Sequence[str]) -> None:
    """A layout run's JSON (``create_only``: nothing timed): every client must report each metric's jobs (fio
    drops a job it cannot set up and says so only on its stderr), and a job fio marks as failed is a ParseError
    naming its client and errno."""
    data = find_json_object(text, "fio layout output")
    seen: set[tuple[str, str]] = set()
    for e in data.get("client_stats") or []:
        if not isinstance(e, dict):
            continue
        name, host = str(e.get("jobname", "")), str(e.get("hostname", ""))
        if e.get("error"):
            raise ParseError("fio layout output", f"laying out {name} failed with error {e['error']} "
                             f"({errno_name(e['error'])})", host or None)
        seen.add((name.rsplit(".", 1)[0], host))
    for metric in metrics:
        missing = [c for c in clients if (metric, c) not in seen]
        if missing:
            raise ParseError("fio layout output", f"no layout of {metric}'s files", missing[0])


def listing_script(directory: str, threads: int) -> str:
    """Time ``ls -l`` (readdir and a stat per entry, what md-cache and readdir-ahead serve) over a client's
    small-file directories (fio's server puts its client's name before a file name: ``<name>.files.<k>``); prints
    ``GLMTIMED <files listed> <nanoseconds>``."""
    d = shlex.quote(directory)
    dirs = " ".join(f"{d}/*files.{k}" for k in range(threads))
    return (f"export LC_ALL=C; s=$(date +%s%N); n=$(ls -lU -- {dirs} | grep -c '^-'); e=$(date +%s%N); "
            "echo \"GLMTIMED $n $((e - s))\"")


def cold_script(directory: str, threads: int, files: int, file_size: int, test: str = "file_stat",
                wait_s: float = COLD_WAIT_S) -> str:
    """Wait ``wait_s`` (past the clients' attribute caches), then time a stat (``file_stat``) or a whole read
    (``file_read``) of every small file of a client, one process a thread, each over its own directory's files by
    name in the order fio made them (``f.0`` ...), never listing them; prints ``GLMTIMED <files reached>
    <nanoseconds>`` (a read counts the bytes read in whole files). A file that is not there is not counted."""
    d = shlex.quote(directory)
    last = int(files) - 1
    if test == "file_stat":
        verb, count = "xargs stat -c .", "grep -c '^[.]$'"
    elif test == "file_read":
        verb, count = "xargs cat", f"wc -c | awk '{{print int($1 / {int(file_size)})}}'"
    else:
        raise ValueError(f"{test}: glmodel times a stat or a read past the caches, not {test}")
    each = " ".join(f"(cd {d}/*files.{k} && seq -f 'f.%.0f' 0 {last} | {verb} 2>/dev/null) &" for k in range(threads))
    return (f"export LC_ALL=C; sleep {wait_s:g}; s=$(date +%s%N); n=$( ( {each} wait ) | {count}); "
            "e=$(date +%s%N); echo \"GLMTIMED $n $((e - s))\"")


def parse_timed(text: str, host: str, expected: int, what: str) -> float:
    """Files per second of one client's timed pass (a listing, the stats or the reads); ParseError naming the host
    when it reached fewer files than were created."""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "GLMTIMED" and parts[1].isdecimal() and parts[2].isdecimal():
            n, ns = int(parts[1]), int(parts[2])
            if n < expected:
                raise ParseError(what, f"reached {n} of the {expected} files created", host)
            return n / (ns / 1e9) if ns > 0 else math.inf
    raise ParseError(what, f"no GLMTIMED line in {text.strip()[:120]!r}", host)

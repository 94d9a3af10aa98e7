"""How Gluster moves bytes, as the models see it: the stages a byte crosses (client links, server links, brick
disks), what each can carry given the measured link and disk figures, the copies a write sends, and how many of
the servers files placed by hash reach. Pure functions of a frame's columns (numpy only)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .columns import Columns, n_rows, numbers

if TYPE_CHECKING:
    import numpy as np

WRITE_METRICS = frozenset({"write", "rewrite", "random_write"})
STAGES = ("client links", "server links", "server disks")


def write_amplification(frame: Columns) -> np.ndarray:
    """Bytes sent to servers per byte written: replica copies, or disperse/(disperse-redundancy)."""
    import numpy as np

    amp = numbers(frame, "replica") if "replica" in frame else np.ones(n_rows(frame))
    if "disperse" in frame and "redundancy" in frame:
        d = numbers(frame, "disperse")
        r = numbers(frame, "redundancy")
        amp = np.where(d > 0, d / np.where(d - r > 0, d - r, 1), amp)
    return amp


def bottleneck_mbps(frame: Columns, metric: str) -> np.ndarray:
    """The slowest stage a byte crosses, in MB/s: client links, server links, or server disks.

    Writes: client links carry every copy (÷ amplification), disks store every copy; reads come from one copy.
    NaN where a measured network or disk figure is missing.
    """
    import numpy as np

    out: np.ndarray = np.min(stages(frame, metric), axis=0)
    return out


def placement_loss(files: int, bins: int) -> float:
    """How many times fewer than ``bins`` bins a stage can use when ``files`` files are placed on them by hash:
    bins / E[occupied bins], with E[occupied] = bins · (1 − (1 − 1/bins)^files) for uniform independent placement
    (Kolchin, Sevast'yanov and Chistyakov 1978, ch. 1).

    Why occupied bins and not the busiest one: iozone's throughput is "Children see", the sum of each child's
    own rate. Children whose files share a bin share its speed and together get all of it, so a bin counts once
    if it holds any file, however many. Four files over four subvolumes occupy 2.73 of them on average: the
    volume moves data at 2.73 subvolumes' speed (the busiest one, 2.1 files, would wait 1.9 subvolumes' worth).

    References
    ----------
    Kolchin, V. F., Sevast'yanov, B. A., Chistyakov, V. P. (1978), *Random Allocations*, Winston & Sons.
    """
    f, b = max(int(files), 1), max(int(bins), 1)
    return 1.0 / (1 - (1 - 1 / b) ** f)


def _set_shape(frame: Columns) -> tuple[np.ndarray, np.ndarray]:
    """Bricks in one replica or disperse set of each row's volume, and whether the volume is dispersed."""
    import numpy as np

    n = n_rows(frame)
    per_set = numbers(frame, "replica") if "replica" in frame else np.ones(n)
    dispersed = numbers(frame, "disperse") > 0 if "disperse" in frame else np.zeros(n, dtype=bool)
    if "disperse" in frame:
        per_set = np.where(dispersed, numbers(frame, "disperse"), per_set)
    return np.maximum(per_set, 1), dispersed


def subvolumes(frame: Columns) -> np.ndarray:
    """Distribute subvolumes of each row's volume: servers (one brick each) over the bricks of one set."""
    import numpy as np

    per_set, _ = _set_shape(frame)
    out: np.ndarray = np.maximum(np.floor(numbers(frame, "servers") / per_set), 1)
    return out


# cluster.read-hash-mode: 0 reads every file from the first up brick of its set; 1 (the default) and 2 pick a
# brick by a hash of the file's GFID (2: and of the client's pid), fixed for the file; 3, 4 and 5 pick the
# brick with the fewest outstanding requests (4, 5: weighted by latency) at each read, so load, not a hash,
# decides where a file is read from (GlusterFS 10, afr's option table).
FIRST_BRICK_MODES = frozenset({0.0})
BALANCED_MODES = frozenset({3.0, 4.0, 5.0})
DEFAULT_READ_HASH_MODE = 1.0


def read_modes(frame: Columns) -> np.ndarray:
    """Each row's cluster.read-hash-mode as a number (the default, 1, where the frame does not say)."""
    import numpy as np

    if "read_hash_mode" not in frame:
        return np.full(n_rows(frame), DEFAULT_READ_HASH_MODE)
    out: np.ndarray = np.nan_to_num(numbers(frame, "read_hash_mode"), nan=DEFAULT_READ_HASH_MODE)
    return out


def read_bins(frame: Columns) -> np.ndarray:
    """The bins a read's files are placed on, by hash: with Gluster's default read policy
    (``cluster.read-hash-mode`` 1, or 2) a replicated file is read from one brick of its set chosen by a hash
    of its GFID, so files spread over every brick of every set; read by load (3-5) or from the first brick
    (0), a file's set is what the hash chooses, so over subvolumes; a dispersed file needs its data bricks
    together, so over subvolumes."""
    import numpy as np

    per_set, dispersed = _set_shape(frame)
    hashed = ~np.isin(read_modes(frame), list(FIRST_BRICK_MODES | BALANCED_MODES))
    out: np.ndarray = subvolumes(frame) * np.where(dispersed | ~hashed, 1, per_set)
    return out


def read_servers_idle(frame: Columns) -> np.ndarray:
    """Per row, how many times fewer servers serve reads than the sets the files are on hold: the set's size
    for a replicated volume read from the first brick only (read-hash-mode 0), else 1."""
    import numpy as np

    per_set, dispersed = _set_shape(frame)
    first = np.isin(read_modes(frame), list(FIRST_BRICK_MODES)) & ~dispersed
    out: np.ndarray = np.where(first, per_set, 1.0)
    return out


def stages(frame: Columns, metric: str) -> np.ndarray:
    """What each stage a byte crosses can carry, MB/s: rows ``STAGES`` × frame rows (see ``bottleneck_mbps``).

    Writes send every copy over the client links and into the servers' links and disks (÷ amplification);
    reads take one copy. Files are placed by hash, so with few files some servers hold none and carry nothing:
    server links and disks are divided by ``placement_loss`` of the row's files (``threads``) over the bins
    they land in (subvolumes for a write, ``read_bins`` for a read; read from the first brick only, a set's
    other bricks serve nothing: ``read_servers_idle``).
    """
    import numpy as np

    n = n_rows(frame)
    write = metric in WRITE_METRICS
    net = numbers(frame, "network_gbps") * 1000 / 8 if "network_gbps" in frame else np.full(n, np.nan)
    disk_col = "disk_write_mbps" if write else "disk_read_mbps"
    disk = numbers(frame, disk_col) if disk_col in frame else np.full(n, np.nan)
    servers = numbers(frame, "servers")
    clients = numbers(frame, "clients")
    amp = write_amplification(frame) if write else np.ones(n)
    loss = spread_loss(frame, metric)
    return np.vstack([net * clients / amp, net * servers / amp / loss, disk * servers / amp / loss])


def spread_loss(frame: Columns, metric: str) -> np.ndarray:
    """``placement_loss`` of each row's files (``threads``) over the bins they are placed on (1 without a
    thread count), for a read times the servers the read policy leaves idle."""
    import numpy as np

    write = metric in WRITE_METRICS
    if "threads" not in frame:
        return np.ones(n_rows(frame)) if write else read_servers_idle(frame)
    bins = subvolumes(frame) if write else read_bins(frame)
    # Sobol' sampling asks for tens of thousands of rows with a handful of distinct (files, bins) pairs.
    pairs = np.column_stack([numbers(frame, "threads"), bins])
    uniq, where = np.unique(pairs, axis=0, return_inverse=True)
    values = np.array([placement_loss(int(f), int(b)) if f == f else 1.0 for f, b in uniq])
    out: np.ndarray = values[np.ravel(where)]
    return out if write else out * read_servers_idle(frame)


# -- stages beyond bytes: CPU and round trips -------------------------------------------------------------------

# Stages an operation crosses besides the bytes' (``STAGES``): the CPU of the clients (the FUSE process, which
# also sends a write's every copy) and of the servers (the brick processes), and the round trips an operation
# waits for. Their capacities have no natural unit (a CPU score, threads over a round trip); each stage's
# fitted efficiency carries the unit (work per CPU-second, round trips per operation).
OP_STAGES = ("client CPU", "server CPU", "round trips")
ALL_STAGES = STAGES + OP_STAGES
# Metrics that count operations, not bytes (stored in files/s), and how many bytes one of them moves: a create
# or a read moves its file, a stat, a listing or a delete none (so no link or disk stage limits it).
OP_METRICS = frozenset({"file_create", "file_stat", "file_list", "file_read", "file_delete"})
PAYLOAD_OP_METRICS = frozenset({"file_create", "file_read"})
# The inputs each optional stage reads; a stage whose input a frame lacks is not there.
OP_STAGE_INPUTS: dict[str, str] = {"client CPU": "cpu_score", "server CPU": "cpu_score",
                                   "round trips": "network_rtt_ms"}


def byte_metric(metric: str) -> str:
    """The throughput an operation of ``metric`` moves its bytes as: a create writes its file's copies, a
    small-file read reads one copy, as a write and a read do; any other metric is its own."""
    return {"file_create": "write", "file_read": "read"}.get(metric, metric)


def has_payload(metric: str) -> bool:
    """Whether one operation of ``metric`` moves data over links and disks (else only CPU and round trips)."""
    return metric not in OP_METRICS or metric in PAYLOAD_OP_METRICS


def bytes_per_op(frame: Columns, metric: str) -> np.ndarray:
    """MB one operation of ``metric`` moves: for a byte metric (MB/s) 1, so capacities stay in MB/s; for a
    small-file rate the file's size (``file_size``, in bytes in the frame)."""
    import numpy as np

    if metric not in OP_METRICS:
        return np.ones(n_rows(frame))
    if "file_size" not in frame:
        return np.full(n_rows(frame), np.nan)
    out: np.ndarray = numbers(frame, "file_size") / (1 << 20)
    return out


@dataclass(frozen=True)
class RoundTrip:
    """How an operation spends its time besides its round trips: ``service_s`` seconds of service, of which the
    share ``queued`` waits in a queue the operations of one client share (its FUSE process) and the rest runs
    beside the others'. ``queued`` 0 is the asymptotic bound of a closed system (every thread alone)."""

    service_s: float = 0.0
    queued: float = 0.0


def closed_throughput(customers: np.ndarray, think_s: np.ndarray, demand_s: float) -> np.ndarray:
    """Operations a second of a closed network of ``customers`` (integers, per row) cycling through a delay of
    ``think_s`` seconds and one queue of ``demand_s`` seconds a visit (``mean_value_analysis`` with one queue).
    With no demand, customers / think time.

    References
    ----------
    Lazowska, E. D., Zahorjan, J., Graham, G. S., Sevcik, K. C. (1984), *Quantitative System Performance*,
    Prentice-Hall, ch. 6.
    """
    import numpy as np

    n = np.asarray(customers, dtype=float)
    z = np.asarray(think_s, dtype=float)
    if demand_s <= 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            out: np.ndarray = n / z
        return out
    finite = np.isfinite(n)
    x = mean_value_analysis(np.full((1, len(n)), demand_s), np.where(finite, n, 0.0), z)
    return np.where(finite, x, np.nan)


def mean_value_analysis(demand: np.ndarray, customers: np.ndarray, think_s: np.ndarray | float = 0.0) -> np.ndarray:
    """Throughput per row of a closed network: ``customers`` (whole numbers ≥ 0, per row) cycling through a delay
    of ``think_s`` and the queues whose demands per visit are the rows of ``demand`` (queues × rows). Exact
    mean-value analysis: R_i(k) = D_i (1 + Q_i(k - 1)), X(k) = k / (Z + Σ R_i(k)), Q_i(k) = X(k) R_i(k); a row
    with no customers gets 0. The one recursion ``closed_throughput`` and ``joint_log_rate`` share.

    References
    ----------
    Reiser, M., Lavenberg, S. S. (1980), "Mean-value analysis of closed multichain queuing networks", *J. ACM*
    27(2), 313–322.
    """
    import numpy as np

    z = np.broadcast_to(np.asarray(think_s, dtype=float), customers.shape)
    queue = np.zeros_like(demand, dtype=float)
    x = np.zeros(demand.shape[1])
    for k in range(1, int(np.max(customers, initial=0.0)) + 1):
        active = customers >= k
        resid = demand * (1 + queue)
        with np.errstate(divide="ignore", invalid="ignore"):
            xk = k / (z + resid.sum(axis=0))
        x = np.where(active, xk, x)
        queue = np.where(active[None, :], xk[None, :] * resid, queue)
    return x


def joint_log_rate(log_limits: np.ndarray, customers: np.ndarray) -> np.ndarray:
    """ln of what ``customers`` threads get through stages that each hold them back (rows of ``log_limits``: ln
    of what each lets through alone, stages × rows; +inf: a stage that takes no time), each stage one queue of a
    closed network whose demand per unit of work is 1/limit: exact mean-value analysis per row (Reiser and
    Lavenberg 1980; ``mean_value_analysis`` with no delay). Never above the least limit (the
    asymptotic bound, reached as the customers grow); with two equal stages and four customers 4/5 of it.
    Computed on demands scaled by each row's least limit, so that a rate in kB/s or in files/s alike stays in
    range. ``customers`` below 1 or not finite count as 1."""
    import numpy as np

    lead = np.min(log_limits, axis=0)
    with np.errstate(over="ignore", invalid="ignore"):
        demand = np.where(np.isfinite(log_limits), np.exp(-(log_limits - lead[None, :])), 0.0)
    n = np.maximum(np.nan_to_num(np.asarray(customers, dtype=float), nan=1.0, posinf=1.0), 1.0).round()
    out: np.ndarray = np.log(mean_value_analysis(demand, n)) + lead
    return out


def round_trip_rate(threads: np.ndarray, clients: np.ndarray, rtt_s: np.ndarray, trip: RoundTrip) -> np.ndarray:
    """Operations a second ``threads`` threads spread over ``clients`` clients complete when each operation waits
    one round trip (``rtt_s``) and ``trip``'s service: each client a closed network of its threads (the round
    trip and the unqueued service a delay, the queued service a queue of the client's own;
    ``closed_throughput``), the clients summed (threads mod clients of them run one thread more). Scaling every
    time by n scales the rate by 1/n, so an operation of n round trips is this over n: the stage's efficiency."""
    import numpy as np

    think = rtt_s + trip.service_s * (1 - trip.queued)
    demand = trip.service_s * trip.queued
    if demand <= 0:
        with np.errstate(divide="ignore", invalid="ignore"):
            out: np.ndarray = threads / think
        return out
    c = np.maximum(np.nan_to_num(clients, nan=1.0), 1.0)
    t = np.nan_to_num(threads, nan=0.0)
    low = np.floor(t / c)
    more = t - low * c  # clients with one thread more
    rate = (c - more) * closed_throughput(low, think, demand) + more * closed_throughput(low + 1, think, demand)
    return np.where(np.isfinite(threads) & np.isfinite(clients), rate, np.nan)


def op_stages(frame: Columns, metric: str, trip: RoundTrip = RoundTrip()) -> np.ndarray:
    """What the CPU and round-trip stages let through, in the metric's unit up to a factor each stage's
    efficiency carries: rows ``OP_STAGES`` × frame rows; NaN where the frame lacks the stage's input.

    Client CPU: the slowest host's CPU score times the clients, over a write's copies (the FUSE client sends
    each). Server CPU: the score times the servers, over the copies and the placement loss (as the disks).
    Round trips: ``threads`` operations in flight, each waiting ``n`` round trips plus a service time (``trip``,
    fitted): where none of it queues, at most threads / (rtt + service) per ``n`` — the asymptotic bound of a
    closed system of ``threads`` customers (Lazowska et al. 1984, ch. 5) — else each client's threads as a
    closed network with a queue of its own (``round_trip_rate``); times the bytes an operation moves for a
    byte metric (its record). For a byte metric the CPU stages are per MB, for a small-file rate per file.
    """
    import numpy as np

    n = n_rows(frame)
    amp = write_amplification(frame) if byte_metric(metric) in WRITE_METRICS else np.ones(n)
    cpu = numbers(frame, "cpu_score") if "cpu_score" in frame else np.full(n, np.nan)
    loss = spread_loss(frame, metric) if metric not in OP_METRICS else np.ones(n)
    clients = numbers(frame, "clients") if "clients" in frame else np.ones(n)
    client_cpu = cpu * clients / amp
    server_cpu = cpu * numbers(frame, "servers") / amp / loss
    rtt = numbers(frame, "network_rtt_ms") / 1000 if "network_rtt_ms" in frame else np.full(n, np.nan)
    inflight = numbers(frame, "threads") if "threads" in frame else np.ones(n)
    if metric in OP_METRICS:
        per_op = np.ones(n)
    else:
        per_op = numbers(frame, "record_size") / (1 << 20) if "record_size" in frame else np.full(n, np.nan)
    trips = round_trip_rate(inflight, clients, rtt, trip) * per_op
    return np.vstack([client_cpu, server_cpu, trips])


# The disk figure that bounds an operation of small random records, where the baselines measured it.
DISK_IOPS = {"random_read": "disk_randread_iops", "file_read": "disk_randread_iops",
             "random_write": "disk_randwrite_iops", "file_create": "disk_randwrite_iops"}


def disk_ops(frame: Columns, metric: str) -> np.ndarray:
    """What the brick disks carry of ``metric`` counted in random operations (in the metric's unit: MB/s for
    random I/O, its record an operation; files/s for small files, a file an operation): the measured random IOPS
    times the servers, over a write's copies and the placement loss; +inf where it was not measured (the
    sequential figure alone bounds the disks then)."""
    import numpy as np

    col = DISK_IOPS.get(metric)
    n = n_rows(frame)
    if col is None or col not in frame:
        return np.full(n, np.inf)
    as_bytes = byte_metric(metric)
    amp = write_amplification(frame) if as_bytes in WRITE_METRICS else np.ones(n)
    ops = numbers(frame, col) * numbers(frame, "servers") / amp / spread_loss(frame, as_bytes)
    if metric not in OP_METRICS:
        ops = ops * (numbers(frame, "record_size") / (1 << 20) if "record_size" in frame else np.nan)
    out: np.ndarray = np.where(np.isfinite(ops) & (ops > 0), ops, np.inf)
    return out


def model_stages(frame: Columns, metric: str, trip: RoundTrip = RoundTrip()) -> np.ndarray:
    """Every stage's capacity in the metric's unit (rows ``ALL_STAGES``): the byte stages (``stages``) per
    operation's bytes (infinite where an operation moves none), then ``op_stages``."""
    import numpy as np

    n = n_rows(frame)
    if has_payload(metric):
        with np.errstate(divide="ignore", invalid="ignore"):
            byte = stages(frame, byte_metric(metric)) / bytes_per_op(frame, metric)[None, :]
            byte[2] = np.fmin(byte[2], disk_ops(frame, metric))
    else:
        byte = np.full((len(STAGES), n), np.inf)
    return np.vstack([byte, op_stages(frame, metric, trip)])

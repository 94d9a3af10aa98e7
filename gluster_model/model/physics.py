"""How Gluster moves bytes, as the models see it: the stages a byte crosses (client links, server links, brick
disks), what each can carry given the measured link and disk figures, the copies a write sends, and how many of
the servers files placed by hash reach. Pure functions of a frame's columns (numpy only)."""

from __future__ import annotations

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


def read_bins(frame: Columns) -> np.ndarray:
    """The bricks a read can be served from, file by file: with Gluster's default read policy
    (``cluster.read-hash-mode 1``) a replicated file is read from one brick of its set chosen by a hash of its
    GFID, so files spread over every brick of every set; a dispersed file needs its data bricks together, so
    over subvolumes."""
    import numpy as np

    per_set, dispersed = _set_shape(frame)
    out: np.ndarray = subvolumes(frame) * np.where(dispersed, 1, per_set)
    return out


def stages(frame: Columns, metric: str) -> np.ndarray:
    """What each stage a byte crosses can carry, MB/s: rows ``STAGES`` × frame rows (see ``bottleneck_mbps``).

    Writes send every copy over the client links and into the servers' links and disks (÷ amplification);
    reads take one copy. Files are placed by hash, so with few files some servers hold none and carry nothing:
    server links and disks are divided by ``placement_loss`` of the row's files (``threads``) over the bins
    they land in (subvolumes for a write, ``read_bins`` for a read).
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
    thread count)."""
    import numpy as np

    if "threads" not in frame:
        return np.ones(n_rows(frame))
    bins = subvolumes(frame) if metric in WRITE_METRICS else read_bins(frame)
    # Sobol' sampling asks for tens of thousands of rows with a handful of distinct (files, bins) pairs.
    pairs = np.column_stack([numbers(frame, "threads"), bins])
    uniq, where = np.unique(pairs, axis=0, return_inverse=True)
    values = np.array([placement_loss(int(f), int(b)) if f == f else 1.0 for f, b in uniq])
    out: np.ndarray = values[np.ravel(where)]
    return out

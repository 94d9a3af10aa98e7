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

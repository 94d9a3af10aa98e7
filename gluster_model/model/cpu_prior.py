"""The client CPU stage's calibrated cost: what the bottleneck model takes for the clients' CPU where no two
settings measured make it bind.

Data measured at or below today know such a stage from below only (it let every run through), yet an upgrade of
the links or disks runs into it (the IOPS proof's NVMe-class writes: +268% with no stage beyond the disks). It
takes the lab's calibrated cost of an operation instead, in seconds of a CPU-score unit (one MB/s of the score's
SHA-256): ``PER_OP`` per operation plus ``PER_MB`` per MB it moves, so a unit of score carries
1 / (per_op + per_mb r) operations of r MB a second per client (the service demand of an operation as a fixed
part plus a part per byte: Lazowska et al. 1984, ch. 4). Calibrated (data/README.md, "The CPU stage's prior";
``benchmarks/stages_proof.py cpu-prior`` recomputes it) on the lab's runs bound beyond their disks and links at
half a core a node: 4 KiB random reads and writes on NVMe-class bricks (0.082-0.109 MB/s per score unit, four
runs) and 1 MiB writes on an unthrottled link (1.59). The score is the one a host keeps under load
(``hardware/cpu_share.py``; those runs' four nodes asked a core each of two); recalibrated so on 2026-12-01,
which halved both costs from 0.0778 and 1.177 (the score alone). The log SD of those runs about the curve, on
``DOF`` degrees of freedom, widens every answer it bounds (``half_width``).

References
----------
Lazowska, E. D., Zahorjan, J., Graham, G. S., Sevcik, K. C. (1984), *Quantitative System Performance*,
Prentice-Hall, ch. 4 (service demands).
Geisser, S. (1993), *Predictive Inference: An Introduction*, Chapman & Hall, ch. 2 (the t interval of a new
observation).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .columns import Columns, n_rows, numbers
from .physics import ALL_STAGES, OP_METRICS, bytes_per_op, has_payload, model_stages

if TYPE_CHECKING:
    import numpy as np

PER_OP = 0.0389  # score-unit seconds an operation costs the client
PER_MB = 0.5883  # and each MB it moves
SD = 0.133  # log SD of the calibration's runs about the curve
DOF = 3  # five runs, two parameters


def applies(frame: Columns, metric: str) -> bool:
    """Whether the client CPU stage can be placed from its calibrated cost: every row has a positive CPU score, a
    client count and what an operation moves (a record for a byte metric)."""
    import numpy as np

    cap = model_stages(frame, metric)[ALL_STAGES.index("client CPU")]
    return bool(np.isfinite(cap).all() and (cap > 0).all() and np.isfinite(mb_per_op(frame, metric)).all())


def mb_per_op(frame: Columns, metric: str) -> np.ndarray:
    """MB one operation moves: a byte metric's record, a small file's size (none for a stat or a listing)."""
    import numpy as np

    if metric in OP_METRICS:
        return bytes_per_op(frame, metric) if has_payload(metric) else np.zeros(n_rows(frame))
    if "record_size" not in frame:
        return np.full(n_rows(frame), np.nan)
    out: np.ndarray = numbers(frame, "record_size") / (1 << 20)
    return out


def log_efficiency(frame: Columns, metric: str) -> float:
    """ln of the client CPU stage's efficiency from the calibrated cost, at the median size an operation moves in
    the data, in the metric's unit (files/s, or MB/s of its records) per unit of the stage's capacity (CPU score
    times clients over a write's copies)."""
    import numpy as np

    r = float(np.median(mb_per_op(frame, metric)))
    ops = 1.0 / (PER_OP + PER_MB * r)  # operations a second per score unit and client
    return math.log(ops if metric in OP_METRICS else ops * r)


def half_width(level: float, sd: float = SD) -> float:
    """Log half-width at ``level`` of the t interval of a new run about the calibration."""
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, DOF)) * sd * math.sqrt(1 + 1 / (DOF + 2))

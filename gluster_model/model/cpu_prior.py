"""The client CPU stage's calibrated cost: what the bottleneck model takes for the clients' CPU where no two
settings measured make it bind.

Data measured at or below today know such a stage from below only (it let every run through), yet an upgrade of
the links or disks runs into it (the IOPS proof's NVMe-class writes: +268% with no stage beyond the disks). It
takes the lab's calibrated cost of an operation instead, in seconds of a CPU-score unit (one MB/s of the score's
SHA-256): a part per operation plus a part per MB it moves, so a unit of score carries 1 / (per_op + per_mb r)
operations of r MB a second per client (the service demand of an operation as a fixed part plus a part per byte:
Lazowska et al. 1984, ch. 4). A write and a read cost apart (``COST``): a write's client sends each copy and a
1 MiB write took 2.4 times a read's score per MB and copy, where one curve through both missed each run by x/÷
1.41. Operations that change a volume (creates, deletes) take the writes' cost, the others the reads'.

Calibrated (data/README.md, "The CPU stage's prior"; ``benchmarks/stages_proof.py cpu-prior`` recomputes it) on
the lab's runs bound beyond their disks and links at half a core a node: 4 KiB random reads and writes on
NVMe-class bricks (four runs) and 1 MiB writes and reads on a link emulation leaves unshaped (five runs). The
score is the one a host keeps under load (``hardware/cpu_share.py``). The log SD of those runs about the two
curves, on ``DOF`` degrees of freedom, widens every answer it bounds (``half_width``).

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
from .physics import ALL_STAGES, OP_METRICS, WRITE_METRICS, bytes_per_op, has_payload, model_stages

if TYPE_CHECKING:
    import numpy as np

# score-unit seconds an operation costs the client: (per operation, per MB it moves), for writes and for reads
COST = {"write": (0.0347, 0.5487), "read": (0.0451, 0.2306)}
CHANGES = WRITE_METRICS | {"file_create", "file_delete"}  # the metrics that take the writes' cost
SD = 0.136  # log SD of the calibration's runs about the curves
DOF = 5  # nine runs, four parameters
# A calibration's degrees of freedom -> the share of its SD a new run's curve adds (the curves over the runs):
# this one's two curves through nine runs, and the first's one through five (a model file fitted on it says 3).
LEVERAGE = {DOF: 2 / 9, 3: 1 / 5}


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


def direction(metric: str) -> str:
    """Which of ``COST``'s curves a metric takes: "write" for one that changes the volume, else "read"."""
    return "write" if metric in CHANGES else "read"


def log_efficiency(frame: Columns, metric: str) -> float:
    """ln of the client CPU stage's efficiency from the calibrated cost, at the median size an operation moves in
    the data, in the metric's unit (files/s, or MB/s of its records) per unit of the stage's capacity (CPU score
    times clients over a write's copies)."""
    import numpy as np

    r = float(np.median(mb_per_op(frame, metric)))
    per_op, per_mb = COST[direction(metric)]
    ops = 1.0 / (per_op + per_mb * r)  # operations a second per score unit and client
    return math.log(ops if metric in OP_METRICS else ops * r)


def half_width(level: float, sd: float = SD, dof: int = DOF) -> float:
    """Log half-width at ``level`` of the t interval of a new run about the calibration of ``dof`` degrees of
    freedom (``LEVERAGE``: this one, or the first, whose model files keep its figures)."""
    from scipy.stats import t

    return float(t.ppf(0.5 + level / 2, dof)) * sd * math.sqrt(1 + LEVERAGE[dof])

"""The bottleneck model: throughput is what the slowest stage a byte crosses lets through.

    ln y = min_s (t_s + ln C_s) + Σ b_j x_j + ε

``C_s`` is the capacity of stage s (client links, server links, server disks; ``physics.stages``: measured link
and disk figures, copies written, hash placement), ``t_s = ln k_s`` the share of it a run gets (its efficiency),
and ``x_j`` the inputs that are not stage capacities (RAM, CPU score, sharding, file size, …; log2 of the
positive numeric ones, centred on the training data). Where one stage binds, throughput is proportional to its
capacity: an upgrade of the binding resource is passed on in full (elasticity 1, where a log-linear fit on
``ln C`` found 0.77-0.79 and under-predicted every gain) until the next stage binds, at a capacity that was
measured. That is what lets data measured at or below today's hardware answer "what does a faster link or disk
give": the gain runs until the next measured stage binds (``stage_limits``).

Stages beyond bytes. Small files, random I/O and fast links are bound elsewhere: by the CPU of the clients (the
FUSE process, which sends a write's every copy) or of the servers (the brick processes), and by round trips (an
operation waits for n of them plus a service time, so ``threads`` operations in flight give at most threads /
(n (rtt + s)) a second: the asymptotic bound of a closed system, Lazowska et al. 1984, ch. 5). Past a rate the
bound cannot see, the threads of a client wait for each other (at 0.66 ms round trips four threads a client took a
stat in 4.4 ms where one took 2.4; at 4.2 ms, 10.6 and 10.0): where a plan varied the threads a client, a share of
``s`` is a queue of the client's own, and each client's threads a closed network solved exactly by mean-value
analysis (``physics.round_trip_rate``; on that lab's four points within 1.5%, where the bound missed the short
round trip by 25% and 34%). Their capacities come from inputs each campaign measures (the CPU score, the round
trip; ``physics.op_stages``) and their efficiencies, like the links', are fitted where they bind; the service time
``s`` and its queued share from a grid (``round_trip_grid``). A small-file
rate is modelled in files/s: the links and disks carry file size over MB/s files a second, and a stat, a listing
or a delete crosses only the CPU and round-trip stages. A CPU or round-trip stage enters only where the design
varied its input and its held-out (leave-one-setting-out) error is no larger; otherwise the
model is the three byte stages as before, whatever the data (the shipped proofs' figures are unchanged). A
shorter round trip is an upgrade as a faster link is: it is passed on in full until the next stage binds.

Fit: alternating least squares. Given which stage binds each run, the model is linear (stage dummies plus the
main effects, offset by ``ln C``); given the fit, each run is assigned to the stage with the least ``t_s + ln
C_s``. Started from the raw bottleneck (all ``t_s`` equal), it stops when no assignment changes; a few
milliseconds, so refits are cheap. A stage no training run is bound by has no efficiency of its own in the data:
it gets the mean of the others', raised if need be so that it binds no training run, and is marked assumed.

Known from below. Data measured at or below today say of a stage that never bound only that it let every run
through; of one that bound a single setting, no more (that setting alone fits it exactly, and no held-out check
tests it: ``MIN_PINNING_SETTINGS``). Yet an upgrade of the links or disks runs into the CPU of the clients.
So the client CPU stage, where no two settings pin it, takes the lab's calibrated cost of an operation
(``cpu_prior``; per operation plus per MB, in CPU-score units) where that is faster than what the data show,
and is marked assumed; an answer it bounds carries the calibration's spread (``prior_q``). A server CPU or
round-trip stage pinned by one setting is left out (the clients' stage answers for the CPU; a round trip acts as a
main effect), and the setting that alone moved such a stage's input or a main effect's calibrates no interval
(``alone_moved``). Two physical limits hold every fit:
a measured resource's main effect keeps its sign (``RESOURCE_SIGN``: more CPU never predicts less), and a round
trip carries at most one operation a thread (``MAX_ROUND_TRIP_LOG_EFF``).

Stages that hold a run back together. The least stage alone is the asymptotic bound: right where one stage is
far the slowest, too high where two are close (a thread's megabyte waits for the FUSE process's CPU and then for
the wire, and a run of few threads keeps neither busy all the time). On the lab a CPU quota and a link shaped near
each other's rate gave 15-23% more at link x1.4 where the least stage alone said "no gain", and CPU x4 wrote past
the links' ceiling fitted from runs both held back. Where two or more stages that serve one request at a time
(``JOINT_STAGES``: the links and the CPU stages) are each pinned by ``MIN_PINNING_SETTINGS`` settings, the fit
also tries them as one closed network (each stage a queue whose demand per unit of work is 1/limit, the run's
threads its customers, solved exactly by mean-value analysis: ``physics.joint_log_rate``; Lazowska et al. 1984,
ch. 6), their efficiencies and the main effects fitted again by nonlinear least squares from the least-stage fit.
It is kept where its held-out (leave-one-setting-out) squared log error is less than the least stage's alone;
every other stage stays a ceiling, as does a stage the data do not pin: a soft knee puts an unpinned stage to
work, and its efficiency is then a guess (fitted freely on a plan the CPU never bound, a joint CPU stage
gave link_700's write upgrades a verify MAPE of 33%, against 4% as a ceiling). The stage named as binding is still the
least limit; an upgrade of a joint stage that does not bind still gains, as on the lab. A client CPU stage taken
at its calibrated cost (below) is a queue of known demand: it joins the pinned links in such a network, its
efficiency not refitted (``_joint_choice``), as the lab's writes at link x2 ran into the clients' CPU that no
setting below today made bind.

Intervals: split-conformal over hardware settings, by binding stage (Mondrian). Every run's log residual comes
from a fit that never saw its hardware setting (leave one setting out) and counts for the stage the model binds
its run at, as a new answer is given the quantile of the stage it binds at; each setting weighs the same whatever
its number of runs, at the level corrected for the number of runs. Why this and not the linear model's
t-interval: runs of one setting share their error (the same baselines, the same placement draw), so a setting,
not a run, is the unit that is exchangeable; and a link-bound run and a disk-bound run have different noise (a
disk-bound replicated run depends on where the hash put its files), so one width for both over-covers the first
and under-covers the second.

The interval is for the mean of ``trials`` trials of a run (one by default: what a single benchmark gives;
``glmodel verify`` asks for the trials it ran). A run's error is the model's error at its setting, shared by
its trials, plus each trial's own noise (a replicated read's placement draw is a new one every trial: the same
hardware reads 24, 38 or 47 MB/s). Both variances are estimated per stage (a one-way random effects model: the
trials' from the spread within runs, the model's from the runs' mean residuals less what their trials' noise
explains), and one trial's quantile is scaled by sqrt((between + within/k) / (between + within)) for a mean of k
trials (``conformal_quantiles`` says why not a normalised score), never narrower than the normal prediction
interval from the between-setting variance on the settings it rests on (``lookup`` says why). As k → ∞ it
bounds the error of the long-run mean: the interval of an expected change.

Another campaign: an answer to "what will it measure after the change" is measured in a campaign other than the
data's, at hardware beyond the data's (an upgrade). Leave-one-setting-out residuals hold neither: a campaign's
own shift is shared by all its settings, and an upgrade moves a stage's capacity, or the gap to the next stage,
past any setting below today (on the lab a stage near the crossover dragged the one that limits by about 0.4%,
and the drag went with the upgrade). Below today neither shows, so one campaign cannot estimate it; the lab's
upgrade proofs measured it. With ``new_campaign`` the interval adds a log-normal term of SD ``new_campaign_sd``
in quadrature (a variance component, as the model's error at a setting is). ``NEW_CAMPAIGN_SD`` is calibrated for
coverage over the lab's five proofs' 180 upgrades (data/README.md, "The sixth proof"): the smallest SD that puts
ceil(0.9 (n + 1)) of them inside their 90% intervals given each one's conformal width, the split-conformal rule
applied to the term. Why not a variance: the error between campaigns is heavy-tailed (a quiet session's upgrades
err 0.0-1.7%, a disturbed one's up to 5.8%), and maximum likelihood lets the few large errors set the width of
every interval, too wide on a quiet machine; coverage is a quantile, and a quantile is what the interval must
hold. An earlier form made the SD proportional to the answer's CPU load (predicted MB/s over the CPU score):
the fifth proof found it too wide, as the CPU score measured once a campaign scattered (142-267 for one
today) and carried its own noise into the interval. A model file may still carry a per-load coefficient
(``new_campaign_per_load``, zero by default): where it is positive and a row has a CPU score, it sets that
row's SD instead, so a file written under that form answers as it did.

References
----------
Lei, J., G'Sell, M., Rinaldo, A., Tibshirani, R. J., Wasserman, L. (2018), "Distribution-free predictive inference
for regression", *JASA* 113(523), 1094–1111 (split conformal prediction).
Vovk, V., Gammerman, A., Shafer, G. (2005), *Algorithmic Learning in a Random World*, Springer, §4.5 (Mondrian
conformal predictors: validity within each category).
Barber, R. F., Candès, E. J., Ramdas, A., Tibshirani, R. J. (2021), "Predictive inference with the jackknife+",
*Ann. Statist.* 49(1) (leave-one-out residuals for conformal intervals).
Papadopoulos, H., Gammerman, A., Vovk, V. (2008), "Normalized nonconformity measures for regression conformal
prediction", *Proc. IASTED AIA*, 64–69 (a score divided by each example's expected spread).
Carroll, R. J., Ruppert, D. (1988), *Transformation and Weighting in Regression*, Chapman & Hall, ch. 3 (a
variance function of the mean, its parameter by maximum likelihood).
Searle, S. R., Casella, G., McCulloch, C. E. (1992), *Variance Components*, Wiley, ch. 3 (the one-way random
effects model: between and within variance from group means and within-group spread).
Geisser, S. (1993), *Predictive Inference: An Introduction*, Chapman & Hall, ch. 2 (the normal prediction
interval for a new observation from n: t with n - 1 degrees of freedom, variance times 1 + 1/n;
``stats.prediction``).
Lawson, C. L., Hanson, R. J. (1974), *Solving Least Squares Problems*, Prentice-Hall, ch. 23 (least squares
with sign constraints: an active set, a variable of the wrong sign held at zero).
Lazowska, E. D., Zahorjan, J., Graham, G. S., Sevcik, K. C. (1984), *Quantitative System Performance*,
Prentice-Hall, ch. 5 (asymptotic bounds: throughput is bounded by the most demanded device) and ch. 6 (mean-value
analysis of a closed network).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .columns import Columns, n_rows, numbers, strings
from .features import Schema, Term, design_matrix, held_by_design, main_effect_terms
from ..hardware.settings import MEASURED_INPUTS
from . import cpu_prior
from .physics import (ALL_STAGES, OP_METRICS as _OP_METRICS, OP_STAGE_INPUTS, OP_STAGES, STAGES, RoundTrip,
                      has_payload, joint_log_rate, model_stages, stages)
from .groups import GROUP, cv_groups
from ..errors import GlmodelError
from ..stats.prediction import predictive_half_width

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

# The inputs that make up the stages' capacities: they act through the stages only, never as main effects too
# (a main effect on the link beside the link's stage would give the link an elasticity other than 1).
STAGE_INPUTS = frozenset({"network_gbps", "disk_read_mbps", "disk_write_mbps", "disk_randread_iops",
                          "disk_randwrite_iops"})
# Which stages each resource a purchase upgrades feeds (by name: a model holds the stages it fitted).
RESOURCE_STAGES: dict[str, tuple[str, ...]] = {"network_gbps": STAGES[:2], "disk_read_mbps": STAGES[2:],
                                               "disk_write_mbps": STAGES[2:], "disk_randread_iops": STAGES[2:],
                                               "disk_randwrite_iops": STAGES[2:],
                                               "cpu_score": ("client CPU", "server CPU"),
                                               "network_rtt_ms": ("round trips",)}
# Resources an upgrade makes smaller (a shorter round trip); every other one it makes larger.
LOWER_IS_BETTER = frozenset({"network_rtt_ms"})
# Service times tried for the round-trip stage (seconds an operation spends besides its round trips), and how
# much smaller a model's held-out squared error must be for a CPU or round-trip stage to enter it: none, it must
# be no larger. On the data a free main effect on the stage's input can fit as well (threads / (n rtt) is a
# power law of slope -1 in the round trip), but not beyond them; what keeps a stage fitted on noise out is that
# the design must have moved its input (``features.held_by_design``) and that it must not predict held-out
# settings worse.
SERVICE_GRID_S = (0.0, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2)
# The shares of the service time tried as a client's queue (``physics.RoundTrip``), where the runs had more than
# one number of threads a client: only then do the data say whether an operation's service runs beside the other
# threads' (their rate grows with the threads) or waits for them (it stops growing). With one number of threads a
# client a share is not identified: the runs below today, at longer round trips, hold any queue well under its
# load, and each share fits them alike while answering a shorter round trip differently; 0 keeps the asymptotic
# bound, as every model before the queue had.
QUEUED_GRID = (0.0, 0.25, 0.5, 0.75, 1.0)
SELECTION_GAIN = 0.0
# Where a CPU or round-trip stage starts in the alternating fit: the quantiles of what its efficiency would be
# if it bound each run (1: it just touches the fastest; lower: it binds more runs at the start).
_STARTS = (1.0, 0.9, 0.75, 0.5, 0.25)
LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99)
# The error of a prediction measured in another campaign at hardware beyond the data's, beyond what the
# conformal part holds (module docstring "Another campaign"): a constant log SD calibrated for 90% coverage over
# the 180 upgrades of the lab's first five upgrade proofs (data/README.md), fixed before the sixth; and the
# per-load coefficient of the fifth proof's form, off (a model file written under that form carries its own).
NEW_CAMPAIGN_SD = 0.0054
NEW_CAMPAIGN_PER_LOAD = 0.0
MIN_CALIBRATION_SETTINGS = 3  # fewer settings bound at a stage than this: that stage takes the pooled quantile
_MAX_ROUNDS = 50
# The sign a measured resource's main effect may take: more of a resource never slows a workload (a shorter
# round trip is more of it). A fit that gives one the other sign has fitted noise (the CPU score of one quota
# scatters by a fifth between campaigns), and an upgrade of that resource would be answered as a loss: the term
# is left out and the model fitted again (a sign-constrained least squares by elimination, as an active set
# method ends; Lawson and Hanson 1974, ch. 23).
RESOURCE_SIGN: dict[str, float] = {m: (-1.0 if m in LOWER_IS_BETTER else 1.0) for m in MEASURED_INPUTS}
# The most operations a round trip can carry: an operation waits for at least one, so the round-trip stage's
# efficiency (operations per round trip and thread) is at most 1. A service time that needs more (a fit that
# made the stage bind runs faster than threads / (rtt + s) allows) is not a service time this system has.
MAX_ROUND_TRIP_LOG_EFF = 0.0
# Settings a stage must bind to be pinned by the data: one setting alone fits it exactly, whatever the truth (a
# random read's placement draw, or a CPU share's scheduling delay, moved one setting 20% on the lab), and no
# held-out check tests it (without that setting the stage binds nothing). Such a client CPU stage is known from
# below only: it takes its calibrated cost where that is faster (``cpu_prior``).
MIN_PINNING_SETTINGS = 2
# The CPU and round-trip stages with no calibrated cost: one that fewer than MIN_PINNING_SETTINGS settings pin is
# left out of the model (the client CPU stage takes its calibrated cost instead).
UNPRICED_STAGES = ("server CPU", "round trips")
# The stages that can hold a run back together (``_choose_joint``): each serves one request at a time, as a queue
# does (a link sends one frame after another; a FUSE or brick process's CPU runs its threads' work in turn). Not
# the disks: a device serves many requests at once (its queue depth) and a throttle's token bucket holds no queue
# of its own, so either is a ceiling; on the earlier IOPS todays a joint disk stage moved the verify MAPE by
# -3 to +2.5 points, within their noise. Not the round trips: a delay every thread waits out beside the others,
# whose stage is a closed network of its own already.
JOINT_STAGES = ("client links", "server links", "client CPU", "server CPU")
# The least spread (max / min) of a CPU or round-trip stage's input over the settings for it to be a candidate
# (``_candidates``): less, and the fit cannot tell the stage from a constant.
MIN_SPREAD = 1.25


def main_schema(schema: Schema) -> Schema:
    """The family's features less the stage capacities (they enter through the stages)."""
    return Schema(schema.metric, tuple(f for f in schema.features if f.name not in STAGE_INPUTS), schema.dropped)


def usable(frame: Columns, metric: str) -> bool:
    """Whether every row has what the stages need: for a throughput (MB/s) the measured link and disk figures;
    for a small-file rate some stage in every row (a stage whose input was not measured is not there: a stat
    crosses only the CPU and round trips, and a plan may measure no disk for creates)."""
    import numpy as np

    if n_rows(frame) == 0:
        return False
    try:
        if metric not in _OP_METRICS:
            return bool(np.isfinite(model_stages(frame, metric)[:len(STAGES)]).all())
        return bool(np.isfinite(model_stages(frame, metric)).all(axis=1).any())
    except KeyError:
        return False


def stage_rows(names: Sequence[str]) -> list[int]:
    """Rows of ``model_stages`` for the stages ``names``."""
    return [ALL_STAGES.index(n) for n in names]


def log_capacities(frame: Columns, metric: str, names: Sequence[str], trip: RoundTrip = RoundTrip()) -> np.ndarray:
    """ln of each named stage's capacity (stages × rows), +inf where the frame lacks the stage's input."""
    import numpy as np

    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.log(model_stages(frame, metric, trip)[stage_rows(names)])
    return np.where(np.isnan(out), np.inf, out)


@dataclass
class BottleneckModel:
    """A fitted bottleneck model (see the module docstring); plain numbers, written to and read from JSON."""

    name: str
    metric: str
    terms: list[Term]
    log_eff: list[float]  # t_s per stage
    assumed: list[bool]  # the stage bound no training run: its efficiency is not measured
    coef: list[float]  # main effects, on columns centred at ``centre``
    centre: list[float]
    quantiles: dict[str, dict[str, float]] = field(default_factory=dict)  # stage (or "all") -> level -> q
    new_campaign_per_load: float = NEW_CAMPAIGN_PER_LOAD  # log SD per unit of CPU load (an older form), or 0
    new_campaign_sd: float = NEW_CAMPAIGN_SD  # the constant log SD of another campaign
    stages: tuple[str, ...] = STAGES  # the stages it fitted, in ``log_eff``'s order (the byte stages first)
    service_s: float = 0.0  # the round-trip stage's service time per operation, seconds
    queued: float = 0.0  # the share of it that waits in the client's queue (physics.RoundTrip)
    drift: float | None = None  # mean log change of the runs measured again at the plan's end (None: not measured)
    drift_runs: int = 0
    prior_sd: float = 0.0  # log SD of an assumed CPU or round-trip stage's calibrated efficiency (0: none)
    prior_dof: int = 3  # its degrees of freedom (a model file without them was fitted on the first calibration)
    # the stages whose answers carry that spread; None (a model file before it): the assumed CPU and round-trip ones
    widened: tuple[str, ...] | None = None
    # the stages that hold a run back together (module docstring, "Stages that hold a run back together"): solved
    # as one closed network with the run's threads as customers; () (every model before it): the least stage alone
    joint: tuple[str, ...] = ()

    @property
    def trip(self) -> RoundTrip:
        """The round-trip stage's service (time and queued share)."""
        return RoundTrip(self.service_s, self.queued)

    @property
    def n_params(self) -> int:
        return len(self.log_eff) - sum(self.assumed) + len(self.coef)

    # -- prediction ---------------------------------------------------------------------------------------
    def _main(self, frame: Columns) -> np.ndarray:
        import numpy as np

        if not self.terms:
            return np.zeros(n_rows(frame))
        x = design_matrix(frame, self.terms) - np.asarray(self.centre)
        out: np.ndarray = x @ np.asarray(self.coef)
        return out

    def stage_limits(self, frame: Columns) -> np.ndarray:
        """What each stage lets through alone for each row, MB/s: stages × rows; the prediction is their minimum,
        or less where stages hold a run back together (``joint``)."""
        import numpy as np

        logc = log_capacities(frame, self.metric, self.stages, self.trip)
        out: np.ndarray = np.exp(logc + np.asarray(self.log_eff)[:, None] + self._main(frame)[None, :])
        return out

    def _stages_core(self) -> _Core:
        """The stages' part of the model as a fit holds it (the main effects apart: ``_main``)."""
        import numpy as np

        return _Core(np.asarray(self.log_eff), np.asarray(self.assumed), np.zeros(0), np.zeros(0),
                     np.array([n in self.joint for n in self.stages]))

    def binding(self, frame: Columns) -> np.ndarray:
        """Index into ``stages`` of the stage each row is limited by."""
        import numpy as np

        out: np.ndarray = np.argmin(self.stage_limits(frame), axis=0)
        return out

    def predict(self, frame: Columns) -> np.ndarray:
        import numpy as np

        if len(self.joint) < 2:
            out: np.ndarray = np.min(self.stage_limits(frame), axis=0)
            return out
        logc = log_capacities(frame, self.metric, self.stages, self.trip)
        pred, _ = _predict_core(self._stages_core(), logc, np.zeros((n_rows(frame), 0)), customers_of(frame))
        out = np.exp(pred + self._main(frame))
        return out

    def quantile(self, stage: str, level: float, trials: float = 1) -> float:
        return lookup(self.quantiles, stage, level, trials)

    def cpu_load(self, frame: Columns, yhat: np.ndarray | None = None) -> np.ndarray:
        """Each row's CPU load: its predicted MB/s (``yhat``, predicted here if not given) over its CPU score;
        NaN where the row has no CPU score."""
        import numpy as np

        yhat = self.predict(frame) if yhat is None else yhat
        cpu = numbers(frame, "cpu_score") if "cpu_score" in frame else np.full(len(yhat), np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            out: np.ndarray = np.where(np.isfinite(cpu) & (cpu > 0), yhat / cpu, np.nan)
        return out

    def new_campaign_q(self, frame: Columns, level: float, yhat: np.ndarray | None = None) -> np.ndarray:
        """Each row's half-width (log) at ``level`` of the another-campaign term (module docstring): its SD is the
        constant ``new_campaign_sd``, or, in a model file whose ``new_campaign_per_load`` is positive, that times
        the row's ``cpu_load`` where the row has a CPU score."""
        import numpy as np
        from scipy.stats import norm

        sd = np.full(n_rows(frame), self.new_campaign_sd)
        if self.new_campaign_per_load > 0:
            load = self.cpu_load(frame, yhat)
            sd = np.where(np.isfinite(load), self.new_campaign_per_load * load, sd)
        out: np.ndarray = float(norm.ppf(0.5 + level / 2)) * sd
        return out

    def interval(self, frame: Columns, level: float = 0.9, trials: float = 1, new_campaign: bool = False
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Where the mean of ``trials`` trials of each row will fall; with ``new_campaign`` measured in another
        campaign (module docstring)."""
        import numpy as np

        yhat = self.predict(frame)
        bound = self.binding(frame)
        q = np.array([self.quantile(self.stages[s], level, trials) for s in bound])
        q = np.sqrt(q ** 2 + self.prior_q(bound, level) ** 2)
        if new_campaign:
            q = np.sqrt(q ** 2 + self.new_campaign_q(frame, level, yhat) ** 2)
        return yhat * np.exp(-q), yhat * np.exp(q)

    def prior_q(self, bound: np.ndarray, level: float) -> np.ndarray:
        """Each row's half-width (log) at ``level`` of the calibrated efficiency where the stage it binds at is
        one of ``widened`` (``cpu_prior``; in an older model file, a CPU or round-trip stage no setting made bind):
        the t interval of a new run about the calibration; 0 elsewhere."""
        import numpy as np

        prior = np.array([n in self.widened if self.widened is not None else a and n in OP_STAGES
                          for n, a in zip(self.stages, self.assumed)])
        if self.prior_sd <= 0 or not prior.any():
            return np.zeros(len(bound))
        half = cpu_prior.half_width(level, self.prior_sd, self.prior_dof)
        out: np.ndarray = np.where(prior[bound], half, 0.0)
        return out

    def difference(self, frame: Columns, level: float = 0.9, observed: bool = False, refits: int = 0,
                   trials: float = 1, new_campaign: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each row minus row 0, with an interval on the log scale around the predicted ratio: the row's own
        conformal quantile for a long-run mean (the model's error at a setting it never saw, without the
        trials' noise: a change of hardware moves a run to such a setting; where row 0 stands is taken as
        predicted). A measured change (``observed``: each row's mean of ``trials`` trials) takes both rows'
        quantiles for that many trials in quadrature, as both carry their own noise. Never a zero width: two
        rows bound at one stage share its efficiency, but not the error of the model's form. With ``new_campaign``
        each row but row 0 adds the another-campaign term (its hardware is beyond the data's, row 0's not)."""
        import numpy as np

        yhat = self.predict(frame)
        bound = self.binding(frame)
        stage = [self.stages[s] for s in bound]
        if observed:
            q = np.array([self.quantile(s, level, trials) for s in stage])
            width = np.sqrt(q ** 2 + q[0] ** 2)
        else:
            width = np.array([self.quantile(s, level, math.inf) for s in stage])
        width = np.sqrt(width ** 2 + self.prior_q(bound, level) ** 2)
        if new_campaign:
            width = np.sqrt(width ** 2 + self.new_campaign_q(frame, level, yhat) ** 2)
        d = yhat - yhat[0]
        low, high = yhat * np.exp(-width) - yhat[0], yhat * np.exp(width) - yhat[0]
        low[0] = high[0] = 0.0
        return d, low, high

    # -- file -----------------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"type": "bottleneck", "name": self.name, "metric": self.metric,
                "terms": [t.to_json() for t in self.terms], "log_eff": list(self.log_eff),
                "assumed": list(self.assumed), "coef": list(self.coef), "centre": list(self.centre),
                "quantiles": self.quantiles, "new_campaign_per_load": self.new_campaign_per_load,
                "new_campaign_sd": self.new_campaign_sd, "stages": list(self.stages), "service_s": self.service_s,
                "queued": self.queued,
                "drift": self.drift, "drift_runs": self.drift_runs, "prior_sd": self.prior_sd,
                "prior_dof": self.prior_dof,
                **({"widened": list(self.widened)} if self.widened is not None else {}),
                **({"joint": list(self.joint)} if self.joint else {})}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> BottleneckModel:
        try:
            terms = [Term.from_json(t) for t in d["terms"]]
            log_eff = [float(v) for v in d["log_eff"]]
            assumed = [bool(v) for v in d["assumed"]]
            coef = [float(v) for v in d["coef"]]
            centre = [float(v) for v in d["centre"]]
            quantiles = {str(s): {str(k): float(v) for k, v in dict(t).items()} for s, t in dict(d["quantiles"]).items()}
            names = tuple(str(n) for n in d.get("stages", STAGES))
            unknown = [n for n in names if n not in ALL_STAGES]
            if unknown or len(set(names)) != len(names):
                raise ValueError(f"stages {', '.join(names)} (known: {', '.join(ALL_STAGES)})")
            service_s = float(d.get("service_s", 0.0))
            queued = float(d.get("queued", 0.0))
            if not 0 <= queued <= 1:
                raise ValueError(f"queued {queued} is not a share in [0, 1]")
            drift = None if d.get("drift") is None else float(d["drift"])
            drift_runs = int(d.get("drift_runs", 0))
            prior_sd = float(d.get("prior_sd", 0.0))
            prior_dof = int(d.get("prior_dof", 3))
            if prior_dof not in cpu_prior.LEVERAGE:
                raise ValueError(f"prior_dof {prior_dof} is none of the calibrations' ({sorted(cpu_prior.LEVERAGE)})")
            widened = None if d.get("widened") is None else tuple(str(n) for n in d["widened"])
            if widened is not None and not set(widened) <= set(names):
                raise ValueError(f"widened stages {', '.join(widened)} are not among its stages")
            joint = tuple(str(n) for n in d.get("joint", ()))
            if not set(joint) <= set(names) or len(set(joint)) != len(joint) or len(joint) == 1:
                raise ValueError(f"joint stages {', '.join(joint)} are not two or more of its stages")
            if not 0 <= prior_sd < 1:
                raise ValueError(f"prior_sd {prior_sd} is not a log SD in [0, 1)")
            if drift is not None and not math.isfinite(drift):
                raise ValueError("drift is not a finite number")
            if not 0 <= service_s < 10:
                raise ValueError(f"service_s {service_s} is not a time in seconds")
            if len(log_eff) != len(names) or len(assumed) != len(names) or not len(coef) == len(centre) == len(terms):
                raise ValueError(f"{len(log_eff)} efficiencies for {len(names)} stages, {len(coef)} effects for "
                                 f"{len(terms)} terms")
            if not all(math.isfinite(v) for v in (*log_eff, *coef, *centre)):
                raise ValueError("a parameter is not a finite number")
            metric = str(d["metric"])
            new_campaign_sd = float(d.get("new_campaign_sd", NEW_CAMPAIGN_SD))
            per_load = float(d.get("new_campaign_per_load", NEW_CAMPAIGN_PER_LOAD))
            for key, value in (("new_campaign_sd", new_campaign_sd), ("new_campaign_per_load", per_load)):
                if not 0 <= value < 1:
                    raise ValueError(f"{key} {value} is not a log SD in [0, 1)")
        except (KeyError, TypeError, ValueError) as exc:
            raise GlmodelError(f"model file: the bottleneck model is damaged ({str(exc).splitlines()[0][:120]}); "
                               "fit the model again") from None
        return cls(str(d.get("name", "bottleneck")), metric, terms, log_eff, assumed, coef, centre, quantiles,
                   per_load, new_campaign_sd, names, service_s, queued, drift, drift_runs, prior_sd, prior_dof,
                   widened, joint)


# -- fitting ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Core:
    log_eff: np.ndarray
    assumed: np.ndarray
    coef: np.ndarray
    centre: np.ndarray
    joint: np.ndarray | None = None  # which stages hold a run back together (None: the least one alone)


def _fit_core(logc: np.ndarray, x: np.ndarray, ly: np.ndarray, start: np.ndarray | None = None,
              optional: np.ndarray | None = None, byte_prior: float | None = None) -> _Core:
    """Alternating least squares (module docstring): log stage capacities ``logc`` (stages × n), main-effect
    matrix ``x`` (n × p), log throughput ``ly``; started from the assignment ``start`` (log efficiencies; the
    raw bottleneck where None). An ``optional`` stage (CPU, round trips) that binds no run is left out
    (+inf: it never binds) rather than given the others' efficiency, which has another unit; a byte stage that
    binds none takes the other byte stages' mean efficiency, never less than just enough to bind no training
    run. With ``byte_prior`` (a small-file rate) the byte stages are not fitted at all: each carries at most its
    rate in files (log efficiency ``byte_prior``, 0). Fitted there, a link's efficiency is free to follow
    whatever moves with its measured figure (under added delay a TCP stream's iperf figure falls with the round
    trip, and a link at 6% of its rate explained creates as well as the round trips did)."""
    import numpy as np

    n_st, n = logc.shape
    optional = np.zeros(n_st, dtype=bool) if optional is None else optional
    fixed = ~optional if byte_prior is not None else np.zeros(n_st, dtype=bool)
    centre = x.mean(axis=0) if x.shape[1] else np.zeros(0)
    xc = x - centre
    bind = np.argmin(logc if start is None else logc + start[:, None], axis=0)
    log_eff = np.zeros(n_st)
    coef = np.zeros(x.shape[1])
    assumed = np.zeros(n_st, dtype=bool)
    seen = {bind.tobytes()}
    for _ in range(_MAX_ROUNDS):
        used = np.array([s for s in np.unique(bind) if not fixed[s]], dtype=int)
        dummies = (bind[:, None] == used[None, :]).astype(float)
        design = np.column_stack([dummies, xc])
        target = ly - logc[bind, np.arange(n)] - np.where(fixed[bind], byte_prior or 0.0, 0.0)
        if design.shape[1]:
            sol, *_ = np.linalg.lstsq(design, target, rcond=None)
        else:
            sol = np.zeros(0)
        log_eff = np.full(n_st, np.nan)
        log_eff[used] = sol[:len(used)]
        log_eff[fixed] = byte_prior or 0.0
        coef = sol[len(used):]
        assumed = np.isnan(log_eff) | fixed
        log_eff[np.isnan(log_eff) & optional] = np.inf
        if np.isnan(log_eff).any():
            known = log_eff[~assumed]
            others = np.min(logc[~assumed] + known[:, None], axis=0)
            byte_known = log_eff[~assumed & ~optional]
            for s in np.flatnonzero(np.isnan(log_eff)):  # the mean of the others, or just enough to bind none
                mean = float(byte_known.mean()) if len(byte_known) else float(known.mean())
                log_eff[s] = max(mean, float(np.max(others - logc[s])) + 1e-9)
        new = np.argmin(logc + log_eff[:, None], axis=0)
        if np.array_equal(new, bind):
            break
        if optional.any():  # an assignment seen before: a cycle, which the rounds left would only go round
            key = new.tobytes()
            if key in seen:
                break
            seen.add(key)
        bind = new
    return _Core(log_eff, assumed, coef, centre)


def _predict_core(core: _Core, logc: np.ndarray, x: np.ndarray, customers: np.ndarray | None = None,
                  fixed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """ln of the prediction and the index of the stage that binds (the least limit) per row; with a ``joint``
    core and the rows' ``customers`` (threads), the joint stages as one closed network and the least of that
    and the other stages' limits. ``fixed`` (log limits, stages × rows) are queues of that network the fit does not
    fit: the client CPU at its calibrated cost."""
    import numpy as np

    limits = logc + core.log_eff[:, None]
    main = (x - core.centre) @ core.coef if len(core.coef) else np.zeros(logc.shape[1])
    least = np.min(limits, axis=0)
    if core.joint is not None and _queues(core.joint, fixed) >= 2 and customers is not None:
        rest = limits[~core.joint]
        queues = limits[core.joint] if fixed is None else np.vstack([limits[core.joint], fixed])
        together = joint_log_rate(queues, customers)
        least = np.minimum(together, np.min(rest, axis=0)) if len(rest) else together
    return least + main, np.argmin(limits, axis=0)


def _queues(joint: np.ndarray, fixed: np.ndarray | None) -> int:
    """How many queues a closed network of the ``joint`` stages and the ``fixed`` ones has."""
    return int(joint.sum()) + (0 if fixed is None else len(fixed))


def customers_of(frame: Columns) -> np.ndarray | None:
    """The threads each row's run kept in flight (the closed network's customers), or None where the frame does
    not say."""
    return numbers(frame, "threads") if "threads" in frame else None


def _joint_refit(core: _Core, logc: np.ndarray, x: np.ndarray, ly: np.ndarray, customers: np.ndarray,
                 joint: np.ndarray, fixed: np.ndarray | None = None) -> _Core:
    """``core`` (a fit of the least stage alone) fitted again with the ``joint`` stages and the ``fixed`` queues
    (log limits, not fitted) as one closed network: nonlinear least squares on ln y over the joint stages'
    efficiencies and the main effects, started from ``core``; the other stages keep theirs."""
    import numpy as np
    from scipy.optimize import least_squares

    joint = joint & np.isfinite(core.log_eff)  # a stage a fold left idle takes no time
    if _queues(joint, fixed) < 2 or not joint.any():
        return core
    k = int(joint.sum())
    start = np.concatenate([core.log_eff[joint], core.coef])
    # an assumed stage bound no run: it stays out of the fit, and after it is raised, where it must be, to bind
    # none again (a server link of the client links' capacity, at their efficiency, would otherwise take over)
    idle = core.assumed & ~joint
    base = np.where(idle, np.inf, core.log_eff)

    def unpack(v: np.ndarray) -> _Core:
        log_eff = base.copy()
        log_eff[joint] = v[:k]
        return _Core(log_eff, core.assumed, v[k:], core.centre, joint)

    def resid(v: np.ndarray) -> np.ndarray:
        pred, _ = _predict_core(unpack(v), logc, x, customers, fixed)
        out: np.ndarray = ly - pred
        return out

    found = unpack(least_squares(resid, start).x)
    log_eff = found.log_eff
    others = np.min(logc[~idle] + log_eff[~idle, None], axis=0)
    for s in np.flatnonzero(idle & np.isfinite(core.log_eff)):
        log_eff[s] = max(float(core.log_eff[s]), float(np.max(others - logc[s])) + 1e-9)
    log_eff[idle & ~np.isfinite(core.log_eff)] = core.log_eff[idle & ~np.isfinite(core.log_eff)]
    return _Core(log_eff, core.assumed, found.coef, core.centre, joint)


# Keys of a stage's table that are not levels: the variance components its quantiles are scaled by, the number
# of settings the between-setting one rests on and the degrees of freedom of the within-run one.
BETWEEN, WITHIN, SETTINGS, WITHIN_DOF = "between", "within", "settings", "within_dof"
COMPONENTS = (BETWEEN, WITHIN, SETTINGS, WITHIN_DOF)


def lookup(quantiles: Mapping[str, Mapping[str, float]], stage: str, level: float, trials: float = 1) -> float:
    """A stage's quantile at ``level`` for the mean of ``trials`` trials (the pooled one where the stage has
    none; the next level up where the level was not tabled; inf where nothing is).

    The conformal quantile of one trial, scaled by sqrt((between + within/k) / (between + within)) for a mean of
    k trials, but never narrower than the normal prediction interval for a new setting's mean of k trials,
    t_df(0.5 + level/2) sqrt(between (1 + 1/S) + within/k), S the settings the stage was calibrated on and df
    Satterthwaite's for the two components, nor wider than one trial's. Why: as k grows the error left is a
    setting's alone, and S settings (four to six below today) are S exchangeable errors, too few for a
    split-conformal 90% (counted in settings the rule asks for more than the largest); the trial-counted
    correction under-covers there (0.80 of long-run means at 90% in tests/unit/test_interval_coverage.py), while
    the t quantile carries the between component resting on S - 1 degrees of freedom (Geisser 1993, ch. 2). A
    table without the counts (a model file from before them) is scaled alone; one without the components holds
    one trial's quantile, whatever ``trials``."""
    table = quantiles.get(stage) or quantiles.get("all") or {}
    levels = {float(k): v for k, v in table.items() if k not in COMPONENTS}
    above = sorted((lv, v) for lv, v in levels.items() if lv >= level - 1e-12)
    one = float(above[0][1]) if above else math.inf
    if WITHIN not in table or table[BETWEEN] + table[WITHIN] <= 0:
        return one
    k = max(trials, 1.0)
    between, within = table[BETWEEN], (table[WITHIN] / k if math.isfinite(k) else 0.0)
    scaled = one * math.sqrt((between + within) / (table[BETWEEN] + table[WITHIN]))
    if SETTINGS not in table or table[SETTINGS] < 2:
        return scaled
    settings, dof = table[SETTINGS], table.get(WITHIN_DOF, math.inf)
    single = max(one, predictive_half_width(table[BETWEEN], table[WITHIN], settings, dof, level))
    # a mean of k trials never wider than one trial: its variance is the smaller
    return min(single, max(scaled, predictive_half_width(between, within, settings, dof, level)))


def raw_binding(frame: Columns, metric: str) -> np.ndarray:
    """Index into ``STAGES`` of the stage with the least measured capacity, per row."""
    import numpy as np

    out: np.ndarray = np.argmin(np.nan_to_num(stages(frame, metric), nan=np.inf), axis=0)
    return out


def weighted_quantile(values: np.ndarray, weights: np.ndarray, level: float) -> float:
    """The smallest value whose weighted share of the total (itself included) reaches ``level``."""
    import numpy as np

    if len(values) == 0:
        return math.inf
    order = np.argsort(values)
    v, w = values[order], weights[order]
    cum = np.cumsum(w) / np.sum(w)
    i = int(np.searchsorted(cum, level - 1e-12))
    return float(v[min(i, len(v) - 1)]) if level <= 1 else math.inf


def conformal_quantiles(resid: np.ndarray, stage: np.ndarray, setting: np.ndarray,
                        levels: Sequence[float] = LEVELS, run: np.ndarray | None = None,
                        names: Sequence[str] = STAGES) -> dict[str, dict[str, float]]:
    """Absolute log residuals of trials (each from a fit that never saw its setting) → per binding stage and
    pooled ("all"), the level's quantile with every setting weighing the same (a setting of six trials is not
    six settings' evidence), at level·(1 + 1/n) (split conformal's finite-sample correction, n trials); and,
    where ``run`` names each trial's run (its configuration) and some run has two or more trials, the variance
    components that scale it to a mean of several trials (``lookup``): ``within``, of a trial about its run's
    mean, and ``between``, of the model's error at a setting (the runs' mean squares less their trials' share,
    never below what the mean of all the stage's trials could resolve). A stage with fewer than
    ``MIN_CALIBRATION_SETTINGS`` settings is left out (the pooled quantile serves it).

    The correction counted in settings instead (1 + 1/settings) asks for more than the largest residual of a
    stage bound in five settings, and held-out coverage on the shipped emulated data was then 96-98%, above
    the level; counted in trials it is 90-94% for each stage. Why one trial's quantile scaled, and not the
    runs' means normalised by their estimated spread and ranked (Papadopoulos et al. 2008): with two trials a
    setting the spread rests on a handful of degrees of freedom, fitted on the very runs it normalises, and in
    the unit test's simulation such intervals covered 80-83% of means of three trials at 90%; scaled, 90%
    of single trials and of means of three alike."""
    import numpy as np
    import pandas as pd

    ok = np.isfinite(resid)
    named = run is not None
    run = np.asarray(run) if run is not None else np.arange(len(resid))
    resid, stage, setting, run = resid[ok], stage[ok], setting[ok], run[ok]
    codes, _ = pd.MultiIndex.from_arrays([setting, run]).factorize()
    n_runs = int(codes.max()) + 1 if len(codes) else 0
    size = np.bincount(codes, minlength=n_runs).astype(float)
    mean = np.bincount(codes, weights=resid, minlength=n_runs) / np.maximum(size, 1)
    squares = (resid - mean[codes]) ** 2
    out: dict[str, dict[str, float]] = {}

    def table(mask: np.ndarray) -> dict[str, float] | None:
        settings, counts = np.unique(setting[mask], return_counts=True)
        if len(settings) < MIN_CALIBRATION_SETTINGS:
            return None
        per_setting = dict(zip(settings.tolist(), counts.tolist()))
        w = np.array([1.0 / per_setting[s] for s in setting[mask].tolist()])
        n = int(mask.sum())
        q = {f"{lv:g}": weighted_quantile(np.abs(resid[mask]), w, min(1.0, lv * (1 + 1 / n))) for lv in levels}
        runs = np.unique(codes[mask])
        dof = float(np.sum(size[runs] - 1))
        if not named or dof <= 0:
            return q
        within = float(np.sum(squares[mask]) / dof)
        # a run's mean square counts by its trials' weight, as the trials do in the quantile
        run_w = np.bincount(codes[mask], weights=w, minlength=n_runs)[runs]
        between = float(np.sum(run_w * (mean[runs] ** 2 - within / size[runs])) / np.sum(run_w))
        return {**q, BETWEEN: max(between, within / n), WITHIN: within, SETTINGS: float(len(settings)),
                WITHIN_DOF: dof}

    pooled = table(np.ones(len(resid), dtype=bool))
    if pooled is not None:
        out["all"] = pooled
    for s, name in enumerate(names):
        t = table(stage == s)
        if t is not None:
            out[name] = t
    return out


def fit_bottleneck(frame: pd.DataFrame, y: np.ndarray, schema: Schema, metric: str, intervals: bool = True,
                   log_sizes: bool = True) -> BottleneckModel:
    """Fit the bottleneck model on ``frame`` (rows with measured stages); with ``intervals`` also the
    conformal quantiles from leave-one-setting-out refits.

    The byte stages (links, disks) are always in a model of a metric that moves data. A CPU or round-trip stage
    enters where the design varied its input and it earns its place, by forward selection: the model with it
    has a held-out (leave-one-setting-out) squared log error no larger (``SELECTION_GAIN``) than the model
    without it. Without that test a stage fitted on noise would bind a few runs and cap every upgrade at them.
    For a small-file rate the first (best) stage enters unchallenged: its links and disks cannot bind it. The
    round-trip stage's service (``round_trip_grid``: a time and, where the runs had two numbers of threads a
    client or more, the share of it a client's threads queue for) is the one with the least squared error on the
    training runs, among those that carry at most one operation per round trip and thread. Every fit keeps a
    measured resource's main effect to its sign (``RESOURCE_SIGN``). The client CPU stage that no two settings
    pin takes its calibrated cost where that is faster (``_calibrated_cpu``); a server CPU stage bound at one
    setting is left out."""
    import numpy as np

    ly = np.log(np.asarray(y, dtype=float))
    setting = np.asarray(cv_groups(frame)[0]) if GROUP in frame else None
    measured = np.isfinite(model_stages(frame, metric)).all(axis=1)
    base = tuple(n for i, n in enumerate(STAGES) if has_payload(metric) and measured[i])
    candidates = _candidates(frame, metric, setting, {f.name for f in schema.features})
    chosen = _Choice(base, RoundTrip(), math.inf)
    # A candidate must beat the byte stages where those are fitted (a byte metric). A small-file rate's links and
    # disks carry at most its rate (``byte_prior``) and bind none of its runs, so its best candidate enters
    # unchallenged: judged against links fitted freely, it met a rival that explains anything moving with the
    # measured link (under added delay iperf3's window holds the link's figure to 3.3, 2.0 and 1.0 Gbit/s at
    # 13, 25 and 41 ms, in step with the creates the round trips bound).
    if base and candidates and byte_prior(metric) is None:
        chosen = _evaluate(frame, ly, schema, metric, base, setting, log_sizes)
    while candidates:  # forward selection: the stage that lowers the held-out error most, while it earns its place
        trials = [_evaluate(frame, ly, schema, metric, (*chosen.stages, name), setting, log_sizes)
                  for name in candidates]
        best = min(range(len(trials)), key=lambda i: trials[i].error)
        if chosen.stages and trials[best].error > (1 - SELECTION_GAIN) * chosen.error:
            break
        chosen = trials[best]
        candidates = [c for i, c in enumerate(candidates) if i != best]
    if not chosen.stages:
        raise GlmodelError(f"{metric}: no stage of the bottleneck model has its inputs in every run (a stat or "
                           "a listing needs a CPU score or a round trip that the runs varied)")
    names, trip = chosen.stages, chosen.trip
    prior = byte_prior(metric)

    def fitted(names: tuple[str, ...], assumed: tuple[str, ...] = ()) -> tuple[tuple[str, ...], list[Term], _Core]:
        # a CPU or round-trip stage that binds nothing is not the model's, after any fit (its efficiency would be
        # infinite): one that bound under the first stages can idle once another stage is left out or assumed
        terms, core = _signed_fit(frame, ly, metric, names, trip, schema, log_sizes, assumed)
        idle = [n for n, e in zip(names, core.log_eff) if n in OP_STAGES and not math.isfinite(e)]
        if idle and len(idle) < len(names):
            names = tuple(n for n in names if n not in idle)
            terms, core = _signed_fit(frame, ly, metric, names, trip, schema, log_sizes, assumed)
        return names, terms, core

    names, terms, core = fitted(names)
    # a server CPU or round-trip stage bound at one setting alone is not pinned (MIN_PINNING_SETTINGS) and has no
    # calibrated cost of its own: left out, the client CPU stage (the clients send every copy) answers for the CPU,
    # and a round trip acts as a main effect. Kept, a round-trip stage that one delay setting bound by a hair (writes
    # 1% under today's) was refitted in the folds without it as a ceiling over today's own runs, and held out that
    # setting 77 times too low: an interval of x/÷77 on every answer the pooled quantile served.
    for name in UNPRICED_STAGES:
        if name in names and len(names) > 1:
            x = _design(frame, terms)
            logc = log_capacities(frame, metric, names, trip)
            if _settings_bound(names.index(name), core, logc, x, setting) < MIN_PINNING_SETTINGS:
                names, terms, core = fitted(tuple(n for n in names if n != name))
    # the client CPU stage no setting made bind, from its calibrated cost: its score then acts through it alone
    with_prior = "client CPU" not in names and cpu_prior.applies(frame, metric)
    if with_prior and any(t.feature == "cpu_score" for t in terms):
        names, terms, core = fitted(names, ("client CPU",))
    names, terms, core, fixed = _joint_choice(frame, ly, metric, names, trip, terms, core, setting, with_prior,
                                              fitted)
    x = _design(frame, terms)
    logc = log_capacities(frame, metric, names, trip)
    optional = np.array([n in OP_STAGES for n in names])
    customers = customers_of(frame)
    quantiles: dict[str, dict[str, float]] = {}
    if intervals:
        where = setting if setting is not None else np.arange(len(y))
        resid, _ = out_of_setting(logc, x, ly, where, optional, prior, terms=terms, joint=core.joint,
                                  customers=customers, fixed=None if fixed is None else fixed[1])
        if setting is not None:
            inputs = {OP_STAGE_INPUTS[n] for n in names if n in OP_STAGE_INPUTS} | {t.feature for t in terms}
            resid[alone_moved(frame, setting, inputs)] = np.nan
        # each held-out residual goes to the stage the model binds that run at, as a new answer's does: a fold
        # without the one setting that pins a stage knows no such stage, and its miss there (a delay setting's
        # reads, 3.3 times too high) told the stage the fold fell back to nothing about its own error
        _, bound = _predict_core(core, logc, x)
        quantiles = conformal_quantiles(resid, bound, where, run=runs_of(frame), names=names)
    joint = () if core.joint is None else tuple(n for n, j in zip(names, core.joint) if j)
    if fixed is None:
        names, log_eff, assumed, widened = _calibrated_cpu(frame, metric, names, core, logc, x, setting, with_prior)
    else:  # the client CPU at its calibrated cost, one of the stages that hold the runs back together
        names, log_eff = (*names, "client CPU"), [*(float(v) for v in core.log_eff), fixed[0]]
        assumed, widened, joint = [*(bool(v) for v in core.assumed), True], ("client CPU",), (*joint, "client CPU")
    model = BottleneckModel("bottleneck", metric, terms, log_eff, assumed, [float(v) for v in core.coef],
                            [float(v) for v in core.centre], quantiles, stages=names, service_s=trip.service_s,
                            queued=trip.queued, prior_sd=cpu_prior.SD if widened else 0.0, widened=widened,
                            prior_dof=cpu_prior.DOF,
                            joint=joint)
    measured = campaign_drift(frame, ly)
    if measured is not None:
        sd, model.drift, model.drift_runs = measured
        model.new_campaign_sd = max(NEW_CAMPAIGN_SD, sd)
    return model


def _choose_joint(frame: Columns, ly: np.ndarray, metric: str, names: tuple[str, ...], trip: RoundTrip,
                  terms: list[Term], core: _Core, setting: np.ndarray | None, fixed: np.ndarray | None = None
                  ) -> tuple[list[Term], _Core] | None:
    """The fit with the ``JOINT_STAGES`` that two settings or more pin (``MIN_PINNING_SETTINGS``) and the ``fixed``
    queues (the client CPU at its calibrated cost: log limits per row) holding each run back together, where its
    held-out squared log error (leave one setting out) is less than the least stage's alone; else None.
    The main effects keep their signs; a joint fit in which a stage pins fewer settings is refused."""
    import numpy as np

    customers = customers_of(frame)
    if customers is None or setting is None or not np.isfinite(customers).all():
        return None
    logc = log_capacities(frame, metric, names, trip)
    x = _design(frame, terms)

    def pinned(c: _Core, xs: np.ndarray) -> np.ndarray:
        return np.array([n in JOINT_STAGES and bool(np.isfinite(c.log_eff[i])) and not c.assumed[i]
                         and _settings_bound(i, c, logc, xs, setting) >= MIN_PINNING_SETTINGS
                         for i, n in enumerate(names)])

    mask = pinned(core, x)
    if _queues(mask, fixed) < 2 or not mask.any():
        return None
    optional = np.array([n in OP_STAGES for n in names])
    prior = byte_prior(metric)
    alone, _ = out_of_setting(logc, x, ly, setting, optional, prior, terms=terms)
    together, _ = out_of_setting(logc, x, ly, setting, optional, prior, terms=terms, joint=mask,
                                 customers=customers, fixed=fixed)
    ok = np.isfinite(alone) & np.isfinite(together)
    if not ok.any() or float(np.mean(together[ok] ** 2)) >= float(np.mean(alone[ok] ** 2)):
        return None
    cols, found = _keep_signs(terms, x, lambda xs: (_joint_refit(_fit_best(logc, xs, ly, optional, prior), logc,
                                                                 xs, ly, customers, mask, fixed), math.nan, trip))
    assert found is not None
    joint = found[0]
    if joint.joint is None or (pinned(joint, x[:, cols]) < joint.joint).any():
        return None
    return [terms[c] for c in cols], joint


def _joint_choice(frame: pd.DataFrame, ly: np.ndarray, metric: str, names: tuple[str, ...], trip: RoundTrip,
                  terms: list[Term], core: _Core, setting: np.ndarray | None, with_prior: bool,
                  fitted: Callable[[tuple[str, ...], tuple[str, ...]], tuple[tuple[str, ...], list[Term], _Core]]
                  ) -> tuple[tuple[str, ...], list[Term], _Core, tuple[float, np.ndarray] | None]:
    """The stages, main effects and fit after ``_choose_joint``, and where the client CPU at its calibrated cost is
    one of the stages that hold the runs back together, its log efficiency and log limits (1 × rows).

    A client CPU stage the model takes at its calibrated cost (``_calibrated_cpu``: added, or raised from one
    setting's figure) is a queue of known demand, so it joins the links that two settings pin in the closed
    network; a stage that one setting bound is left out of that fit, as the calibrated cost replaces it. That
    network tried first, then the pinned links alone; each kept only where it predicts held-out settings better
    than the least stage alone. Without it a link upgrade ran up to the calibrated CPU's full capacity:
    link_cpu_600's writes, link x2 answered 116.6 MB/s where the lab wrote 84.6."""
    logc = log_capacities(frame, metric, names, trip)
    cal_names, cal_eff, cal_assumed, _ = _calibrated_cpu(frame, metric, names, core, logc, _design(frame, terms),
                                                         setting, with_prior)
    if "client CPU" in cal_names and cal_assumed[cal_names.index("client CPU")]:
        eff = cal_eff[cal_names.index("client CPU")]
        base = (names, terms, core) if with_prior else fitted(tuple(n for n in names if n != "client CPU"),
                                                              ("client CPU",))
        row = log_capacities(frame, metric, ("client CPU",)) + eff
        found = _choose_joint(frame, ly, metric, base[0], trip, base[1], base[2], setting, row)
        if found is not None:
            return base[0], found[0], found[1], (eff, row)
    found = _choose_joint(frame, ly, metric, names, trip, terms, core, setting)
    return (names, terms, core, None) if found is None else (names, found[0], found[1], None)


def _calibrated_cpu(frame: Columns, metric: str, names: tuple[str, ...], core: _Core, logc: np.ndarray,
                    x: np.ndarray, setting: np.ndarray | None, add: bool
                    ) -> tuple[tuple[str, ...], list[float], list[bool], tuple[str, ...]]:
    """The fitted stages with the client CPU stage at its calibrated cost (``cpu_prior``) where no two settings
    pin it: added (``add``: the fit has none), never so slow that it binds a training run; or, where it bound
    fewer than ``MIN_PINNING_SETTINGS`` settings at a cost above the calibrated one, raised to it (the data's
    figure is a bound from below). Returns the stages, their log efficiencies, which are assumed, and the stages
    whose answers carry the calibration's spread (``prior_q``): the calibrated one, and one that two settings
    pinned but too few to have a held-out quantile of its own (``MIN_CALIBRATION_SETTINGS``). Two settings fit its
    efficiency, and each held out from the other says how well one CPU-starved setting answers another, not how
    far the efficiency moves on the way to today's CPU: iops_disk_pinned's writes, pinned at 3% and 4% of the
    machine with held-out misses of 4-12%, were answered at 12% 20-24% low, inside the calibration's spread
    (x/÷ 1.41 at 90%) but not the pooled quantile's (x/÷ 1.13)."""
    import numpy as np

    log_eff, assumed = [float(v) for v in core.log_eff], [bool(v) for v in core.assumed]
    if add:
        others = np.min(logc + core.log_eff[:, None], axis=0)
        cap = log_capacities(frame, metric, ("client CPU",))[0]
        log_eff.append(max(cpu_prior.log_efficiency(frame, metric), float(np.max(others - cap)) + 1e-9))
        return (*names, "client CPU"), log_eff, [*assumed, True], ("client CPU",)
    if "client CPU" in names and cpu_prior.applies(frame, metric):
        i = names.index("client CPU")
        calibrated = cpu_prior.log_efficiency(frame, metric)
        pinning = _settings_bound(i, core, logc, x, setting)
        if pinning < MIN_PINNING_SETTINGS and calibrated > log_eff[i]:
            log_eff[i], assumed[i] = calibrated, True
            return names, log_eff, assumed, ("client CPU",)
        if pinning < MIN_CALIBRATION_SETTINGS:
            return names, log_eff, assumed, ("client CPU",)
    return names, log_eff, assumed, ()


def _signed_fit(frame: pd.DataFrame, ly: np.ndarray, metric: str, names: tuple[str, ...], trip: RoundTrip,
                schema: Schema, log_sizes: bool, assumed: tuple[str, ...] = ()) -> tuple[list[Term], _Core]:
    """The fit of a model with stages ``names`` whose resources' main effects keep their sign (``RESOURCE_SIGN``);
    the inputs of the ``assumed`` stages (not fitted) are no main effects either."""
    import numpy as np

    logc = log_capacities(frame, metric, names, trip)
    optional = np.array([n in OP_STAGES for n in names])
    terms = main_effect_terms(_schema_without(schema, (*names, *assumed)), log_sizes=log_sizes)
    cols, found = _keep_signs(terms, _design(frame, terms),
                              lambda x: (_fit_best(logc, x, ly, optional, byte_prior(metric)), math.nan, trip))
    assert found is not None
    return [terms[c] for c in cols], found[0]


# A fit as the sign check takes it: (the fit, its squared error, its round trip's service), or None where none is
# possible.
_Found = tuple[_Core, float, RoundTrip]


def _design(frame: Columns, terms: Sequence[Term]) -> np.ndarray:
    """The main effects' design matrix (rows x terms; no columns where there are no terms)."""
    import numpy as np

    return design_matrix(frame, terms) if terms else np.zeros((n_rows(frame), 0))


def _keep_signs(terms: Sequence[Term], x: np.ndarray, fit: Callable[[np.ndarray], _Found | None]
                ) -> tuple[list[int], _Found | None]:
    """``fit`` (design matrix -> a fit) on the columns of ``x`` (one a term) with the main effect furthest on the
    wrong side of its resource's sign left out, again, until none is: the columns kept and the last fit (None
    where ``fit`` gave none). The stage selection, the final fit and every held-out fold keep signs by it."""
    cols = list(range(x.shape[1]))
    while True:
        found = fit(x[:, cols])
        if found is None:
            return cols, None
        wrong = _wrong_sign([terms[c] for c in cols], found[0].coef)
        if wrong is None:
            return cols, found
        del cols[wrong]


def _settings_bound(stage: int, core: _Core, logc: np.ndarray, x: np.ndarray, setting: np.ndarray | None) -> int:
    """How many hardware settings have a training run bound at ``stage`` (runs, where the frame names no
    settings)."""
    import numpy as np

    _, bind = _predict_core(core, logc, x)
    where = setting if setting is not None else np.arange(len(bind))
    return len(np.unique(where[bind == stage]))


def campaign_drift(frame: Columns, ly: np.ndarray) -> tuple[float, float, int] | None:
    """How far a campaign moves on this cluster, from the runs a plan measured again at its end
    (the rows' ``again_of`` names the campaign each repeats): (the campaign-to-campaign log SD, the mean log change, runs), or
    None where the frame holds no such runs.

    Each run measured twice gives d, the difference of its two means of k trials: Var d = 2 σ_c² + 2 σ_w² / k,
    σ_w² the trials' variance about their run's mean (both campaigns pooled). So σ_c² = mean(d²)/2 − σ_w²/k,
    never below 0 (Searle, Casella and McCulloch 1992, ch. 3: variance components from group means). The
    interval's another-campaign term takes it, with the lab's constant as its floor (``NEW_CAMPAIGN_SD``):
    a quiet lab's drift measured on one cluster is the least any campaign drifts. All runs of a campaign share
    its shift, so one plan gives one draw of it: the estimate is what this cluster showed over one plan, not a
    variance known well, and the floor stays."""
    import numpy as np
    import pandas as pd

    if "campaign" not in frame or "again_of" not in frame or GROUP not in frame:
        return None
    camp = [str(c) for c in strings(frame, "campaign")]
    firsts = dict(zip(camp, (None if pd.isna(a) or a == "" else str(a) for a in frame["again_of"])))
    pairs = {c: f for c, f in firsts.items() if f is not None and f in firsts}
    if not pairs:
        return None
    table = pd.DataFrame({"campaign": camp, "run": np.asarray(frame[GROUP]), "ly": ly})
    means = table.groupby(["campaign", "run"])["ly"].agg(["mean", "var", "size"])
    d: list[float] = []
    for again, first in pairs.items():
        for run in means.loc[again].index.intersection(means.loc[first].index):
            d.append(float(means.loc[(again, run), "mean"] - means.loc[(first, run), "mean"]))
    if not d:
        return None
    both = means.loc[list(pairs) + list(pairs.values())]
    dof = float((both["size"] - 1).sum())
    within = float(((both["size"] - 1) * both["var"].fillna(0)).sum() / dof) if dof > 0 else 0.0
    k = float(both["size"].mean())
    diffs = np.asarray(d)
    between = max(0.0, float(np.mean(diffs ** 2)) / 2 - within / k)
    return math.sqrt(between), float(diffs.mean()), len(d)


def byte_prior(metric: str) -> float | None:
    """The log efficiency a byte stage takes where no byte stage binds a training run: for a small-file rate
    (capacities in files/s, as the metric) a link or disk carries at most its rate, 0; for a byte metric
    (stored in kB/s against MB/s capacities) None: the others' mean, as before."""
    return 0.0 if metric in _OP_METRICS else None


@dataclass(frozen=True)
class _Choice:
    stages: tuple[str, ...]
    trip: RoundTrip
    error: float  # held-out mean squared log error (in-sample where the frame names no settings)


def _wrong_sign(terms: Sequence[Term], coef: np.ndarray) -> int | None:
    """Index of the main effect of a measured resource furthest on the wrong side of zero (``RESOURCE_SIGN``), or
    None where every one has its sign."""
    worst, at = 0.0, None
    for i, t in enumerate(terms):
        sign = RESOURCE_SIGN.get(t.feature) if t.kind in ("num", "log2") else None
        if sign is not None and sign * float(coef[i]) < worst:
            worst, at = sign * float(coef[i]), i
    return at


def round_trip_grid(frame: Columns) -> list[RoundTrip]:
    """The round-trip services a fit tries: ``SERVICE_GRID_S``, each with every ``QUEUED_GRID`` share where the
    runs had two or more numbers of threads a client, else with none queued."""
    import numpy as np

    shares: tuple[float, ...] = (0.0,)
    if "threads" in frame and "clients" in frame:
        per_client = numbers(frame, "threads") / np.maximum(numbers(frame, "clients"), 1)
        if len(np.unique(per_client[np.isfinite(per_client)])) >= 2:
            shares = QUEUED_GRID
    return [RoundTrip(s, q) for s in SERVICE_GRID_S for q in shares if s > 0 or q == 0]


def _round_trips_too_fast(names: Sequence[str], core: _Core) -> bool:
    """Whether a fit gives the round-trip stage more than one operation per round trip and thread."""
    return "round trips" in names and core.log_eff[list(names).index("round trips")] > MAX_ROUND_TRIP_LOG_EFF + 1e-9


def _schema_without(schema: Schema, names: Sequence[str]) -> Schema:
    """The main effects of a model with stages ``names``: a stage's input acts through it only (the round trips'
    threads too: they are the customers of its closed network)."""
    inputs = {OP_STAGE_INPUTS[n] for n in names if n in OP_STAGE_INPUTS}
    if "round trips" in names:
        inputs.add("threads")
    main = main_schema(schema)
    return Schema(main.metric, tuple(f for f in main.features if f.name not in inputs), main.dropped)


def _candidates(frame: Columns, metric: str, setting: np.ndarray | None, inputs: set[str]) -> list[str]:
    """The CPU and round-trip stages worth trying: each one's input is among the model's ``inputs`` (not held
    fixed by the design: a plan that varies links and disks leaves the CPU score to measurement noise,
    ``features.held_by_design``), in every run, and varied across the settings by at least a quarter. A metric
    that moves data needs ``MIN_CALIBRATION_SETTINGS`` settings (its link and disk stages are the rival); a stat
    or a listing, which has no other stage, two (a fold of a three-setting plan that holds one out)."""
    import numpy as np

    need = MIN_CALIBRATION_SETTINGS if has_payload(metric) else 2
    if setting is None or len(np.unique(setting)) < need:
        return []
    out: list[str] = []
    for name in OP_STAGES:
        col = OP_STAGE_INPUTS[name]
        if col not in frame or col not in inputs:
            continue
        v = numbers(frame, col)
        if not np.isfinite(v).all() or (v <= 0).any() or v.max() < MIN_SPREAD * v.min():
            continue
        if name == "round trips" and not ("threads" in frame and (metric in _OP_METRICS or "record_size" in frame)):
            continue
        out.append(name)
    return out


def _fit_best(logc: np.ndarray, x: np.ndarray, ly: np.ndarray, optional: np.ndarray,
              byte_prior: float | None = None) -> _Core:
    """``_fit_core`` from the raw bottleneck where every stage is a byte stage (as it always was), else from
    several starts (the CPU and round-trip capacities share no unit with the links'), keeping the fit with the
    least squared error; of fits within 1% of it, the one with the fewest stages binding (a stage that binds
    one setting alone fits it exactly, whatever the truth)."""
    import numpy as np

    if not optional.any():
        return _fit_core(logc, x, ly, optional=optional)
    byte = ~optional
    gap_byte = ly - np.min(logc[byte], axis=0) if byte.any() else np.zeros(len(ly))
    fits: list[tuple[float, int, _Core]] = []
    for q_byte in (1.0,) if byte_prior is not None else (1.0, 0.5):  # fixed byte stages: their start is moot
        for q in _STARTS:
            start = np.full(len(logc), float(np.quantile(gap_byte[np.isfinite(gap_byte)], q_byte))
                            if np.isfinite(gap_byte).any() else 0.0)
            for s in np.flatnonzero(optional):
                gap = ly - logc[s]
                start[s] = float(np.quantile(gap[np.isfinite(gap)], q)) if np.isfinite(gap).any() else np.inf
            core = _fit_core(logc, x, ly, start=start, optional=optional, byte_prior=byte_prior)
            pred, bind = _predict_core(core, logc, x)
            fits.append((float(np.sum((ly - pred) ** 2)), len(np.unique(bind)), core))
    least = min(f[0] for f in fits)
    close = [f for f in fits if f[0] <= least * 1.01 + 1e-12 * len(ly)]
    return min(close, key=lambda f: (f[1], f[0]))[2]


def _evaluate(frame: pd.DataFrame, ly: np.ndarray, schema: Schema, metric: str, names: tuple[str, ...],
              setting: np.ndarray | None, log_sizes: bool) -> _Choice:
    """A model with stages ``names``: its service time (where it has round trips; one that would carry more than
    one operation per round trip is refused), the main effects that keep their resource's sign, and its held-out
    error (inf where no service time is possible)."""
    import numpy as np

    optional = np.array([n in OP_STAGES for n in names])
    grid = round_trip_grid(frame) if "round trips" in names else (RoundTrip(),)

    def least(x: np.ndarray) -> _Found | None:
        """The fit at the round-trip service (time and queued share) with the least squared error (one that carries
        more than one operation per round trip refused): (its fit, the error, the service)."""
        best: _Found | None = None
        for trip in grid:
            logc = log_capacities(frame, metric, names, trip)
            core = _fit_best(logc, x, ly, optional, byte_prior(metric))
            if _round_trips_too_fast(names, core):
                continue
            pred, _ = _predict_core(core, logc, x)
            sse = float(np.sum((ly - pred) ** 2))
            if best is None or sse < best[1] - 1e-12:
                best = (core, sse, trip)
        return best

    terms = main_effect_terms(_schema_without(schema, names), log_sizes=log_sizes)
    x = _design(frame, terms)
    cols, found = _keep_signs(terms, x, least)
    terms, x = [terms[c] for c in cols], x[:, cols]
    if found is None:
        return _Choice(names, RoundTrip(), math.inf)
    core, sse, trip = found
    if setting is None:
        return _Choice(names, trip, sse / len(ly))
    # each fold starts where the fit on all settings ended: many such passes choose the stages
    resid, _ = out_of_setting(log_capacities(frame, metric, names, trip), x, ly, setting, optional,
                              byte_prior(metric), start=core.log_eff if optional.any() else None, terms=terms)
    ok = np.isfinite(resid)
    return _Choice(names, trip, float(np.mean(resid[ok] ** 2)) if ok.any() else math.inf)


def alone_moved(frame: pd.DataFrame, setting: np.ndarray, inputs: set[str]) -> np.ndarray:
    """Which rows belong to a setting that alone moved one of ``inputs`` (the inputs of the model's CPU and
    round-trip stages and of its main effects): the design held it fixed over every other setting
    (``features.held_by_design``) and not over all of them.

    The fold without such a setting cannot fit what the model fits from it: over the other settings the input moves
    by measurement noise alone, so its stage is a constant ceiling free to cut whichever runs the noise put highest,
    and its slope is fitted on that noise. Held out at the setting, either is extrapolated far past what the fold
    saw (without a plan's one delay setting, a round-trip stage fitted as a ceiling over today's runs answered it
    77 times too low, and a round trip's slope over 0.026-0.041 ms answered 4.3 ms e^12 times too low). That miss
    is the error of another model, one without the input, not of the model an answer comes from, and its
    residuals calibrate no interval (conformal prediction asks that each residual come from the same fitting
    procedure as the answer: Vovk, Gammerman and Shafer 2005, ch. 2). An answer that moves such an input rests on
    one setting: predict says so where it goes beyond what was measured."""
    import numpy as np

    out = np.zeros(len(setting), dtype=bool)
    everywhere = set(held_by_design(frame))
    for s in np.unique(setting):
        rest = setting != s
        if (set(held_by_design(frame[rest])) - everywhere) & inputs:
            out[~rest] = True
    return out


def runs_of(frame: Columns) -> np.ndarray | None:
    """Each row's run (its configuration), or None where the frame does not say."""
    import numpy as np

    return np.asarray(frame[GROUP]) if GROUP in frame else None


def out_of_setting(logc: np.ndarray, x: np.ndarray, ly: np.ndarray, setting: np.ndarray,
                   optional: np.ndarray | None = None, prior: float | None = None, start: np.ndarray | None = None,
                   terms: Sequence[Term] = (), joint: np.ndarray | None = None, customers: np.ndarray | None = None,
                   fixed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every run's log residual and binding stage from a fit without its setting (NaN where the rest cannot
    be fitted). Each fold starts from ``start`` (log efficiencies) where given, as a single alternating fit;
    else afresh (``_fit_best``), as the intervals' pass does. Given the main effects' ``terms`` (the columns of
    ``x``), each fold keeps their resources' signs as the fit on all settings does (``_keep_signs``): the
    held-out error is that of the model as it is fitted, not of one free to extrapolate a wrong sign (a round
    trip's noise over 0.026-0.036 ms, free, answered 4.2 ms with writes 3.9 times those measured). With ``joint``
    stages and the rows' ``customers`` each fold is fitted and answers as a model of stages that hold a run back
    together (``_joint_refit``), with the ``fixed`` queues (log limits per row) among them."""
    import numpy as np

    optional = np.zeros(len(logc), dtype=bool) if optional is None else optional
    joint_mask = joint if joint is not None and _queues(joint, fixed) >= 2 else np.zeros(len(logc), dtype=bool)
    together = customers if joint_mask.any() else None
    resid = np.full(len(ly), np.nan)
    bound = np.zeros(len(ly), dtype=int)
    for s in np.unique(setting):
        test = setting == s
        if test.all():
            continue
        def fold(xs: np.ndarray, test: np.ndarray = test) -> _Found:
            core = (_fit_core(logc[:, ~test], xs[~test], ly[~test], start=np.where(np.isfinite(start), start, 1e6),
                              optional=optional, byte_prior=prior) if start is not None
                    else _fit_best(logc[:, ~test], xs[~test], ly[~test], optional, prior))
            if together is not None:
                core = _joint_refit(core, logc[:, ~test], xs[~test], ly[~test], together[~test], joint_mask,
                                    None if fixed is None else fixed[:, ~test])
            return core, math.nan, RoundTrip()  # the service is in logc already

        cols, found = _keep_signs(terms, x, fold) if terms else (list(range(x.shape[1])), fold(x))
        assert found is not None
        pred, bound[test] = _predict_core(found[0], logc[:, test], x[test][:, cols],
                                          None if together is None else together[test],
                                          None if fixed is None else fixed[:, test])
        resid[test] = ly[test] - pred
    return resid, bound

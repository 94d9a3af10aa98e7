"""A tuning search: from Gluster's defaults, measure where a gain may be, combine what helped, and confirm the best
against the defaults on fresh trials.

A plan of design type ``search`` names the volume options to search (factors with several levels, each one of
``gluster.tunables``) and fixes everything else (the workload, the layout). Its campaign runs in three rounds,
each candidate measured with the protocol's trials (at least 3):

1. **Screening**: the defaults, and each single change from them (one option at one other level). The
   defaults, every comparison's reference, are then measured again with ``MORE`` times the trials
   (``<name>.more``), and so is each change that looks faster but is not yet clear of their noise (racing:
   trials go where a gain may be, none to a change that measured slower). A default whose figure is bimodal
   (Gluster's read policy puts two clients' files on one server in some trials) needs them: in 3 trials it
   can look steady, or its spread can hide a gain.
2. **Combination**: every change that beat the defaults clearly (Welch's one-sided test at ``ALPHA``, Holm-
   corrected over the changes screened, and at least ``FLAT`` of the throughput) set together; with two or
   more, also the combination less each one (an interaction that hurts shows there).
3. **Confirmation**, a campaign of its own (``<name>.confirm``): the best candidate by its mean, and the defaults,
   measured again side by side, ``MORE`` times the protocol's trials each, in an order drawn from the search's
   name; unless the gain is already beyond doubt (one-sided p below ``EARLY``, 0.001: Haybittle-Peto) or below
   ``FLAT``, the design's further looks (``confirm``, 2 by default: ``<name>.confirm2``, ``.confirm3``, ...),
   each with as many trials again, each in the order opposite to the one before (A B, B A, A B, ...: a drift
   through the session falls on both arms alike), all of them measured and judged once, pooled with the first;
   the strict first boundary keeps the two analyses at about the level of one
   (``benchmarks/search_coverage.py --looks``). The gain is read from these trials only: the screening's best
   is, by being picked, luckier than it will be again (the winner's curse), so its own trials would overstate
   the gain.

The run, not the trial, is the unit of a verdict: trials of one run share its volume and placement draw, and the
defaults, measured in every round, show how far a run moves from the last (``stats.drift``: the session's drift,
estimated from every configuration the search measured twice or more). The answer is one of three:

- **set**: the confirmed gain's interval (``LEVEL``, runs and drift counted) is clear of 1;
- **keep the defaults**: no candidate can gain ``MARGIN`` or more: the upper end of every candidate's interval
  against the defaults, over all its trials, is below ``1 + MARGIN`` (each one a test; all must pass, so no
  correction is needed);
- **undecided**: neither. A test that found no gain never says "keep".

Why not expected improvement over a fitted surrogate: with 3 trials a candidate and at most 40 candidates, a
surrogate over a dozen options has fewer points than parameters for most of the search; screening one change at
a time costs one run per level, tests each with its own trials, and says plainly which option earned its place.
Interactions beyond the winners' combination are not searched. Each round's decisions are written to the
store's design log before its runs start; the choices follow from the stored trials alone, so an interrupted
search resumes with the same rounds, and no configuration runs twice.

References
----------
Holm, S. (1979), "A simple sequentially rejective multiple test procedure", *Scand. J. Statist.* 6, 65–70.
Welch, B. L. (1947), "The generalization of 'Student's' problem when several different population variances are
involved", *Biometrika* 34, 28–35.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..bench.metrics import FILES_PER_S, UNITS, first_metric
from ..gluster.tunables import TUNABLES
from ..gluster.volume import VolumeConfig
from ..plan.factors import Level, RunSpec, realize
from ..plan.file import Expanded, PlanFile, check_buildable
from ..plan.search import MAX_BUDGET, check_search_plan, screening_points, searched
from ..remote.executor import Executor
from ..store.identity import SearchRound, SearchStep, StoredCampaign
from ..store.store import Store
from ..dataset import trial_frame
from .collector import Collector
from .progress import CampaignSummary, PlanReporter
from ..stats.drift import Drift, drift_ratio, session_drift
from ..stats.power import BETWEEN_RUN_SD
from ..stats.ratios import EQUIVALENCE_MARGIN, Comparison, welch_ratio
from ..stats.ratios import holm as holm_rejects
from ..store.identity import Purpose
from .records import ensure_campaign, order_coin, runs_done

ALPHA = 0.10  # one-sided, before Holm's correction over the screened changes
FLAT = 0.02  # a change smaller than this share of the throughput is no reason to set an option
LEVEL = 0.90  # the confirmed gain's interval
MORE = 2  # racing and confirmation: this many times the protocol's trials
# The confirmation stops at its first look only for a gain this clear (one-sided p), else measures its further
# looks and judges once over all: a Haybittle-Peto boundary, so the two analyses keep the false advice at about
# the level of one (at the first look's 90% interval it rose to 7-9% where runs drift 3-10%,
# benchmarks/search_coverage.py --looks).
EARLY = 0.001
MARGIN = EQUIVALENCE_MARGIN  # "keep the defaults" only where no candidate can gain this much
SET, KEEP, UNDECIDED = "set", "keep", "undecided"


def compare(defaults: Sequence[float], other: Sequence[float], level: float = LEVEL) -> Comparison:
    """A candidate against the defaults, its trials as independent draws (``stats.ratios.welch_ratio``)."""
    return welch_ratio(defaults, other, level)


def holm(pvalues: Mapping[str, float], alpha: float = ALPHA, family: int | None = None) -> set[str]:
    """Holm's step-down rejections at the search's level (``stats.ratios.holm``)."""
    return holm_rejects(pvalues, alpha, family)


@dataclass(frozen=True)
class Candidate:
    """One configuration the search measured, over every trial of it in every round (screening, more trials,
    combination, confirmation): its mean, and its worst and best trial. Where the figure depends on a draw (the
    read policy's placement of files on servers), the worst trial says what an unlucky day gives."""

    changes: str  # its options away from the defaults ("defaults" for none)
    trials: int
    mean: float
    worst: float
    best: float


def candidates(trials: Mapping[str, Sequence[float]], labels: Mapping[str, str]) -> list[Candidate]:
    """Each configuration with trials (config hash -> the metric's values; ``labels``: hash -> its changes),
    fastest mean first. Every metric a search judges is a rate: the worst trial is the lowest."""
    out = [Candidate(labels.get(h, h[:12]), len(v), sum(v) / len(v), min(v), max(v))
           for h, v in trials.items() if v]
    return sorted(out, key=lambda c: -c.mean)


@dataclass
class SearchResult:
    """What a search found: the options to set, the confirmed gain over the defaults, and what it cost."""

    metric: str
    defaults: dict[str, Level]
    best: dict[str, Level]  # the options only
    gain: Comparison | None  # from the confirmation's runs, drift counted; None while it has not run
    runs: int  # candidates measured (screening, combination, confirmation)
    decisions: list[str] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)  # every configuration over all its trials
    ceiling: float | None = None  # the highest upper end of any candidate's interval against the defaults
    drift: Drift | None = None  # the session's run-to-run shift the intervals count

    @property
    def verdict(self) -> str:
        """``set``, ``keep`` or ``undecided`` (module docstring)."""
        if self.confirmed:
            return SET
        return KEEP if self.ceiling is not None and self.ceiling < 1 + MARGIN else UNDECIDED

    @property
    def changed(self) -> dict[str, Level]:
        """The best candidate's options away from the defaults (confirmed or not)."""
        return {n: v for n, v in self.best.items() if v != self.defaults.get(n)}

    @property
    def confirmed(self) -> bool:
        """The best candidate's gain is clear of the defaults on the confirmation's trials: advice to set it."""
        return bool(self.changed) and self.gain is not None and self.gain.low > 1

    def commands(self, volume: str = "VOLNAME") -> list[str]:
        return [c for n, v in self.changed.items() for c in TUNABLES[n].commands(volume, v)] \
            if self.confirmed else []

    def to_json(self) -> dict[str, Any]:
        g = self.gain
        return {"metric": self.metric, "best": self.changed, "confirmed": self.confirmed, "runs": self.runs,
                "verdict": self.verdict, "ceiling": self.ceiling, "p_gain": g.p_gain if g else None,
                "drift_sd": self.drift.sd if self.drift else None, "decisions": self.decisions,
                "gain": g.ratio if g else None, "ci_low": g.low if g else None, "ci_high": g.high if g else None,
                "worse": bool(g and g.high < 1), "commands": self.commands(),
                "safety": {n: TUNABLES[n].note for n in self.changed},
                "candidates": [asdict(c) for c in self.candidates]}


def _trials(store: Store, campaign: str, metric: str) -> dict[str, list[float]]:
    frame = trial_frame(store, campaign)
    if frame.empty or metric not in frame:
        return {}
    return {str(k): [float(x) for x in g.dropna()] for k, g in frame.groupby("config_hash", observed=True)[metric]}


def _realize(plan: PlanFile, point: dict[str, Level], executor: Executor, source: str = "plan") -> RunSpec:
    run = realize(point, plan.workload, plan.volume_options)
    check_buildable(run, executor.cluster, source)
    return run


def combination(options: Mapping[str, list[Level]], screened: Mapping[str, tuple[Level, Comparison]],
                defaults: dict[str, Level]) -> tuple[list[dict[str, Level]], list[str]]:
    """Round 2's points: the clear winners set together, and with two or more, that set less each one. Holm's
    family is every single change the screening tested (each option's every other level)."""
    family = sum(len(v) - 1 for v in options.values())
    clear = holm({n: c.p_gain for n, (_, c) in screened.items()}, ALPHA, family)
    winners = {n for n in clear if screened[n][1].ratio >= 1 + FLAT}
    why = [f"{n}={screened[n][0]}: x{screened[n][1].ratio:.2f} [{screened[n][1].low:.2f}, "
           f"{screened[n][1].high:.2f}], p={screened[n][1].p_gain:.3f}" for n in sorted(winners)]
    if len(winners) < 2:
        return [], why
    together = {**defaults, **{n: screened[n][0] for n in winners}}
    return [together, *({**together, n: defaults[n]} for n in sorted(winners))], why


def run_search(executor: Executor, plan: PlanFile, expanded: Expanded, store: Store, *, name: str,
               fail_fast: bool, reporter: PlanReporter, plan_volumes: list[VolumeConfig],
               setting: tuple[tuple[str, str], ...] = ()) -> list[CampaignSummary]:
    """Run a search plan's rounds (module docstring) and report what it found; resumes from the store."""
    check_search_plan(plan.factors, plan.protocol.repetitions, plan.design.budget)
    metric = plan.design.metric or first_metric(plan.workload.tests)
    options = searched(plan.factors)
    points = screening_points(plan.factors)
    defaults_point = points[0]
    screening = [_realize(plan, p, executor) for p in points]
    summaries: list[CampaignSummary] = []

    def measure(step: SearchStep, runs: list[RunSpec], round_: int, reasons: list[str], trials: int = 0) -> None:
        campaign = step_campaign(step)
        cid = ensure_campaign(store, executor.cluster, plan, campaign, purpose=Purpose.SEARCH, setting=setting,
                              step=step)
        logged = {e.config_hash for e in store.design_log(cid) if e.round == round_}
        new: list[tuple[str | None, str, dict[str, Any]]] = [
            (r.config_hash, why, {}) for r, why in zip(runs, reasons) if r.config_hash not in logged]
        if new:
            store.add_design_log(cid, round_, new)  # the decision before its runs
        part = Expanded(runs)
        used = plan if not trials else plan.model_copy(update={"protocol": plan.protocol.model_copy(
            update={"repetitions": trials})})
        with reporter.campaign(campaign, len(runs), runs_done(store, campaign, part), store.where) as rep:
            summaries.append(Collector(executor, used, part, store, campaign=campaign, fail_fast=fail_fast,
                                       reporter=rep, plan_volumes=plan_volumes, setting=setting,
                                       purpose=Purpose.SEARCH, step=step).run())
        reporter.finished(summaries[-1])

    more_trials = MORE * plan.protocol.repetitions
    budget = plan.design.budget or MAX_BUDGET
    screen, more_step = SearchStep(name, SearchRound.SCREENING), SearchStep(name, SearchRound.MORE)
    measure(screen, screening, 0, ["defaults", *(f"screening: {_changes(p, defaults_point)}" for p in points[1:])])
    trials = _pooled(store, name, metric)
    if len(trials.get(screening[0].config_hash, [])) < 2:
        reporter.note(f"search: the defaults have fewer than 2 {metric} trials; nothing to compare")
        return summaries
    # The defaults are every comparison's reference: they get more trials first (3 cannot show a spread such as
    # a read policy's, which put two files on one server in some trials and not in others).
    measure(more_step, [screening[0]], 1, ["defaults, more trials: the reference of every comparison"],
            trials=more_trials)
    trials = _pooled(store, name, metric)
    # Racing: a change that looks like a gain but is not yet clear of the defaults' noise gets more trials,
    # within the budget; one whose mean is below the defaults' gets none.
    screened_now = _screened(screening, points, trials)
    promising = [i for i, c in screened_now.items() if c.ratio >= 1 + FLAT and c.p_gain > ALPHA / len(points[1:])]
    room = budget - len(screening) - 2 - 1  # the confirmation's two runs, and the defaults' own more trials
    if promising and room > 0:
        chosen = sorted(promising, key=lambda i: -screened_now[i].ratio)[:room]
        measure(more_step, [screening[0], *(screening[i] for i in chosen)], 1, [
            "defaults, more trials: the reference of every comparison", *(
            f"more trials: {_changes(points[i], defaults_point)} looked faster, not yet clear" for i in chosen)],
            trials=more_trials)
        trials = _pooled(store, name, metric)
    screened: dict[str, tuple[Level, Comparison]] = {}
    for i, c in _screened(screening, points, trials).items():
        (option,) = [n for n in options if points[i][n] != defaults_point[n]]
        if option not in screened or c.ratio > screened[option][1].ratio:
            screened[option] = (points[i][option], c)
    combos, why = combination(options, screened, defaults_point)
    reporter.note("search: clear gains in the screening: " + ("; ".join(why) if why else "none"))
    spent = len(screening) + sum(len(store.runs(c.id)) for c in _rounds(store.search_campaigns(name),
                                                                         SearchRound.MORE))
    combos = combos[:max(budget - spent - 2, 0)]
    combo_runs = [_realize(plan, p, executor) for p in combos]
    if combo_runs:
        measure(screen, combo_runs, 2, ["the clear gains together", *(f"without {n}" for n in sorted(
            n for n in options if combos[0][n] != defaults_point[n]))])
        trials = _pooled(store, name, metric)
    base = trials[screening[0].config_hash]
    measured = {r.config_hash: (p, trials.get(r.config_hash, [])) for r, p in
                zip([*screening, *combo_runs], [*points, *combos])}
    best_hash = max((h for h, (_, t) in measured.items() if len(t) >= 2),
                    key=lambda h: sum(measured[h][1]) / len(measured[h][1]))
    best_point = measured[best_hash][0]
    if best_hash != screening[0].config_hash and compare(base, measured[best_hash][1]).p_gain > ALPHA:
        best_point = defaults_point  # the best by its mean is not clear of the defaults: keep them
    confirm = [screening[0]] if best_point == defaults_point else [screening[0], _realize(plan, best_point, executor)]
    reasons = ["defaults, measured again", *(["the best candidate, measured again"] if len(confirm) > 1 else [])]
    if len(confirm) > 1 and order_coin(name):  # the best candidate first: a coin drawn from the name
        confirm, reasons = confirm[::-1], reasons[::-1]
    measure(SearchStep(name, SearchRound.CONFIRM, 1), confirm, 3, reasons, trials=more_trials)
    result = search_result(store, name, plan, looks=1)  # the first look alone, also when resumed after more
    g = result.gain
    spent = result.runs
    further = further_looks(confirm, g, plan.design.confirm, budget - spent)
    for k, order in further:
        measure(SearchStep(name, SearchRound.CONFIRM, k), order, 2 + k, [
            f"{'defaults' if r is screening[0] else 'the best candidate'}, confirmation not yet clear: look {k}"
            for r in order], trials=more_trials)
    if further:
        result = search_result(store, name, plan)
    for line in candidate_lines(result):
        reporter.note(line)
    reporter.note(result_line(result))
    return summaries


def further_looks(arms: Sequence[RunSpec], gain: Comparison | None, looks: int, room: int
                  ) -> list[tuple[int, list[RunSpec]]]:
    """The confirmation's looks after its first, as (look, arms in order): none where the first look decided
    (its gain clear of 1 beyond the ``EARLY`` boundary, or below ``FLAT``) or confirmed the defaults alone; else
    looks 2 to ``looks``, as many as ``room`` runs hold (two a look), each in the order opposite to the one
    before. All are measured before the gain is judged again: no stopping at a look that happens to clear 1.

    References: Haybittle, J. L. (1971), *Br. J. Radiol.* 44, 793-797; Peto, R. et al. (1976), *Br. J. Cancer*
    34, 585-612 (an interim look stops only at p < 0.001, so the final test keeps its level)."""
    if len(arms) < 2 or gain is None or gain.ratio < 1 + FLAT or gain.p_gain < EARLY:
        return []
    last = min(looks, room // 2 + 1)
    return [(k, list(arms[::-1]) if k % 2 == 0 else list(arms)) for k in range(2, last + 1)]


def step_campaign(step: SearchStep) -> str:
    """The campaign name a search step is measured as, for people (the store keeps the step in columns):
    ``<name>``, ``<name>.more``, ``<name>.confirm``, ``<name>.confirm2``, ..."""
    if step.round is SearchRound.SCREENING:
        return step.search
    if step.round is SearchRound.MORE:
        return f"{step.search}.more"
    return f"{step.search}.confirm" if step.look == 1 else f"{step.search}.confirm{step.look}"


def _rounds(campaigns: Sequence[StoredCampaign], *rounds: SearchRound) -> list[StoredCampaign]:
    """Those of a search's campaigns (``Store.search_campaigns``) that hold the given rounds, in the rounds' order
    given and confirmations by look."""
    return sorted((c for c in campaigns if c.step is not None and c.step.round in rounds),
                  key=lambda c: (rounds.index(c.step.round), c.step.look) if c.step else (0, 0))


def _pooled(store: Store, name: str, metric: str) -> dict[str, list[float]]:
    """Each configuration's trials over the search's screening and more-trials rounds."""
    return _merge(_trials(store, c.name, metric) for c in _rounds(store.search_campaigns(name),
                                                                   SearchRound.SCREENING, SearchRound.MORE))


def _merge(parts: Iterable[Mapping[str, list[float]]]) -> dict[str, list[float]]:
    """Config hash -> trials, pooled over several campaigns' tables of them."""
    out: dict[str, list[float]] = {}
    for part in parts:
        for h, values in part.items():
            out.setdefault(h, []).extend(values)
    return out


def _screened(screening: Sequence[RunSpec], points: Sequence[Mapping[str, Level]],
              trials: Mapping[str, list[float]]) -> dict[int, Comparison]:
    """Each single change (by its index in the screening) against the defaults, where both have 2+ trials."""
    base = trials.get(screening[0].config_hash, [])
    out = {}
    for i in range(1, len(screening)):
        got = trials.get(screening[i].config_hash, [])
        if len(base) >= 2 and len(got) >= 2:
            out[i] = compare(base, got)
    return out


def _changes(point: Mapping[str, Level], defaults: Mapping[str, Level]) -> str:
    return ", ".join(f"{n}={v}" for n, v in point.items() if not _same(v, defaults.get(n))) or "defaults"


def search_result(store: Store, name: str, plan: PlanFile, looks: int | None = None) -> SearchResult:
    """The search's outcome from the store: its best options and the confirmed gain over the defaults (from the
    confirmation's first ``looks`` looks; all of them by default)."""
    metric = plan.design.metric or first_metric(plan.workload.tests)
    options = searched(plan.factors)
    last = looks or max(plan.design.confirm, 2)
    steps = store.search_campaigns(name)  # read once
    confirms = [c for c in _rounds(steps, SearchRound.CONFIRM) if c.step and c.step.look <= last]
    parts = [*_rounds(steps, SearchRound.SCREENING, SearchRound.MORE), *confirms]
    runs = {c.name: store.runs(c.id) for c in parts}
    features = {r.config_hash: dict(r.features) for rs in runs.values() for r in rs}
    decisions = [e.reason for c in parts for e in store.design_log(c.id)]
    per_campaign = {c.name: _trials(store, c.name, metric) for c in parts}  # each read once
    confirm = [r.config_hash for r in runs[confirms[0].name]] if confirms else []
    return judge_search(metric, options, per_campaign, features, [c.name for c in confirms], confirm,
                        sum(map(len, runs.values())), decisions)


def judge_search(metric: str, options: Mapping[str, list[Level]],
                 per_campaign: Mapping[str, Mapping[str, list[float]]], features: Mapping[str, Mapping[str, Any]],
                 looks: Sequence[str], confirmed_configs: Sequence[str], runs: int,
                 decisions: Sequence[str] = ()) -> SearchResult:
    """A search's answer from its trials (module docstring): ``per_campaign`` maps each campaign of the search to
    its configurations' trials (one run each), ``features`` a configuration to its options, ``looks`` names the
    confirmation's campaigns in order and ``confirmed_configs`` the configurations its first look registered.
    Pure: the store (``search_result``) and the shipped tables (``benchmarks/tune_verified.py``) both call it."""
    defaults = {n: v[0] for n, v in options.items()}
    labels = {h: _changes({n: v for n, v in f.items() if n in options}, defaults) for h, f in features.items()}
    result = SearchResult(metric, defaults, dict(defaults), None, runs, list(decisions),
                          candidates(_merge(per_campaign.values()), labels))
    # each campaign of a search measures a configuration in one run: its runs are its campaigns' trial lists
    by_run: dict[str, list[list[float]]] = {}
    for part in per_campaign.values():
        for h, values in part.items():
            if values:
                by_run.setdefault(h, []).append(list(values))
    drift = session_drift(by_run.values(), floor=BETWEEN_RUN_SD)
    result.drift = drift
    default_hash = next((h for h, label in labels.items() if label == "defaults"), None)
    if default_hash is None or default_hash not in by_run:
        return result
    uppers = [_ratio(by_run[default_hash], v, drift).high for h, v in by_run.items() if h != default_hash]
    result.ceiling = max(uppers) if uppers else None
    if not confirmed_configs:
        return result
    seen = [per_campaign.get(c, {}) for c in looks]
    is_default = [h == default_hash for h in confirmed_configs]
    if len(confirmed_configs) == 2 and is_default.count(True) == 1:
        best = confirmed_configs[is_default.index(False)]
        result.best = {n: features[best].get(n, defaults[n]) for n in options}
        arm_d = [list(look[default_hash]) for look in seen if look.get(default_hash)]
        arm_b = [list(look[best]) for look in seen if look.get(best)]
        if arm_d and arm_b:
            result.gain = _ratio(arm_d, arm_b, drift)
    elif seen and seen[0].get(confirmed_configs[0]):
        result.gain = Comparison(1.0, 1.0, 1.0, 1.0)  # the defaults are the answer: no change, no gain
    return result


def _ratio(defaults: list[list[float]], other: list[list[float]], drift: Drift) -> Comparison:
    """``other`` over the defaults, runs and the session's drift counted (``stats.drift.drift_ratio``); an arm
    with no spread of its own gives an interval as wide as can be."""
    try:
        rr = drift_ratio(defaults, other, drift, LEVEL)
    except ValueError:
        mean = [sum(map(sum, x)) / sum(map(len, x)) for x in (defaults, other)]
        return Comparison(mean[1] / mean[0], 0.0, math.inf, 0.5)
    return Comparison(rr.ratio, rr.low, rr.high, rr.p_above(1.0))


def _same(a: Any, b: Any) -> bool:
    return str(a).lower() == str(b).lower()


def candidate_lines(r: SearchResult) -> list[str]:
    """Every candidate over all its trials, fastest mean first: the evidence beside the one-line answer."""
    if not r.candidates:
        return []
    unit = FILES_PER_S if UNITS.get(r.metric) == FILES_PER_S else "MB/s"
    width = max(len(c.changes) for c in r.candidates)
    head = f"search: every candidate over all its trials ({r.metric} {unit}; mean, worst and best trial)"
    return [head, *(f"  {c.changes:<{width}}  {c.trials:>2} trials  mean {c.mean:,.1f}  worst {c.worst:,.1f}  "
                    f"best {c.best:,.1f}" for c in r.candidates)]


def result_line(r: SearchResult) -> str:
    """The search's answer in one line, with the commands and each option's trade-off."""
    head = f"search ({r.metric}, {r.runs} run(s))"
    g = r.gain
    gain = f"x{g.ratio:.2f} [{g.low:.2f}, {g.high:.2f}] ({LEVEL:.0%}, confirmation runs)" if g else "not measured"
    if r.verdict == SET:
        notes = "; ".join(f"{n}: {TUNABLES[n].note}" for n in r.changed)
        return (f"{head}: set {_changes(r.best, r.defaults)}; {r.metric} {gain} over the defaults; "
                + " && ".join(r.commands()) + f"; trade-offs: {notes}")
    tried = (f"{_changes(r.best, r.defaults)} measured {gain} over them" if r.changed and g else
             "no option beat them clearly in the screening")
    ceiling = f"x{r.ceiling:.2f}" if r.ceiling is not None else "unknown"
    if r.verdict == KEEP:
        return (f"{head}: keep Gluster's defaults; {tried}, and no candidate can gain {MARGIN:.0%} or more "
                f"(the highest any could: {ceiling})")
    return (f"{head}: undecided, so keep Gluster's defaults for now; {tried}, not clear of their noise, and a gain "
            f"up to {ceiling} is not ruled out (more trials would decide)")

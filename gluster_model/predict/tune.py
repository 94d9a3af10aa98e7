"""Configuration advice: which Gluster volume options to set for a workload, by how much that beats the defaults.

The study's second model, asked the administrator's question. For a workload (the model's other inputs, given
with ``--set`` or left at the data's reference configuration), every combination of the volume options the model
was fitted on (translators on/off, io-cache size at its measured levels) is predicted; the best inside the data
is then simplified: an option whose change from Gluster's default is not distinguishable from zero (its
contrast's interval holds 0, at the level Bonferroni-corrected over the option changes tested, or it is below
``FLAT``) goes back to the default, so the advice does not over-tune. Such an option is said not to matter only
when an equivalence test shows its every change within ``EQUIVALENCE`` of the throughput; otherwise it is
unclear, and worth measuring. The gain over the defaults comes with the interval of
the change itself, not of two predictions: from the model's covariance (linear models) or from bootstrap refits
of the trees on resampled configurations (boosted trees). The balance over several metrics moves only options
some metric's own advice moved.

Advice that keeps the defaults is also advice about what not to do: per metric, the one option change from the
recommendation that costs most (clear of zero, as above) is reported as the pitfall, with its predicted change.
It is what ``verify`` can measure when the recommendation is the defaults themselves, whose gain is nil by
construction.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..dataset import GLUSTER_DEFAULTS
from ..errors import GlmodelError
from ..gluster.tunables import TUNABLE_LIST, TUNABLES
from ..units import gluster_size
from .scenarios import parse_sets
from .whatif import judge, model_inputs, show_value
from ..model.features import SIZE_FEATURES, InputValue, Inputs, label
from ..model.learners import CHANGE_REFITS

if TYPE_CHECKING:
    from ..model.artifact import ModelFile
    from ..model.domain import Domain

# The volume options tune chooses (the study's six and those admins ask about), and the key each sets.
OPTION_KEYS: dict[str, str] = {t.name: t.option for t in TUNABLE_LIST}
MAX_CANDIDATES = 20_000  # configurations predicted per metric; the options' grid is far smaller in practice
# A change smaller than this share of the throughput is no reason to set an option: below what one benchmark
# run can confirm (run-to-run noise on the lab is several percent), and where a fitted model's interactions find
# such effects among many candidates, they are mostly the winner's curse.
FLAT = 0.02
REFITS = CHANGE_REFITS  # bootstrap refits for a boosting model's change interval (model.learners)
# The equivalence margin: an option "does not matter" only when its change is shown to lie within this share of
# the throughput either way (two one-sided tests: the change's interval at the corrected level inside the
# margin; Schuirmann 1987). Not significant is not the same: a change whose interval is wide is "unclear".
EQUIVALENCE = 0.05


@dataclass
class Choice:
    """One option set for the workload, predicted."""

    options: Inputs
    value: float  # MB/s
    low: float
    high: float
    basis: str  # measured, interpolated or extrapolated
    flags: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass
class Pitfall:
    """The single option change from the recommendation that costs the metric most, clear of zero."""

    option: str
    value: InputValue
    change: float  # MB/s against the recommendation (negative)
    low: float  # interval of that change (for boosted trees: bounded by the two prediction intervals)
    high: float

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


@dataclass
class MetricAdvice:
    metric: str  # one metric, or "balanced: write+read"
    model: str
    recommended: Choice
    defaults: Choice
    gain: float  # MB/s over the defaults (balanced: mean relative gain, %)
    gain_low: float  # interval of the change; NaN where the model gives none
    gain_high: float
    not_mattering: list[str]  # options shown equivalent (TOST): every change within ±EQUIVALENCE of the throughput
    pitfall: Pitfall | None = None  # the costliest single change away from the recommendation
    unclear: list[str] = field(default_factory=list)  # neither shown to matter nor shown equivalent: measure it
    contrasts: int = 0  # option changes tested (the Bonferroni correction's count)

    def changed(self) -> Inputs:
        """The options the recommendation sets away from the defaults (as predicted: a default size the data
        lack stands at its nearest measured one)."""
        return {n: v for n, v in self.recommended.options.items()
                if n in TUNABLES and v != self.defaults.options.get(n, GLUSTER_DEFAULTS.get(n))}

    def commands(self, volume: str) -> list[str]:
        """`gluster volume set` lines that turn Gluster's defaults into the recommendation."""
        return [c for n, v in self.changed().items() for c in TUNABLES[n].commands(volume, v)]

    def checks(self, volume: str) -> list[str]:
        """`gluster volume get` lines that show what the live volume has now, for each option to be set."""
        return [f"gluster volume get {volume} {k}" for n in self.changed() for k in TUNABLES[n].keys]

    def safety(self) -> dict[str, str]:
        """What each option the recommendation sets trades (Gluster's documentation)."""
        return {n: TUNABLES[n].note for n in self.changed()}

    def to_json(self, volume: str = "VOLNAME") -> dict[str, Any]:
        return {"metric": self.metric, "model": self.model, "recommended": self.recommended.to_json(),
                "defaults": self.defaults.to_json(), "gain": self.gain, "gain_low": _nan_none(self.gain_low),
                "gain_high": _nan_none(self.gain_high), "not_mattering": self.not_mattering,
                "unclear": self.unclear, "equivalence_margin": EQUIVALENCE, "contrasts": self.contrasts,
                "pitfall": self.pitfall.to_json() if self.pitfall else None, "commands": self.commands(volume),
                "check_first": self.checks(volume), "safety": self.safety()}


@dataclass
class Advice:
    workload: Inputs  # given with --set
    assumed: Inputs  # the other inputs, from the data's reference configuration
    level: float
    metrics: list[MetricAdvice]
    balanced: MetricAdvice | None
    volume: str = "VOLNAME"
    notes: list[str] = field(default_factory=list)

    def question(self) -> dict[str, Any]:
        """The advice as a what-if file (`glmodel predict` / `glmodel verify --scenarios`): Gluster's defaults as
        the baseline, each recommendation a candidate, the workload spelled out in full so what is measured is
        what was predicted."""
        def spelled(options: Mapping[str, Any]) -> dict[str, Any]:
            values = {**self.assumed, **self.workload, **options}
            return {k: (gluster_size(int(v)) if k in SIZE_FEATURES and not isinstance(v, bool)
                        and float(v).is_integer() else v) for k, v in values.items()}

        first = self.metrics[0]
        candidates: list[dict[str, Any]] = [{"name": f"tuned for {m.metric}", "set": spelled(m.recommended.options)}
                                            for m in self.metrics]
        if self.balanced is not None:
            candidates.append({"name": "tuned, balanced", "set": spelled(self.balanced.recommended.options)})
        # Each pitfall against the defaults too: measurable even when the recommendation is the defaults.
        for m in self.metrics:
            if m.pitfall is not None:
                change = {m.pitfall.option: m.pitfall.value}
                candidates.append({"name": f"pitfall for {m.metric}: {describe(change)}",
                                   "set": spelled({**m.recommended.options, **change})})
        seen: list[dict[str, Any]] = [spelled(first.defaults.options)]
        kept: list[dict[str, Any]] = []
        for c in candidates:  # a recommendation that is the defaults, or a pitfall two metrics share, once
            if c["set"] not in seen:
                kept.append(c)
                seen.append(c["set"])
        return {"level": self.level, "baseline": {"name": "Gluster defaults", "set": spelled(first.defaults.options)},
                "candidates": kept or candidates[:1]}

    def to_json(self) -> dict[str, Any]:
        return {"workload": self.workload, "assumed": self.assumed, "level": self.level,
                "metrics": [m.to_json(self.volume) for m in self.metrics],
                "balanced": self.balanced.to_json(self.volume) if self.balanced else None, "notes": self.notes}


def _nan_none(v: float) -> float | None:
    return None if math.isnan(v) else v


def _options(domain: Domain, fixed: Mapping[str, InputValue]) -> dict[str, list[InputValue]]:
    """The levels tune may choose per option: those the data varied and the user did not fix."""
    out: dict[str, list[Any]] = {}
    for f in domain.varied:
        if f.name in OPTION_KEYS and f.name not in fixed:
            out[f.name] = [False, True] if f.kind == "bool" else sorted(
                f.levels if f.kind == "categorical" else f.values)
    return out


def _defaults(domain: Domain, names: Sequence[str]) -> Inputs:
    """Gluster's defaults for the options; a default the data never had (an io-cache size not measured) takes the
    nearest measured level, since the model knows nothing else."""
    out: Inputs = {}
    for name in names:
        f = domain.input(name)
        value = GLUSTER_DEFAULTS[name]
        if f is not None and f.kind == "numeric" and f.values and value not in f.values:
            value = min(f.values, key=lambda v: abs(math.log(v / value)))
        out[name] = value
    return out


def tune(mf: ModelFile, sets: Sequence[str] = (), metrics: Sequence[str] = (), level: float = 0.9,
         use: str | None = None, volume: str = "VOLNAME") -> Advice:
    """Advice per metric (and, with several metrics named, one option set balancing them)."""
    asked = list(metrics) or mf.metrics
    unknown = [m for m in asked if m not in mf.metrics]
    if unknown:
        raise GlmodelError(f"--metric: {', '.join(unknown)} not in {mf.path} (it has {', '.join(mf.metrics)})")
    workload = parse_sets(sets, model_inputs(mf, asked))
    per_metric: list[MetricAdvice] = []
    grids: dict[str, tuple[list[Inputs], Any, Sequence[str], list[list[str]]]] = {}
    assumed: Inputs = {}
    searched = []
    for metric in asked:
        domain = mf.domain(metric)
        choices = _options(domain, workload)
        if not choices:
            raise GlmodelError(f"{mf.path}: the {metric} model varied no Gluster volume option the user left open "
                               f"(tune chooses {', '.join(OPTION_KEYS)}); fit it on data that varied them, e.g. "
                               "glmodel fit --family gluster")
        base = {**domain.reference, **{k: v for k, v in workload.items() if domain.input(k) is not None}}
        assumed.update({k: v for k, v in domain.reference.items() if k not in workload and k not in choices})
        names = list(choices)
        combos = list(itertools.product(*choices.values()))
        if len(combos) > MAX_CANDIDATES:
            raise GlmodelError(f"{len(combos):,} option combinations for {metric} (at most {MAX_CANDIDATES:,})")
        defaults = {**base, **_defaults(domain, names)}
        configs = [defaults] + [{**base, **dict(zip(names, c))} for c in combos]
        searched.append((metric, domain, choices, defaults, configs))
    # every metric's contrasts below are among its configurations: their refits fitted at once, in one batch
    mf.prepare_changes([(metric, configs) for metric, _, _, _, configs in searched], use=use, refits=REFITS)
    for metric, domain, choices, defaults, configs in searched:
        names = list(choices)
        pred = mf.predict(configs, level, metric=metric, use=use)
        bases, flags, _ = judge(domain, configs, metric)
        grids[metric] = (configs, pred, bases, flags)
        inside = [k for k in range(1, len(configs)) if bases[k] != "extrapolated"] or list(range(1, len(configs)))
        best = max(inside, key=lambda k: float(pred.value[k]))
        # Bonferroni over the contrasts actually tested: each option's every other level against the choice
        tested = sum(len(v) - 1 for v in choices.values())
        strict = 1 - (1 - level) / max(tested, 1)
        chosen = _simplify(mf, configs[best], defaults, names, metric, strict, use)
        per_metric.append(_advice(mf, metric, defaults, chosen, names, domain, level, strict, use))
    # The balance may only move options some metric's own advice moved: one that matters for none of them
    # stays at its default here too, or the balance would over-tune on differences no metric can tell apart.
    movable = {n for m in per_metric for n, v in m.recommended.options.items() if v != m.defaults.options.get(n)}
    balanced = _balanced(mf, asked, grids, level, use, movable) if len(asked) > 1 and metrics else None
    notes = []
    if any(m.defaults.basis == "extrapolated" for m in per_metric):
        notes.append("this workload lies outside the measured data: every figure is an extrapolation")
    return Advice(workload, assumed, level, per_metric, balanced, volume, notes)


def _contrast(mf: ModelFile, a: Mapping[str, InputValue], b: Mapping[str, InputValue], metric: str, level: float,
              use: str | None) -> tuple[float, float, float, float]:
    """b's throughput minus a's, with an interval of that change, and a's throughput.

    The change's own interval: from the covariance for a linear model, from bootstrap refits for boosted trees
    (whose small differences between neighbouring configurations are often noise they fitted: on the lab, a
    predicted +66% for 8 KB O_SYNC writes measured −1%; such a change moves between resamples). A model with
    neither has the change bounded by the two predictions' intervals — from the lower end of one to the upper
    end of the other — so it counts only when the intervals do not overlap."""
    p = mf.predict([dict(a), dict(b)], level, metric=metric, use=use, change_refits=REFITS)
    low, high = float(p.delta_low[1]), float(p.delta_high[1])
    if math.isnan(low) or math.isnan(high):
        low, high = float(p.low[1] - p.high[0]), float(p.high[1] - p.low[0])
    return (float(p.value[1] - p.value[0]), low, high, float(p.value[0]))


def _matters(change: float, low: float, high: float, base: float) -> bool:
    """A change worth an option: at least ``FLAT`` of the throughput, and its interval clear of zero."""
    if abs(change) < FLAT * abs(base):
        return False
    return low > 0 or high < 0


def _levels(domain: Domain, name: str) -> list[Any]:
    """The levels an option can take in the data: on/off, or its measured values."""
    f = domain.input(name)
    if f is None:
        return []
    return [False, True] if f.kind == "bool" else list(f.levels if f.kind == "categorical" else f.values)


def _equivalent(change: float, low: float, high: float, base: float) -> bool:
    """The change shown to be negligible: its interval (at the corrected level) inside ±``EQUIVALENCE`` of the
    throughput, the two one-sided tests of Schuirmann (1987) at once.

    References
    ----------
    Schuirmann, D. J. (1987), "A comparison of the two one-sided tests procedure and the power approach for
    assessing the equivalence of average bioavailability", *J. Pharmacokinet. Biopharm.* 15(6), 657–680.
    """
    margin = EQUIVALENCE * abs(base)
    return math.isfinite(low) and math.isfinite(high) and -margin <= low and high <= margin


def _simplify(mf: ModelFile, best: Inputs, defaults: Mapping[str, InputValue], names: Sequence[str],
              metric: str, level: float, use: str | None) -> Inputs:
    """Options of ``best`` put back to their defaults while the change cannot be told from zero, smallest
    change first."""
    current = dict(best)
    while True:
        trials = []
        for name in names:
            if current[name] != defaults[name]:
                back = {**current, name: defaults[name]}
                change, low, high, base = _contrast(mf, current, back, metric, level, use)
                if not _matters(change, low, high, base):
                    trials.append((abs(change), back))
        if not trials:
            return current
        current = min(trials, key=lambda t: t[0])[1]


def _advice(mf: ModelFile, metric: str, defaults: Inputs, chosen: Inputs, names: Sequence[str],
            domain: Domain, level: float, strict: float, use: str | None) -> MetricAdvice:
    p = mf.predict([defaults, chosen], level, metric=metric, use=use, change_refits=REFITS)
    bases, flags, _ = judge(domain, [defaults, chosen], metric)
    not_mattering: list[str] = []
    unclear: list[str] = []
    pitfall: Pitfall | None = None
    for name in names:
        others = [v for v in _levels(domain, name) if v != chosen[name]]
        contrasts = [(v, _contrast(mf, chosen, {**chosen, name: v}, metric, strict, use)) for v in others]
        clear = [(v, c) for v, c in contrasts if _matters(*c)]
        if others and not clear:
            (not_mattering if all(_equivalent(*c) for _, c in contrasts) else unclear).append(name)
        for v, (change, low, high, _) in clear:
            if change < 0 and (pitfall is None or change < pitfall.change):
                pitfall = Pitfall(name, v, change, low, high)
    if pitfall is not None:  # reported at the advice's level, as the gain is (clear of zero was judged stricter)
        _, pitfall.low, pitfall.high, _ = _contrast(mf, chosen, {**chosen, pitfall.option: pitfall.value}, metric,
                                                    level, use)

    def choice(k: int, config: Mapping[str, InputValue]) -> Choice:
        return Choice({n: config[n] for n in names}, float(p.value[k]), max(float(p.low[k]), 0.0),
                      float(p.high[k]), bases[k], flags[k])
    tested = sum(len(_levels(domain, n)) - 1 for n in names)
    return MetricAdvice(metric, p.model, choice(1, chosen), choice(0, defaults), float(p.value[1] - p.value[0]),
                        float(p.delta_low[1]), float(p.delta_high[1]), not_mattering, pitfall, unclear, tested)


def _balanced(mf: ModelFile, metrics: Sequence[str], grids: Mapping[str, Any], level: float,
              use: str | None, movable: set[str]) -> MetricAdvice | None:
    """The option set with the best mean relative gain over the defaults across the metrics, among those every
    metric's model judges inside the data and that leave the options in no ``movable`` at their defaults;
    compared on the options all the metrics' models share. A configuration a linear model predicts at or below
    zero has no relative gain and does not qualify."""
    import numpy as np

    shared = set.intersection(*({n for n in grids[m][0][0] if n in OPTION_KEYS} for m in metrics))
    default_of = grids[metrics[0]][0][0]
    keys: dict[tuple[Any, ...], list[float]] = {}
    for m in metrics:
        configs, pred, bases, _ = grids[m]
        base_value = float(pred.value[0])
        for k in range(1, len(configs)):
            if any(configs[k].get(n) != default_of.get(n) for n in shared - movable):
                continue
            key = tuple(configs[k].get(n) for n in sorted(shared))
            if bases[k] != "extrapolated" and base_value > 0 and float(pred.value[k]) > 0:
                keys.setdefault(key, []).append(math.log(float(pred.value[k]) / base_value))
    full = {k: v for k, v in keys.items() if len(v) == len(metrics)}
    if not full:
        return None
    names = sorted(shared)
    score = {k: float(np.mean(v)) for k, v in full.items()}
    best = max(score, key=lambda k: score[k])
    default = tuple(grids[metrics[0]][0][0].get(n) for n in names)
    # Simplified as for one metric: an option goes back to its default while that costs less than FLAT.
    while True:
        back = [tuple(default[i] if i == j else v for i, v in enumerate(best)) for j in range(len(names))
                if best[j] != default[j]]
        cheap = [k for k in back if k in score and score[best] - score[k] < math.log1p(FLAT)]
        if not cheap:
            break
        best = max(cheap, key=lambda k: score[k])
    options = dict(zip(names, best))
    gain = float(np.expm1(np.mean(full[best])) * 100)
    first = metrics[0]
    configs, pred, bases, flags = grids[first]
    k = next(i for i in range(1, len(configs)) if all(configs[i].get(n) == v for n, v in options.items()))
    rec = Choice(options, float(pred.value[k]), float(pred.low[k]), float(pred.high[k]), bases[k], flags[k])
    base = Choice({n: configs[0].get(n) for n in options}, float(pred.value[0]), float(pred.low[0]),
                  float(pred.high[0]), bases[0], flags[0])
    return MetricAdvice("balanced: " + "+".join(metrics), pred.model, rec, base, gain, math.nan, math.nan, [])


def describe(options: Mapping[str, InputValue]) -> str:
    """Option set as text: write-behind on, io-cache size 64MB, ..."""
    return ", ".join(f"{label(n)} {show_value(n, v)}" for n, v in options.items())

"""What-if questions: a baseline (the cluster today) and named candidates, from a YAML file or ``--set``.

A candidate lists only what it changes; everything else is the baseline's, and whatever the baseline leaves unset
is the model's reference configuration (a measured one). Values are checked against the model's inputs: an
unknown feature, a value of the wrong type, or a level never measured is one error line naming it.

Scenario file::

    level: 0.9                 # prediction-interval level (optional; --level wins)
    currency: EUR              # label for prices (optional)
    baseline:
      name: today
      set: {network_gbps: 1, servers: 4, replica: 2}
      server_tb: 8             # raw capacity per server (or raw_tb for the whole cluster)
    candidates:
      - name: infiniband
        set: {network_gbps: 40}
        price: 14000           # what the candidate costs (optional)
      - name: stronger CPU
        set: {cpu_score: 320}
        lab: {cpu: 1}          # how `glmodel verify` builds it on the lab (predict ignores it)

``lab`` gives lab settings (link, disk, disk_read, disk_write, ram, cpu, brick_backing) for inputs that are
measured rather than set: verify brings the lab up at those settings and predicts at what it then measures.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..config.yamlio import load_model
from ..errors import ConfigError
from ..model.features import HARDWARE_INPUTS, SIZE_FEATURES, Feature, InputValue, Inputs
from ..units import parse_size, parse_switch
from ..config.yamlio import parse_yaml
from ..plan.factors import FACTORS, LAB_FACTORS, normalize_level


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScenarioSpec(_Strict):
    name: str | None = Field(default=None, min_length=1, max_length=64)
    set: dict[str, Any] = Field(default_factory=dict)
    price: float | None = Field(default=None, ge=0)
    raw_tb: float | None = Field(default=None, gt=0)
    server_tb: float | None = Field(default=None, gt=0)
    lab: dict[str, str] = Field(default_factory=dict, description="lab settings that build it (glmodel verify)")
    measured_by: str | None = Field(default=None, min_length=1, max_length=200,
                                    description="how its hardware figures were measured (e.g. `glmodel bench disk` "
                                                "on the new device); without it they are spec values")

    @field_validator("lab", mode="before")
    @classmethod
    def _lab(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            raise ValueError("lab must map lab settings to values, e.g. {cpu: 0.5, disk: 120MB/s}")

        out: dict[str, str] = {}
        for name, value in v.items():
            if name not in LAB_FACTORS:
                raise ValueError(f"lab: unknown setting {name!r} (use {', '.join(LAB_FACTORS)})")
            try:
                out[str(name)] = str(normalize_level(FACTORS[name], value))
            except ValueError as exc:
                raise ValueError(f"lab.{name}: {exc}") from None
        return out

    @model_validator(mode="after")
    def _one_capacity(self) -> ScenarioSpec:
        if self.raw_tb is not None and self.server_tb is not None:
            raise ValueError("give raw_tb (whole cluster) or server_tb (per server), not both")
        return self


class ScenarioFile(_Strict):
    level: float | None = Field(default=None, gt=0, lt=1)
    currency: str = Field(default="", max_length=8)
    baseline: ScenarioSpec = Field(default_factory=ScenarioSpec)
    candidates: list[ScenarioSpec] = Field(min_length=1)

    @field_validator("candidates")
    @classmethod
    def _named(cls, v: list[ScenarioSpec]) -> list[ScenarioSpec]:
        names = [c.name for c in v]
        if any(n is None for n in names):
            raise ValueError("every candidate needs a name")
        dup = sorted({n for n in names if names.count(n) > 1 and n is not None})
        if dup:
            raise ValueError(f"candidate name(s) used twice: {', '.join(dup)}")
        return v


@dataclass(frozen=True)
class Scenario:
    """One configuration to predict: the values it sets (checked), and optionally its price and capacity."""

    name: str
    values: Inputs
    price: float | None = None
    raw_tb: float | None = None
    server_tb: float | None = None
    baseline: bool = False
    lab: dict[str, str] = field(default_factory=dict)  # lab settings that build it (verify only)
    measured_by: str = ""  # how its hardware figures were measured ("": spec values from the file)


@dataclass(frozen=True)
class Question:
    """A baseline and candidates; ``level`` and ``currency`` when the file gave them."""

    baseline: Scenario
    candidates: list[Scenario]
    level: float | None = None
    currency: str = ""
    source: str = ""

    @property
    def scenarios(self) -> list[Scenario]:
        return [self.baseline, *self.candidates]


def coerce(value: Any, feature: Feature, source: str, key: str) -> InputValue:
    """A user's value as the feature's kind: float (sizes may be '64MB'; 'max'/'min' the highest/lowest value
    measured), bool, or a measured level."""
    if feature.kind == "categorical":
        text = str(value).strip()
        if text not in feature.levels:
            raise ConfigError(source, key, f"{text!r} was never measured for {feature.name} "
                              f"(measured: {', '.join(feature.levels)})")
        return text
    if feature.kind == "bool":
        try:
            return parse_switch(value)
        except ValueError as exc:
            raise ConfigError(source, key, str(exc)) from None
    if isinstance(value, bool):
        raise ConfigError(source, key, f"{value!r} is not a number")
    if isinstance(value, str) and value.strip().lower() in ("max", "min"):
        # the highest or lowest value measured: "today" of a plan that only ever slowed the hardware down
        bound = feature.high if value.strip().lower() == "max" else feature.low
        if bound is None:
            raise ConfigError(source, key, f"{value!r}: {feature.name} has no measured values")
        return float(bound)
    if isinstance(value, str) and feature.name in SIZE_FEATURES:
        try:
            return float(parse_size(value))
        except ValueError as exc:
            raise ConfigError(source, key, str(exc)) from None
    try:
        number = float(value)
    except (TypeError, ValueError):
        unit = " or a size such as 64MB" if feature.name in SIZE_FEATURES else ""
        raise ConfigError(source, key, f"{value!r} is not a number{unit}") from None
    if not math.isfinite(number) or number < 0:
        raise ConfigError(source, key, f"{value!r}: must be a finite number ≥ 0")
    if feature.name in COUNT_FEATURES and (number < 1 or number != int(number)):
        raise ConfigError(source, key, f"{value!r}: {feature.name} is a count, a whole number of at least 1")
    if feature.name in POSITIVE_FEATURES and number <= 0:
        raise ConfigError(source, key, f"{value!r}: {feature.name} must be more than 0")
    return number


# Inputs that count things (a cluster of 2.5 servers or 0 copies cannot be built) and inputs a ratio divides by.
COUNT_FEATURES = frozenset({"servers", "clients", "replica", "threads"})
POSITIVE_FEATURES = frozenset({*HARDWARE_INPUTS, "file_size", "record_size"} - {"base_filesystem"})


def check_values(raw: Mapping[str, Any], inputs: Mapping[str, Feature], source: str, prefix: str) -> Inputs:
    """Every key must be a model input; every value of its kind. Errors name ``prefix.key``."""
    out: Inputs = {}
    for name, value in raw.items():
        key = f"{prefix}.{name}" if prefix else str(name)
        feature = inputs.get(str(name))
        if feature is None:
            raise ConfigError(source, key, f"unknown feature; this model's inputs are {', '.join(sorted(inputs))}")
        out[str(name)] = coerce(value, feature, source, key)
    return out


def from_file(path: str | Path, inputs: Mapping[str, Feature],
              settings: Sequence[Mapping[str, float]] = ()) -> Question:
    """Read and check a scenario file against the model's inputs. With the model's measured hardware
    ``settings``, "max"/"min" of hardware inputs name a measured setting (see ``measured_extremes``)."""
    spec = load_model(path, ScenarioFile, "with baseline and candidates")
    src = str(path)

    def scenario(s: ScenarioSpec, where: str, default: str, base: bool, on: Mapping[str, Any]) -> Scenario:
        values = measured_extremes(s.set, on, settings)
        return Scenario(s.name or default, check_values(values, inputs, src, f"{where}.set"), s.price, s.raw_tb,
                        s.server_tb, base, dict(s.lab), s.measured_by or "")

    baseline = scenario(spec.baseline, "baseline", "baseline", True, {})
    cands = [scenario(c, f"candidates[{i}]", "", False, baseline.values) for i, c in enumerate(spec.candidates)]
    if any(c.name == baseline.name for c in cands):
        raise ConfigError(src, "candidates", f"a candidate is named like the baseline ({baseline.name!r})")
    return Question(baseline, cands, spec.level, spec.currency, src)


def measured_extremes(raw: Mapping[str, Any], base: Mapping[str, Any],
                      settings: Sequence[Mapping[str, float]]) -> dict[str, Any]:
    """A scenario's values with "max"/"min" of hardware inputs made one *measured* hardware setting (pure).

    Each hardware setting was measured as a whole (its own baselines), so the highest link of one setting and
    the highest disk of another are not a setting anyone measured. The setting chosen is the measured one
    nearest (on each input's log scale from its lowest to its highest) to the extremes asked, with the other
    hardware inputs as the scenario or its baseline gives them; all its hardware values are taken. Without
    settings (hardware that never varied) each extreme stays for ``coerce``: that input's own bound.
    """
    import math

    extremes = {k: str(v).strip().lower() for k, v in raw.items() if str(v).strip().lower() in ("max", "min")}
    names = sorted({k for s in settings for k in s})
    if not extremes or not settings or not set(extremes) <= set(names):
        return dict(raw)
    span = {k: (min(float(s[k]) for s in settings), max(float(s[k]) for s in settings)) for k in names}

    def pos(k: str, v: float) -> float:  # 0 at the lowest measured, 1 at the highest, on a log scale
        lo, hi = span[k]
        if lo <= 0 or hi <= lo or v <= 0:
            return 0.0
        return (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo))

    target: dict[str, float] = {}
    for k in names:
        if k in extremes:
            target[k] = 1.0 if extremes[k] == "max" else 0.0
        else:
            given = raw.get(k, base.get(k))
            try:
                target[k] = pos(k, float(given))
            except (TypeError, ValueError):
                continue
    nearest = min(settings, key=lambda s: sum((pos(k, float(s[k])) - t) ** 2 for k, t in target.items()))
    return {**raw, **{k: float(nearest[k]) for k in names}}


def parse_sets(items: Iterable[str], inputs: Mapping[str, Feature]) -> Inputs:
    """``--set name=value`` options (YAML scalars: 10, 64MB, true, xfs) checked against the model's inputs."""
    raw: dict[str, Any] = {}
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not name.strip():
            raise ConfigError("--set", item, "expected name=value, e.g. --set network_gbps=10")
        if name.strip() in raw:
            raise ConfigError("--set", name.strip(), "given twice")
        raw[name.strip()] = parse_yaml(text, "--set") if text.strip() else ""
    return check_values(raw, inputs, "--set", "")


def question(inputs: Mapping[str, Feature], path: str | Path | None, sets: Sequence[str],
             settings: Sequence[Mapping[str, float]] = ()) -> Question:
    """The file's question, plus a candidate "--set" built on its baseline; ``--set`` alone compares against
    the model's reference configuration."""
    q = from_file(path, inputs, settings) if path else Question(Scenario("reference", {}, baseline=True), [])
    values = parse_sets(sets, inputs)
    if values:
        q = replace(q, candidates=[*q.candidates, Scenario("--set", values)])
    if not q.candidates:
        raise ConfigError("glmodel predict", "", "nothing to predict: give --scenarios FILE or --set name=value")
    return q

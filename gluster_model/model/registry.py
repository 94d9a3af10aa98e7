"""The model families `glmodel fit` compares, one registry (not the feature families of ``dataset.FAMILIES``): each entry says how to build its learner, how simple
it is (a tie on the selection's score goes to the simpler), whether it needs the measured stage figures, and
how its fitted form is read back from a model file. A new family is a learner and one line here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import GlmodelError
from .bottleneck import BottleneckModel
from .learners import GbmModel, Learner, bottleneck, gbm, loglinear, mlr, physical
from .linear import LinearModel

if TYPE_CHECKING:
    from .features import Schema
    from .learners import Fitted


@dataclass(frozen=True)
class Family:
    """One model family: its name (as `--model` and `--use` take it), its learner from the main and the physics
    schema, the metric and a seed, its simplicity rank (0 the simplest), whether every row needs the measured
    link and disk figures its stages read, and the type a model file stores its fit under."""

    name: str
    make: Callable[[Schema, Schema, str, int], Learner]
    simplicity: int
    file_type: str
    needs_stages: bool = False


# In the order `fit` lists them; the study's MLR first (always fitted).
REGISTERED: tuple[Family, ...] = (
    Family("mlr", lambda s, p, m, seed: mlr(s), 0, "linear"),
    Family("loglinear", lambda s, p, m, seed: loglinear(s), 3, "linear"),
    Family("physical", lambda s, p, m, seed: physical(p, m), 1, "linear"),
    Family("bottleneck", lambda s, p, m, seed: bottleneck(s, m), 2, "bottleneck", needs_stages=True),
    Family("gbm", lambda s, p, m, seed: gbm(s, seed), 4, "gbm"),
)
BY_NAME: dict[str, Family] = {f.name: f for f in REGISTERED}
MODELS: tuple[str, ...] = tuple(BY_NAME)
SIMPLICITY: dict[str, int] = {f.name: f.simplicity for f in REGISTERED}
# A model file's fitted form by its stored type (the linear families share one).
LOADERS: dict[str, Callable[[Mapping[str, Any]], Fitted]] = {
    "linear": LinearModel.from_json, "gbm": GbmModel.from_json, "bottleneck": BottleneckModel.from_json}


def load_fitted(d: Mapping[str, Any]) -> Fitted:
    """A fitted model from its model-file entry, by its stored type; one line for a type glmodel never writes."""
    load = LOADERS.get(str(d["type"]))
    if load is None:
        raise GlmodelError(f"model type {d['type']!r} is not one glmodel writes ({', '.join(LOADERS)})")
    return load(d)

"""The model file: plain JSON holding, per metric, the feature schema with its measured ranges, every fitted
model's parameters, the validation figures, importance and provenance.

Linear models are numbers in the JSON. A gradient-boosting model is its training data, seed and fitted values:
loading fits it again and checks the fit reproduces them (files of earlier versions embed a skops archive,
loaded with only the scikit-learn types it is made of trusted); nothing is ever unpickled. Loading a linear
model needs numpy alone, so `glmodel predict` starts fast.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..errors import GlmodelError
from .features import InputValue, Schema
from .groups import n_groups
from .domain import Domain
from .features import with_derived
from .registry import load_fitted

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from .domain import Domain
    from .fit import MetricFit
    from .learners import Fitted

FORMAT = "glmodel-model"
VERSION = 2  # 2: adds each metric's measured domain (inputs, configurations) for `glmodel predict`


class ModelFileError(GlmodelError):
    """A model file that is missing, not JSON, or not one glmodel wrote."""


def data_hash(frame: pd.DataFrame) -> str:
    """SHA-256 of the training rows (sorted columns and rows), so a model names exactly the data it saw."""
    import hashlib

    cols = sorted(frame.columns)
    text = frame[cols].sort_values(cols).to_csv(index=False)
    return hashlib.sha256(text.encode()).hexdigest()


def provenance(store_where: str, frame: pd.DataFrame, family: str, seed: int) -> dict[str, Any]:
    return {"store": store_where, "campaigns": sorted(frame["campaign"].astype(str).unique().tolist())
            if "campaign" in frame else [], "rows": len(frame),
            "configs": n_groups(frame),
            "data_sha256": data_hash(frame), "family": family, "seed": seed}


def json_safe(obj: Any) -> Any:
    """JSON without NaN/inf (strict parsers reject them): those become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, Mapping):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    if hasattr(obj, "item"):  # numpy scalars
        return json_safe(obj.item())
    return obj


def metric_report(f: MetricFit) -> dict[str, Any]:
    """Everything `glmodel fit` shows for one metric, as JSON-able data."""
    return {"family": f.family, "n_rows": f.n_rows, "n_configs": f.n_configs, "selected": f.selected,
            "comparison": [s.to_json() for s in f.scores], "coefficients": f.coefficients,
            "diagnostics": f.diagnostics.to_json(),
            "importance": {m: [i.to_json() for i in imps] for m, imps in f.importance.items()},
            "explained": f.explained, "replication": f.replication.to_json() if f.replication else None,
            "notes": f.notes}


def build(fits: Sequence[MetricFit], provenance: Mapping[str, Any]) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    for f in fits:
        metrics[f.metric] = {"schema": f.schema.to_json(), "domain": f.domain.to_json(), "report": metric_report(f),
                             "models": {name: m.to_json() for name, m in f.models.items()}}
    doc: dict[str, Any] = json_safe({"format": FORMAT, "version": VERSION, "glmodel_version": __version__,
                   "created": datetime.now(UTC).isoformat(timespec="seconds"), "provenance": dict(provenance),
                   "metrics": metrics})
    return doc


def save(doc: Mapping[str, Any], path: str | Path) -> None:
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
        tmp.replace(path)  # a half-written model file never replaces a good one
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot write the model file ({exc.strerror})") from None
    finally:
        tmp.unlink(missing_ok=True)


@dataclass(frozen=True)
class Predicted:
    """One metric's predictions for a list of configurations (the first is the reference of the changes).

    ``low``/``high``: the prediction interval of each value; ``delta_low``/``delta_high``: the interval of each
    configuration's change against the first, from the model's own covariance (NaN where the model has none).
    """

    metric: str
    model: str
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    delta_low: np.ndarray
    delta_high: np.ndarray


def config_columns(configs: Sequence[Mapping[str, InputValue]]) -> dict[str, list[InputValue]]:
    """Configurations (one mapping of input -> value each) as columns."""
    return {k: [c[k] for c in configs] for k in configs[0]}


@dataclass(frozen=True)
class ModelFile:
    path: str
    doc: dict[str, Any]
    # Models as loaded, per (metric, name): a boosting model is fitted again on loading, and keeps its refits.
    _loaded: dict[tuple[str, str], Fitted] = field(default_factory=dict, repr=False, compare=False)

    @property
    def metrics(self) -> list[str]:
        return list(self.doc["metrics"])

    def schema(self, metric: str) -> Schema:
        return Schema.from_json(self._metric(metric)["schema"])

    def domain(self, metric: str) -> Domain:
        return Domain.from_json(self._metric(metric)["domain"])

    def selected(self, metric: str) -> str:
        return str(self._metric(metric)["report"]["selected"])

    def models(self, metric: str) -> list[str]:
        """The names of the models the file holds for ``metric``."""
        return list(self._metric(metric)["models"])

    def model(self, metric: str, name: str | None = None) -> Fitted:
        entry = self._metric(metric)
        name = name or entry["report"]["selected"]
        if name not in entry["models"]:
            raise ModelFileError(f"{self.path}: metric {metric} has no model {name!r} "
                                 f"(it has {', '.join(entry['models'])})")
        if (metric, name) not in self._loaded:
            with _part(Path(self.path), metric):
                self._loaded[(metric, name)] = load_fitted(entry["models"][name])
        return self._loaded[(metric, name)]

    def predict(self, configs: Sequence[Mapping[str, InputValue]], level: float = 0.9, *, metric: str,
                use: str | None = None, observed_change: bool = False, change_refits: int = 0,
                trials: float = 1, new_campaign: bool = False) -> Predicted:
        """Predict ``metric`` for each configuration (every model input given) with ``level`` intervals, by the
        metric's selected model or the one named by ``use``; derived inputs are computed here, as in the fit.
        The change against the first configuration has the interval of the expected change, or with
        ``observed_change`` of a measured one (each configuration benchmarked once); a model without a
        covariance spends up to ``change_refits`` bootstrap refits on the first (none: no interval). Intervals
        are for a mean of ``trials`` trials where the model can tell the trials' noise from its own error, and
        with ``new_campaign`` for a measurement in another campaign, beyond the data's hardware (an upgrade)."""
        model = self.model(metric, use)
        cols = with_derived(config_columns(configs), metric)
        lo, hi = model.interval(cols, level, trials, new_campaign)
        _, dlo, dhi = model.difference(cols, level, observed_change, change_refits, trials, new_campaign)
        return Predicted(metric, getattr(model, "name", use or self.selected(metric)), model.predict(cols), lo, hi,
                         dlo, dhi)

    def prepare_changes(self, asked: Sequence[tuple[str, Sequence[Mapping[str, InputValue]]]], *,
                        use: str | None = None, refits: int = 0) -> None:
        """For each (metric, configurations) asked, predict every configuration once by each bootstrap refit a
        model without a covariance keeps, so the changes ``predict`` is asked next among them cost no
        prediction of their own (a search over options); every model's refits are fitted in one batch, spread
        over the workers of an open ``refit_pool.workers`` block."""
        from . import refit_pool
        from .learners import GbmModel

        pending: list[tuple[GbmModel, refit_pool.RefitJob]] = []
        for metric, configs in asked:
            model = self.model(metric, use)
            if refits > 0 and isinstance(model, GbmModel):
                job = model.refit_job(with_derived(config_columns(configs), metric), refits)
                if job is not None:
                    pending.append((model, job))
        for (model, job), fits in zip(pending, refit_pool.fit_all([job for _, job in pending])):
            model.take_refits(job, fits)

    def _metric(self, metric: str) -> dict[str, Any]:
        if metric not in self.doc["metrics"]:
            raise ModelFileError(f"{self.path}: no model for metric {metric!r} (it has {', '.join(self.metrics)})")
        return self.doc["metrics"][metric]  # type: ignore[no-any-return]


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number a model may hold")


def load(path: str | Path) -> ModelFile:
    """Read a model file and check every part a prediction uses, so a damaged or forged file is refused here,
    in one line, rather than answered with NaN or a stack trace later. The boosting model is checked when used
    (fitted again from its training data, which must reproduce its fitted values)."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(), parse_constant=_no_constant)
    except FileNotFoundError:
        raise ModelFileError(f"{p}: no such model file (write one with `glmodel fit --out {p}`)") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ModelFileError(f"{p}: not a readable JSON model file ({str(exc)[:200]})") from None
    except RecursionError:
        raise ModelFileError(f"{p}: not a glmodel model file: nested too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ModelFileError(f"{p}: not a glmodel model file (no \"format\": \"{FORMAT}\")")
    if doc.get("version") != VERSION:
        raise ModelFileError(f"{p}: model file version {doc.get('version')!r}; this glmodel reads version {VERSION} "
                             f"(fit it again with this glmodel)")
    if not isinstance(doc.get("metrics"), dict) or not doc["metrics"]:
        raise ModelFileError(f"{p}: the model file holds no metric")
    mf = ModelFile(str(p), doc)
    for metric in mf.metrics:
        with _part(p, metric):
            entry = doc["metrics"][metric]
            mf.schema(metric)
            mf.domain(metric)
            mf.selected(metric)
            for name, model in entry["models"].items():
                if model["type"] == "linear":
                    mf.model(metric, name)
    return mf


@contextmanager
def _part(path: Path, metric: str) -> Iterator[None]:
    """Any error reading one part of an untrusted model file becomes one line naming the file and part."""
    try:
        yield
    except ModelFileError:
        raise
    except GlmodelError as exc:  # a reader that already said what is wrong, in the user's terms
        raise ModelFileError(f"{path}: not a glmodel model file: metric {str(metric)[:40]}: "
                             f"{str(exc).removeprefix('model file: ')[:300]}") \
            from None
    except Exception as exc:  # noqa: BLE001 - a forged file can break a reader anywhere; none may escape
        what = f"{type(exc).__name__}: {exc}" if not isinstance(exc, KeyError) else f"missing {exc}"
        raise ModelFileError(f"{path}: not a glmodel model file: metric {str(metric)[:40]}: {what[:200]}") from None

"""``glmodel fit`` as one call: fit every metric asked on a trial table, note what the data left out, and write
the model file that ``predict`` and ``verify`` read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import artifact
from .fit import MetricFit, fit_frame
from .registry import MODELS

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Trained:
    fits: list[MetricFit]
    skipped: list[str]  # metrics not fitted, and why
    doc: dict[str, Any]
    out: Path

    def to_json(self) -> dict[str, Any]:
        return {"model_file": str(self.out), "provenance": self.doc["provenance"],
                "metrics": {m: v["report"] for m, v in self.doc["metrics"].items()}, "not_fitted": self.skipped}


def train(frame: pd.DataFrame, where: str, out: Path, *, family: str = "unified",
          metrics: Sequence[str] | None = None, models: Sequence[str] | None = None, seed: int = 0,
          level: float = 0.9, samples: int = 1024, bootstrap: int = 30) -> Trained:
    """Fit the study's MLR and the challengers per metric (see ``fit_frame``) and save the model file.

    ``frame.attrs["flagged"]`` (from ``dataset.model_frame``), when set, joins every fit's notes.
    """
    fits, skipped = fit_frame(frame, family, list(metrics) if metrics else None, models=list(models or MODELS),
                              seed=seed, level=level, importance_n=samples, bootstrap=bootstrap)
    if frame.attrs.get("flagged"):
        for f in fits:
            f.notes.append(frame.attrs["flagged"])
    doc = artifact.build(fits, artifact.provenance(where, frame, family, seed))
    artifact.save(doc, out)
    return Trained(fits, skipped, doc, out)

"""`glmodel report`: the decision document and its appendix, rendered from what the library computed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .build import Written, write_report

__all__ = ["Written", "write", "write_report"]


def write(store: str, out: Path, model_file: Path | None = None, campaigns: Sequence[str] = (),
          scenarios: Path | None = None) -> Written:
    """The HTML and Markdown report of ``store`` (``glmodel report``): the model's answer to the question computed
    once by the library (``api.answered``), as predict and verify compute it, then rendered; what was written."""
    from ... import api
    from ...outputs import check_output

    check_output(out, "--out", directory=True)
    with api.open_for_reading(store) as st:
        return write_report(st, out, api.answered(st, model_file, scenarios), list(campaigns) or None)

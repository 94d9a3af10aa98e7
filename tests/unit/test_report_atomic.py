"""A report that fails half-way (a damaged part of a model file found while its section is drawn) leaves the
report already in ``out`` as it was: nothing of ``out`` is deleted or overwritten before all of the new one is
rendered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gluster_model.errors import GlmodelError
from gluster_model.present.report import build
from gluster_model.store import open_store


def test_a_report_refused_half_way_leaves_the_earlier_report_untouched(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "report"
    out.mkdir()
    (out / "index.html").write_text("earlier report")
    (out / "whatif.png").write_bytes(b"earlier figure")
    store = open_store(tmp_path / "s.db")
    monkeypatch.setattr(build, "campaigns", lambda st, names: [object()])

    def half_way(store: Any, work: Path, *args: Any) -> Any:
        (work / "study1_read_cost.png").write_bytes(b"new figure")  # drawn before the failure
        raise GlmodelError("model file: the gbm model's 'training' field is damaged; fit the model again")

    monkeypatch.setattr(build, "_document", half_way)
    with pytest.raises(GlmodelError, match="damaged"):
        build.write_report(store, out)
    assert sorted(p.name for p in out.iterdir()) == ["index.html", "whatif.png"]
    assert (out / "index.html").read_text() == "earlier report"
    assert (out / "whatif.png").read_bytes() == b"earlier figure"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report-")] == []  # nothing left beside it

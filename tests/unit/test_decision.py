"""The purchase decision on the shipped emulated-hardware dataset: what is ranked, how hardware is judged inside
or outside the data, that predict and verify label a question alike, and that the answer fits a screen."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from gluster_model.dataset import read_table
from gluster_model.model import artifact
from gluster_model.model.fit import fit_frame
from gluster_model.predict.scenarios import Question, Scenario, from_file
from gluster_model.predict.whatif import model_inputs, resolve, what_if

ROOT = Path(__file__).resolve().parents[2]
DECISION = ROOT / "experiments" / "whatif" / "emulated_decision.yaml"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frame = read_table(ROOT / "data" / "hardware_emulated.csv")
    fits, _ = fit_frame(frame, "hardware", ["write", "read"], models=["mlr", "loglinear", "physical"], seed=0,
                        importance_n=128, bootstrap=0)
    path = tmp_path_factory.mktemp("decision") / "emulated-model.json"
    artifact.save(artifact.build(fits, {"data": "hardware_emulated.csv"}), path)
    return path


def _answer(path: Path):  # type: ignore[no-untyped-def]
    mf = artifact.load(path)
    return mf, from_file(DECISION, model_inputs(mf, mf.metrics))


def test_only_measurable_gains_inside_the_data_are_ranked(model: Path) -> None:
    mf, q = _answer(model)
    answer = what_if(mf, q)
    assert answer.extrapolated == []  # the honest rule, with the settings measured to cover the question
    for m in answer.metrics:
        ranked = m.ranked
        assert ranked, m.metric
        for p in ranked:
            assert p.delta is not None and p.delta > 0 and p.delta_low is not None and p.delta_low > 0
            assert p.basis != "extrapolated" and not p.above_ceiling and p.price
        gains = [p.gain_per_cost for p in ranked]
        assert gains == sorted(gains, reverse=True) and m.best_upgrade == ranked[0].scenario
        # Every candidate that loses throughput is listed with that reason, never ranked.
        for p in m.predictions[1:]:
            if p.delta_high is not None and p.delta_high < 0:
                assert p.rank is None and p.not_ranked == "loses throughput"


def _box_points(mf: artifact.ModelFile, n: int, seed: int) -> list[dict[str, float]]:
    """Hardware drawn uniformly in the box of each measured input (disk read = disk write, as a disk is)."""
    dom = mf.domain("write")
    rng = np.random.default_rng(seed)
    box = {f.name: (f.low, f.high) for f in dom.hardware}
    points = []
    for _ in range(n):
        p = {k: float(rng.uniform(lo, hi)) for k, (lo, hi) in box.items() if k != "disk_write_mbps"}
        p["disk_write_mbps"] = p["disk_read_mbps"]
        points.append(p)
    return points


def test_most_of_the_hardware_box_is_not_interpolated(model: Path) -> None:
    mf, q = _answer(model)
    points = _box_points(mf, 150, seed=2026)
    answer = what_if(mf, Question(q.baseline, [Scenario(f"p{i}", p) for i, p in enumerate(points)]),
                     metrics=["write"])
    inside = [p for p in answer.metrics[0].predictions[1:] if p.basis != "extrapolated"]
    assert len(inside) <= 0.6 * len(points), len(inside)
    # Every measured hardware setting, asked with the baseline's workload, is inside the data.
    dom = mf.domain("write")
    settings = [{k: dom.settings[k][i] for k in dom.settings} for i in range(dom.n_settings)]
    assert len(settings) >= 12
    answer = what_if(mf, Question(q.baseline, [Scenario(f"s{i}", s) for i, s in enumerate(settings)]))
    for m in answer.metrics:
        assert all(p.basis != "extrapolated" for p in m.predictions), [
            (p.scenario, p.flags) for p in m.predictions if p.basis == "extrapolated"]


def test_verify_labels_a_question_as_predict_does(model: Path) -> None:
    """verify predicts at the hardware as measured (a nominal 1 Gbit/s measures 0.998), yet labels each scenario
    as predict labels the question asked."""
    from gluster_model.verify import compare

    mf, q = _answer(model)
    dom = mf.domain("write")
    found, rows = [], []
    for s in q.scenarios:
        values = resolve(dom, q.baseline, s)
        found.append(SimpleNamespace(scenario=s, values=values, run=SimpleNamespace(config_hash=s.name), why=""))
        measured = {k: values[k] * 1.004 for k in ("network_gbps", "disk_read_mbps", "disk_write_mbps", "cpu_score")}
        rows.append({**values, **measured, "config_hash": s.name, "write": 50.0, "read": 90.0})
    v = compare(mf, q, found, pd.DataFrame(rows), ["write", "read"], 0.9)  # type: ignore[arg-type]
    asked = what_if(mf, q)
    for vm, am in zip(v.metrics, asked.metrics):
        assert {c.scenario: c.basis for c in vm.checks} == {p.scenario: p.basis for p in am.predictions}


def test_the_answer_fits_a_screen_and_names_the_best_buy_first(model: Path) -> None:
    from rich.console import Console

    from gluster_model.present.predict import print_answer

    mf, q = _answer(model)
    answer = what_if(mf, q)
    buf = io.StringIO()
    print_answer(Console(file=buf, width=100, force_terminal=False), answer)
    lines = buf.getvalue().rstrip("\n").splitlines()
    # two lines more than before: what limits today by the model's stages, and the combined best buy part by
    # part (issue 65: why SSDs alone do little but links and SSDs together pay most)
    assert len(lines) <= 43, "\n".join(lines)
    assert all(len(line) <= 100 for line in lines)
    head = "\n".join(lines[:6])
    for m in answer.metrics:
        assert f"Best buy for {m.metric}: {m.best_upgrade}:" in head, head


def test_piped_output_never_folds_a_cell(model: Path, tmp_path: Path) -> None:
    """Piped (not a terminal) with no COLUMNS set, the tables are as wide as they need: each scenario's row is
    one line. (A COLUMNS the user sets is respected, piped too: test_readme.py checks 80 and 120.)"""
    glmodel = Path(sys.executable).parent / "glmodel"
    done = subprocess.run([str(glmodel), "predict", "--model", str(model), "--scenarios", str(DECISION), "--details"],
                          capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    _, q = _answer(model)
    rows = [ln for ln in done.stdout.splitlines() if re.search(r"\d–\d", ln)]
    for s in q.scenarios:
        # one whole row per metric, the name unbroken and the interval on the same line
        assert sum(1 for ln in rows if ln.startswith(s.name + " ")) == 2, (s.name, rows)

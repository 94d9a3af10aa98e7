"""The report as a decision document, rendered in headless Chromium at 1280×800: the first screen holds the
question, the best buy per metric with its expected change and interval, whether it is inside the data and
whether it was verified; the report and `glmodel predict` show the same figures; a broken model file is refused
before anything in the output folder is touched."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from gluster_model.present.predict import change_words
from gluster_model.predict.whatif import Prediction
from gluster_model.store import open_store

from .conftest import glmodel

ROOT = Path(__file__).resolve().parents[2]
DECISION = ROOT / "experiments" / "whatif" / "emulated_decision.yaml"


@pytest.fixture(scope="module")
def decision(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    d = tmp_path_factory.mktemp("decision-report")
    model = d / "model.json"
    glmodel("fit", "--data", str(ROOT / "data" / "hardware_emulated.csv"), "--family", "hardware", "--samples", "128",
            "--bootstrap", "0", "--out", str(model), check=True, timeout=600)
    with open_store(str(d / "empty.db")):
        pass  # a real, empty store: no campaign, no verification
    answer = json.loads(glmodel("predict", "--model", str(model), "--scenarios", str(DECISION), "--json",
                                check=True, timeout=120).stdout)
    glmodel("report", "--store", str(d / "empty.db"), "--model", str(model), "--scenarios", str(DECISION),
            "--out", str(d / "report"), check=True, timeout=600)
    return d / "report", model, answer


def test_first_screen_holds_the_answer(decision: tuple[Path, Path, dict]) -> None:
    report, _, answer = decision
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium package is missing (scripts/setup.sh --test installs it)"
    page = (report / "index.html").read_text()
    probe = report / "probe.html"
    probe.write_text(page.replace("</body>", "<script>window.addEventListener('load',()=>{document.body.setAttribute("
                                  "'data-first-screen',[...document.querySelectorAll('h1,h2,p,caption,td')].filter(e=>e."
                                  "getBoundingClientRect().bottom<=800).map(e=>e.innerText).join(' | '));"
                                  "document.body.setAttribute('data-overflow',String(document.documentElement."
                                  "scrollWidth-window.innerWidth))})</script></body>"))
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--window-size=1280,800", "--virtual-time-budget=5000"]
    dom = subprocess.run([*base, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-500:]
    found = re.search(r'data-first-screen="([^"]*)"', dom.stdout)
    assert found, dom.stdout[-1000:]
    first = html.unescape(found.group(1))
    assert "Question: which of 11 candidates buys the most throughput per EUR over “today”?" in first, first
    for m in answer["metrics"]:
        best = next(p for p in m["predictions"] if p["rank"] == 1)
        p = Prediction(**{k: v for k, v in best.items() if k in Prediction.__dataclass_fields__})
        # The same change, interval and basis as `glmodel predict` gives, on the first screen.
        assert f"best buy “{best['scenario']}”, expected change {change_words(p)}" in first, (m["metric"], first)
        assert "Interpolated: inside the measured data." in first
    assert first.count("Not verified by measurement in this store.") == len(answer["metrics"])
    # the context box on the first screen: today, where the data and prices come from, not verified
    assert "What the answer rests on" in first and "network link (Gbit/s) 0.4" in first, first
    assert "illustrative unless they are your quotes" in first and "a glmodel lab whose nodes emulate" in first
    overflow = re.search(r'data-overflow="(-?\d+)"', dom.stdout)
    assert overflow is not None and int(overflow.group(1)) <= 0, "the page scrolls sideways at 1280 px"
    shot = report / "first-screen.png"
    proc = subprocess.run([*base, f"--screenshot={shot}", (report / "index.html").as_uri()], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 and shot.is_file()


def test_report_sections_and_names(decision: tuple[Path, Path, dict]) -> None:
    report, _, answer = decision
    md = (report / "report.md").read_text()
    heads = [ln[3:] for ln in md.splitlines() if ln.startswith("## ")]
    assert heads[:5] == ["The answer", "Candidates, ranked by throughput gained per price",
                         "Verification: predicted against measured", "Limits of the data", "Appendix for engineers"]
    assert "whatif.png" in md and (report / "whatif.png").is_file()
    assert "MB/s gained per price for each priced candidate, the best buy marked" in md
    # the store holds no campaign of the model's: the appendix says so instead of listing the store's others
    assert "None of the campaigns the model was fitted on is in this store" in md
    # one count of the hardware settings everywhere (a setting measured twice is one setting)
    counts = set(re.findall(r"(\d+) hardware setting|measured in (\d+) settings|hardware settings \((\d+) of them", md))
    assert len({next(c for c in found if c) for found in counts}) == 1, counts
    # People's names for inputs, never the raw column names, outside the figures' file names.
    text = re.sub(r"\]\([^)]*\)", "]", md)
    for raw in ("network_gbps", "disk_read_mbps", "client_ram_gb", "vi_low", "cpu_score"):
        assert raw not in text, raw
    assert "network link (Gbit/s)" in text
    # Each candidate's rank or reason, as predict gives it.
    for m in answer["metrics"]:
        for p in m["predictions"][1:]:
            cell = str(p["rank"]) if p["rank"] else None
            if cell:
                assert re.search(rf"^\| {re.escape(p['scenario'])} \| {cell} \|", md, re.M), p["scenario"]


def test_a_broken_model_file_is_refused_before_the_folder_is_touched(decision: tuple[Path, Path, dict],
                                                                     tmp_path: Path) -> None:
    report, _, _ = decision
    out = tmp_path / "keep"
    shutil.copytree(report, out)
    before = sorted(p.name for p in out.iterdir())
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "glmodel-model", "version": 2, "metrics": {"write": {}}}')
    done = glmodel("report", "--store", str(report.parent / "empty.db"), "--model", str(bad), "--scenarios",
                   str(DECISION), "--out", str(out), timeout=120)
    assert done.returncode != 0 and len(done.stderr.strip().splitlines()) == 1 and "bad.json" in done.stderr
    assert sorted(p.name for p in out.iterdir()) == before

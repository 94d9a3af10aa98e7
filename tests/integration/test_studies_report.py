"""The methodology studies' quick variants on the real lab, and `glmodel report` over what they stored: the
report's numbers are checked against the stored trials, computed here by hand, and the page is rendered in
headless Chromium."""

from __future__ import annotations

import re
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest

from gluster_model.lab import LabState
from gluster_model.store import open_store

from .conftest import lab_processes, glmodel

ROOT = Path(__file__).resolve().parents[2]
STUDIES = ("read_cost", "concurrent_reads", "block_size_sweep", "replication_overhead", "study_gluster",
           "study_hardware")


@pytest.fixture(scope="module")
def study_store(lab: LabState, tmp_path_factory: pytest.TempPathFactory) -> str:
    store = str(tmp_path_factory.mktemp("studies") / "studies.db")
    for study in STUDIES:
        out = glmodel("collect", "--cluster", str(lab.cluster_file), "--plan", str(ROOT / "experiments" /
                      f"{study}.yaml"), "--variant", "quick", "--store", store, timeout=900, check=True)
        assert " 0 failed" in out.stdout, out.stdout
    return store


def _trials(store: str, campaign: str) -> list[dict]:
    with open_store(store, create=False) as st:
        camp = st.campaign(campaign)
        assert camp is not None
        out = []
        for run in st.runs(int(camp.id)):
            for t in st.trials(run.id):
                if t.warmup or t.outlier or t.status != "ok":
                    continue
                for m in t.measurements:
                    out.append({**run.features, "file_size_trial": t.file_size, "metric": m.metric,
                                "value": m.value, "unit": m.unit, "idx": t.idx})
        return out


def _md_table(md: str, caption: str) -> list[dict[str, str]]:
    """The Markdown table under a bold caption, as rows of column -> cell text."""
    block = md.split(f"**{caption}", 1)[1].split("\n\n", 2)[1]
    lines = [ln for ln in block.splitlines() if ln.startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    return [dict(zip(head, (c.strip() for c in ln.strip("|").split("|")))) for ln in lines[2:]]


def _num(cell: str) -> float:
    return float(cell.replace(",", ""))


@pytest.fixture(scope="module")
def report(study_store: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report")
    model = out.parent / "hardware-model.json"
    glmodel("fit", "--data", str(ROOT / "data" / "hardware_family.csv"), "--family", "hardware", "--out",
            str(model), timeout=600, check=True)
    proc = glmodel("report", "--store", study_store, "--model", str(model), "--out", str(out), timeout=300,
                   check=True)
    assert str(out / "index.html") in proc.stdout
    return out


def test_read_cost_runs_three_sigma_protocol_and_report_matches_store(study_store: str, report: Path) -> None:
    rows = _trials(study_store, "read_cost.quick@lab")
    with open_store(study_store, create=False) as st:
        camp = st.campaign("read_cost.quick@lab")
        assert camp is not None
        for run in st.runs(int(camp.id)):
            trials = st.trials(run.id)
            assert sum(t.warmup for t in trials) >= 2  # the warm-ups ran first (again after a rejection)
            assert sum(1 for t in trials if not t.warmup and not t.outlier) == 11
    md = (report / "report.md").read_text()
    table = _md_table(md, "read throughput per file size")
    assert [r["file size"] for r in table] == ["1MB", "10MB", "100MB"]
    for r in table:
        size = {"1MB": 1 << 20, "10MB": 10 << 20, "100MB": 100 << 20}[r["file size"]]
        by = {t: [x["value"] for x in rows if x["file_size"] == size and x.get("target", "gluster") == t
                  and x["metric"] == "read"] for t in ("local", "gluster")}
        assert len(by["local"]) == len(by["gluster"]) == 11
        for t, name in (("local", "local"), ("gluster", "Gluster")):  # the store keeps KB/s, the report MB/s
            assert _num(r[f"{name} MB/s"]) == pytest.approx(statistics.fmean(by[t]) / 1024, rel=1e-3)
            assert _num(r[f"{name} sd MB/s"]) == pytest.approx(statistics.stdev(by[t]) / 1024, rel=1e-3)
        diff = statistics.fmean(by["local"]) - statistics.fmean(by["gluster"])
        assert _num(r["local − Gluster MB/s"]) == pytest.approx(diff / 1024, rel=1e-3, abs=0.01)


def test_replication_overhead_percent_matches_hand_computation(study_store: str, report: Path) -> None:
    rows = _trials(study_store, "replication_overhead.quick@lab")
    md = (report / "report.md").read_text()
    table = _md_table(md, "write/read time per file")

    def ms(copies: int, metric: str, size: int, degraded: bool = False) -> float:
        sel = [x for x in rows if x["metric"] == metric and x["file_size"] == size
               and (x.get("replica", 1) if x["layout"] == "replicate" else 1) == copies
               and bool(x.get("degraded", False)) == degraded]
        return statistics.fmean(x["file_size_trial"] / (x["value"] * 1024) * 1000 for x in sel)

    checked = 0
    for r in table:
        size = {"512KB": 512 << 10, "1MB": 1 << 20, "10MB": 10 << 20}[r["file_size"]]
        k = int(r["copies"])
        assert _num(r["write_ms"]) == pytest.approx(ms(k, "write", size), rel=1e-3)
        expected = (ms(k, "write", size) / ms(1, "write", size) - 1) * 100
        assert _num(r["write_overhead_pct"]) == pytest.approx(expected, rel=1e-3, abs=1e-3)
        if k > 1:
            deg = (ms(k, "read", size, True) / ms(k, "read", size) - 1) * 100
            assert _num(r["degraded_overhead_pct"]) == pytest.approx(deg, rel=1e-3, abs=1e-3)
            checked += 1
    sizes = {r["file_size"] for r in table}
    assert {int(r["copies"]) for r in table} == {1, 2, 3} and len(sizes) >= 2 and checked == 2 * len(sizes)
    # A degraded read really ran with a brick down, and the brick came back afterwards.
    with open_store(study_store, create=False) as st:
        camp = st.campaign("replication_overhead.quick@lab")
        assert camp is not None
        degraded = [r for r in st.runs(int(camp.id)) if r.features.get("degraded")]
        trial = st.trials(degraded[0].id)[0]
        assert "degraded: stopped brick" in (st.raw_output(trial.id, "dd") or "")
        # The brick came back each time: every run after a degraded one ran with all bricks up and finished.
        assert all(r.status == "done" for r in st.runs(int(camp.id)))


def test_concurrent_reads_keep_every_readers_time(study_store: str, report: Path, lab: LabState) -> None:
    rows = _trials(study_store, "concurrent_reads.quick@lab")
    times = [x for x in rows if x["metric"].startswith("read_time.") and x["threads"] == 4]
    assert len(times) == 2 * 8 * 4  # 2 buffers x 8 trials x 4 readers
    assert all(x["unit"] == "s" and 0 < x["value"] < 60 for x in times)
    md = (report / "report.md").read_text()
    table = _md_table(md, "per-reader read times")
    four = [r for r in table if r["readers"] == "4"]
    assert len(four) == 2 and all(r["read_times"] == "32" for r in four)
    assert lab_processes(lab, r"^dd .*glmodel-dd") == []  # in this lab's nodes


def test_block_size_sweep_auto_sizes_and_finds_plateau(study_store: str, report: Path) -> None:
    with open_store(study_store, create=False) as st:
        camp = st.campaign("block_size_sweep.quick@lab")
        assert camp is not None
        for run in st.runs(int(camp.id)):
            trials = st.trials(run.id)
            measured = [t for t in trials if not t.warmup]
            # the doubling stopped once the data phase passed the target (or at the cap), never before
            assert measured and all(t.file_size >= int(run.features["record_size"]) for t in trials)
            sizes = [t.file_size for t in trials]
            assert sizes == sorted(sizes) and all(s % int(run.features["record_size"]) == 0 for s in sizes)  # whole blocks
    md = (report / "report.md").read_text()
    table = _md_table(md, "throughput (MB/s) against block size")
    assert table[0]["block_size"] == "1" and table[-1]["block_size"] == "plateau from"
    small, big = table[0], table[-2]
    assert _num(big["dd read, cache dropped"]) > 10 * _num(small["dd read, cache dropped"])


def test_report_has_sections_and_renders_in_chromium(report: Path) -> None:
    html = (report / "index.html").read_text()
    for title in ("Campaigns and hosts", "Read cost, local vs distributed", "Concurrent reads", "Block-size sweep",
                  "Replication overhead", "The reference study&#x27;s hardware model",
                  "The reference study&#x27;s Gluster model"):
        assert title in html, title
    assert "measured network baseline" in html and "http://" not in html and "https://" not in html
    # the model's sections: validation, coefficients, importance, predicted vs measured, residuals
    for part in ("models on the same data", "the study&#x27;s MLR coefficients", "predictor importance",
                 "model_read_pred.png", "model_read_resid.png", "model_write_importance.png"):
        assert part in html, part
    images = re.findall(r'<img src="([^"]+)"', html)
    assert len(images) >= 4 and all((report / i).is_file() for i in images)
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium package is missing (scripts/setup.sh --test installs it)"
    # Every image must have loaded: a probe copy of the page records each image's natural width after load.
    probe = report / "probe.html"
    probe.write_text(html.replace("</body>", "<script>window.addEventListener('load',()=>{document.body."
                                  "setAttribute('data-images',[...document.images].map(i=>i.complete&&"
                                  "i.naturalWidth>0?1:0).join(''))})</script></body>"))
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
    dom = subprocess.run([*base, "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-500:]
    assert f'data-images="{"1" * len(images)}"' in dom.stdout
    assert dom.stdout.count("<section") >= 7
    shot = report / "shot.png"
    proc = subprocess.run([*base, "--window-size=1200,3000", f"--screenshot={shot}", (report / "index.html").as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and shot.is_file()
    import matplotlib.image

    pixels = matplotlib.image.imread(str(shot))
    assert pixels.shape[0] == 3000 and pixels.std() > 0.05  # a page with content, not a blank one

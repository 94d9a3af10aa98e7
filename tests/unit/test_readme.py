"""The README's promises that a reader checks first: its length, its two commands, and the decision example,
whose printed figures must be what the shipped data give today."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def test_the_readme_is_a_guide_with_two_commands_and_a_reference_beside_it() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 250
    block = text[text.index("```sh", text.index("## Two commands")):]
    commands = [line for line in block[: block.index("```", 5)].splitlines()[1:] if line.strip()]
    assert [c.split("#")[0].strip() for c in commands] == ["bash scripts/main.sh", "bash scripts/test.sh"]
    assert (ROOT / "docs" / "reference.md").exists() and "## Cluster file" in (ROOT / "docs" / "reference.md").read_text()
    too_wide = [i for i, line in enumerate(text.splitlines(), 1) if len(line) > 120 and not line.startswith("Best buy")]
    assert too_wide == []


def test_the_readme_decision_example_is_what_the_shipped_data_print(tmp_path: Path) -> None:
    """Fit the shipped emulated dataset as the main job does and ask its decision file: the README's printed
    lines must appear word for word (figures included), so a change of model or data that moves them fails
    here until the README says the new figures."""
    text = README.read_text()
    start = text.index("```text", text.index("## What the main job answers")) + len("```text")
    shown = [line for line in text[start: text.index("```", start)].splitlines() if line.strip()]
    assert len(shown) >= 3 and any(line.startswith("Best buy for write") for line in shown)
    model = tmp_path / "emulated-model.json"
    env = {"COLUMNS": "200", "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "-m", "gluster_model.cli", "fit", "--data", "data/hardware_emulated.csv",
                    "--family", "hardware", "--out", str(model)], cwd=ROOT, check=True, capture_output=True,
                   env=env, timeout=300)
    out = subprocess.run([sys.executable, "-m", "gluster_model.cli", "predict", "--model", str(model),
                          "--scenarios", "experiments/whatif/emulated_decision.yaml"], cwd=ROOT, check=True,
                         capture_output=True, text=True, env=env, timeout=120).stdout
    printed = [re.sub(r"\s+", " ", line).strip() for line in out.splitlines()]
    for line in shown:
        assert re.sub(r"\s+", " ", line).strip() in printed, (line, out[:2000])
    # the same answer on a terminal of 80 and 120 columns: every line fits, and no figure is cut to "…"
    for width in ("80", "120"):
        for details in ([], ["--details"]):
            out = subprocess.run([sys.executable, "-m", "gluster_model.cli", "predict", "--model", str(model),
                                  "--scenarios", "experiments/whatif/emulated_decision.yaml", *details], cwd=ROOT,
                                 check=True, capture_output=True, text=True, env={**env, "COLUMNS": width},
                                 timeout=120).stdout
            assert "…" not in out and max(len(line) for line in out.splitlines()) <= int(width), (width, details)
            assert re.search(r"\d+\.\d–\d", out)  # the intervals are there, whole

"""`glmodel compare` on the real lab: false alarms on an unchanged lab and slowdowns injected by throttling the
bricks' disks by a known share.

One plan (replica 3 writes with O_DIRECT, bound by the bricks' disks at 40 MB/s, every file on every brick:
no placement draw; two record sizes, three trials a run) is collected three times on an unchanged lab, then
once each with the disks' write rate 5%, 10% and 20% lower. Every pair of unchanged campaigns is compared
(each should exit 0), and each throttled campaign against the first (each row's ratio should hold the injected
one inside its interval, and a row is called slower when the change is beyond the 5% margin).

With ``--plan`` (a shipped plan such as experiments/plans/regression.yaml) only the null part, on that plan as a
user runs it before and after a change glmodel cannot make: its `sides` factor fixed at its first (before) level
and the design's `sides` dropped, collected three times on the unchanged lab, every pair compared, and the third
against `last` (the second).

Run (root; a temporary 3-node lab unless --lab-dir names one up):
    .venv/bin/python benchmarks/compare_lab.py [--lab-dir DIR] [--json] [--plan experiments/plans/regression.yaml]
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
GLMODEL = [sys.executable, "-m", "gluster_model.cli"]
BASE_MBPS = 40
INJECTED = (0.05, 0.10, 0.20)
PLAN = {"name": "cmplab", "factors": {"layout": "replicate", "replica": 3, "file_size": "24MB",
                                      "record_size": ["256KB", "1MB"], "threads": 3, "sync": "odirect"},
        "workload": {"tests": ["write"]},
        "protocol": {"warmups": 0, "repetitions": 3, "outlier_rule": "none", "remount": "never"},
        "baselines": {"network": False, "disk": True}}


def glmodel(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([*GLMODEL, *args], capture_output=True, text=True, cwd=ROOT)
    if check and out.returncode != 0:
        sys.exit(f"glmodel {' '.join(args)} exited {out.returncode}: {out.stderr[-1500:]}")
    return out


def compare(store: str, campaign: str, against: str) -> dict[str, Any]:
    out = glmodel("compare", "--store", store, "--campaign", campaign, "--against", against, "--json", check=False)
    result: dict[str, Any] = json.loads(out.stdout)
    result["exit"] = out.returncode
    return result


def without_sides(doc: dict[str, Any]) -> dict[str, Any]:
    """A plan with an interleaved comparison as collected before and after a change: its `sides` factor at its
    first level, the design's `sides` dropped."""
    design = dict(doc.get("design") or {})
    factor = design.pop("sides", None)
    factors = dict(doc["factors"])
    if factor is not None:
        levels = factors[factor]
        factors[factor] = levels[0] if isinstance(levels, list) else levels
    return {**doc, "factors": factors, "design": design}


def null_on_plan(plan_file: Path, lab_dir: Path | None) -> list[dict[str, Any]]:
    """The plan collected three times on an unchanged lab, every pair compared (and the third against last)."""
    with tempfile.TemporaryDirectory() as tmp:
        lab = lab_dir or Path(tmp) / "lab"
        if lab_dir is None:
            glmodel("lab", "up", "--nodes", "3", "--dir", str(lab))
        plan, store = Path(tmp) / "plan.yaml", str(Path(tmp) / "null.db")
        plan.write_text(yaml.safe_dump(without_sides(yaml.safe_load(plan_file.read_text()))))
        try:
            nulls = [f"null{i}" for i in (1, 2, 3)]
            for name in nulls:
                glmodel("collect", "--cluster", str(lab / "lab.yaml"), "--plan", str(plan), "--store", store,
                        "--campaign", name)
        finally:
            if lab_dir is None:
                glmodel("lab", "down", "--dir", str(lab), check=False)
        rows: list[dict[str, Any]] = []
        for (a, b), against in [*((pair, pair[0]) for pair in itertools.combinations(nulls, 2)),
                                ((nulls[1], nulls[2]), "last")]:
            r = compare(store, b, against)
            rows.append({"pair": f"{b} vs {against}", "injected": 0.0, "exit": r["exit"],
                         "rows": [(x["ratio"], x["low"], x["high"], x["verdict"]) for x in r["rows"]]})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lab-dir", type=Path)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--plan", type=Path, help="only the null part, on this plan (its sides fixed at side A)")
    args = ap.parse_args()
    if args.plan is not None:
        show(null_on_plan(args.plan, args.lab_dir), args.json)
        return
    with tempfile.TemporaryDirectory() as tmp:
        lab = args.lab_dir or Path(tmp) / "lab"
        if args.lab_dir is None:
            glmodel("lab", "up", "--nodes", "3", "--dir", str(lab))
        plan, store = Path(tmp) / "cmplab.yaml", str(Path(tmp) / "cmplab.db")
        plan.write_text(yaml.safe_dump(PLAN))
        try:
            glmodel("lab", "node", "--dir", str(lab), "--disk", f"{BASE_MBPS}MB/s", "--backing", "ext4", "--size", "1GB")
            nulls = [f"null{i}" for i in (1, 2, 3)]
            for name in nulls:
                glmodel("collect", "--cluster", str(lab / "lab.yaml"), "--plan", str(plan), "--store", store,
                        "--campaign", name)
            slowed = []
            for share in INJECTED:
                name = f"slower{round(share * 100)}"
                glmodel("lab", "node", "--dir", str(lab), "--disk-write", f"{BASE_MBPS * (1 - share):g}MB/s")
                glmodel("collect", "--cluster", str(lab / "lab.yaml"), "--plan", str(plan), "--store", store,
                        "--campaign", name)
                slowed.append((share, name))
        finally:
            glmodel("lab", "node", "--dir", str(lab), "--disk", "unlimited", check=False)
            if args.lab_dir is None:
                glmodel("lab", "down", "--dir", str(lab), check=False)
        rows: list[dict[str, Any]] = []
        for a, b in itertools.combinations(nulls, 2):
            r = compare(store, b, a)
            rows.append({"pair": f"{b} vs {a}", "injected": 0.0, "exit": r["exit"],
                         "rows": [(x["ratio"], x["low"], x["high"], x["verdict"]) for x in r["rows"]]})
        for share, name in slowed:
            r = compare(store, name, nulls[0])
            rows.append({"pair": f"{name} vs {nulls[0]}", "injected": share, "exit": r["exit"],
                         "rows": [(x["ratio"], x["low"], x["high"], x["verdict"]) for x in r["rows"]]})
    show(rows, args.json)


def show(rows: list[dict[str, Any]], as_json: bool) -> None:
    if as_json:
        print(json.dumps(rows, indent=1))
        return
    for r in rows:
        truth = 1 - r["injected"]
        cells = "; ".join(f"{ratio:.3f} [{lo:.3f}, {hi:.3f}] {verdict}"
                          f"{'' if lo <= truth <= hi else ' (misses ' + format(truth, '.2f') + ')'}"
                          for ratio, lo, hi, verdict in r["rows"])
        print(f"{r['pair']:<20} injected {r['injected']:>4.0%}  exit {r['exit']}  {cells}")


if __name__ == "__main__":
    main()

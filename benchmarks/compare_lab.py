"""`glmodel compare` on the real lab: false alarms on an unchanged lab and slowdowns injected by throttling the
bricks' disks by a known share.

One plan (replica 3 writes with O_DIRECT, bound by the bricks' disks at 40 MB/s, every file on every brick:
no placement draw; two record sizes, three trials a run) is collected three times on an unchanged lab, then
once each with the disks' write rate 5%, 10% and 20% lower. Every pair of unchanged campaigns is compared
(each should exit 0), and each throttled campaign against the first (each row's ratio should hold the injected
one inside its interval, and a row is called slower when the change is beyond the 5% margin).

Run (root; a temporary 3-node lab unless --lab-dir names one up):
    .venv/bin/python benchmarks/compare_lab.py [--lab-dir DIR] [--json]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lab-dir", type=Path)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
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
    if args.json:
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

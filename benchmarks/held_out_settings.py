"""Leave-one-hardware-setting-out through the command line: for each hardware setting of a dataset, `glmodel
fit` on the others' rows, then predict every run of the held-out setting from the model file (its selected
model, or --use), and print MAPE and the share of runs inside the 90% prediction interval, per metric, and that
share for link-bound and disk-bound runs apart (the stage with the least measured capacity).

This is the test a purchase question faces: hardware the model was not fitted on.

Run: .venv/bin/python benchmarks/held_out_settings.py [--data data/hardware_emulated.csv] [--use physical]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from gluster_model.dataset import read_table
    from gluster_model.model import artifact
    from gluster_model.model.artifact import config_columns
    from gluster_model.model.bottleneck import raw_binding
    from gluster_model.model.features import with_derived
    from gluster_model.model.groups import cv_groups

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "hardware_emulated.csv")
    ap.add_argument("--use", default=None, help="Predict with this model of the file instead of the selected one.")
    ap.add_argument("--level", type=float, default=0.9)
    args = ap.parse_args()
    frame = read_table(args.data)
    frame = frame[frame["run_status"] == "done"] if "run_status" in frame else frame
    # the settings `glmodel fit` holds out (a setting measured again, replicate runs, is one with its first)
    setting = pd.Series(cv_groups(frame.reset_index(drop=True))[0], index=frame.index)
    errors: dict[str, list[float]] = {"write": [], "read": []}
    inside: dict[str, list[bool]] = {"write": [], "read": []}
    chosen: dict[str, list[str]] = {"write": [], "read": []}
    stage: dict[str, list[str]] = {"write": [], "read": []}  # link-bound or disk-bound, by the measured stages
    with tempfile.TemporaryDirectory() as tmp:
        for held in sorted(setting.unique()):
            train, test = frame[setting != held], frame[setting == held]
            data, out = Path(tmp) / "train.csv", Path(tmp) / "model.json"
            train.to_csv(data, index=False)
            subprocess.run([sys.executable, "-m", "gluster_model.cli", "fit", "--data", str(data), "--family",
                            "hardware", "--metric", "write", "--metric", "read", "--bootstrap", "0", "--out",
                            str(out), "--json"], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
            mf = artifact.load(out)
            for metric in errors:
                rows = test[test[metric].notna() & (test[metric] > 0)]
                configs = rows.drop(columns=list(errors)).to_dict("records")  # every input the run had
                p = mf.predict(configs, args.level, metric=metric, use=args.use)
                y = rows[metric].to_numpy(float)
                errors[metric] += list(np.abs(p.value - y) / y * 100)
                inside[metric] += list((y >= p.low) & (y <= p.high))
                chosen[metric].append(p.model)
                bound = raw_binding(with_derived(config_columns(configs), metric), metric)
                stage[metric] += ["disk-bound" if b == 2 else "link-bound" for b in bound]
    print(f"{args.data.name}: {setting.nunique()} hardware settings, each held out in turn "
          f"({args.use or 'selected model'}, {args.level:.0%} intervals)")
    for metric in errors:
        models = pd.Series(chosen[metric]).value_counts().to_dict()
        print(f"  {metric:5}  MAPE {np.mean(errors[metric]):5.1f}%  median APE {np.median(errors[metric]):5.1f}%  "
              f"inside {np.mean(inside[metric]):.0%} of {len(inside[metric])} runs  models chosen {models}")
        for kind in ("link-bound", "disk-bound"):
            sel = [i for i, k in zip(inside[metric], stage[metric]) if k == kind]
            print(f"         {kind}: inside {np.mean(sel):.0%} of {len(sel)} runs")


if __name__ == "__main__":
    main()

"""The dry run's duration estimate beside what the shipped campaigns' trials took.

For every shipped table whose plan is in ``experiments/``, the plan is expanded on a lab with as many servers and
clients (apart from them) as the table's runs used, and estimated as ``collect --dry-run`` does on an empty store
(no history: the stated per-engine costs and the hardware settings' stage rates); the recorded time is the sum
of the seconds of the trials of the plan's own campaigns in the table (verification campaigns of a proof left
out). Both exclude volume set-up and baselines, which the tables do not record.

Run: .venv/bin/python benchmarks/estimate_accuracy.py [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROOFS = ("", "first_", "third_", "fourth_", "fifth_", "sixth_", "seventh_", "eighth_", "ninth_")


def shipped() -> list[tuple[str, str, str | None]]:
    """(table, plan, variant) of every shipped table collected by a plan in experiments/."""
    out: list[tuple[str, str, str | None]] = [
        ("gluster_config", "plans/gluster_config.yaml", None), ("hardware_family", "plans/hardware_family.yaml", None),
        ("hardware_grid", "plans/hardware_grid.yaml", None), ("hardware_emulated", "plans/hardware_emulated.yaml", None)]
    for proof in PROOFS:
        plan = "upgrade_proof/plan.yaml" if proof in ("", "first_") else f"upgrade_proof/plan_{proof[:-1]}.yaml"
        out += [(f"upgrade_proof_{proof}{v}", plan, v) for v in ("balanced", "disk_bound", "link_bound")]
    return out


def lab_cluster(tmp: Path, servers: int, clients: int) -> Path:
    """A lab cluster file (never connected to) of ``servers`` servers and ``clients`` clients apart."""
    state = tmp / "state"
    state.mkdir(exist_ok=True)
    hosts = [f"10.213.9.{i}" for i in range(1, servers + clients + 1)]
    path = tmp / f"lab{servers}x{clients}.yaml"
    path.write_text("name: lab\nlab: {state_dir: " + str(state) + "}\nssh: {user: root}\n"
                    "defaults: {brick_paths: [/b]}\nservers:\n" + "".join(f"  - {h}\n" for h in hosts[:servers])
                    + "clients:\n" + "".join(f"  - {h}\n" for h in hosts[servers:]))
    return path


def main() -> None:
    import pandas as pd

    from gluster_model.campaign.estimate import TrialCost, estimate_seconds
    from gluster_model.campaign.records import campaign_name
    from gluster_model.config.cluster import load_cluster
    from gluster_model.plan.file import expand, load_plan

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for table, plan_path, variant in shipped():
            d = pd.read_csv(ROOT / "data" / f"{table}.csv", low_memory=False)
            spec = load_cluster(lab_cluster(Path(tmp), int(d["servers"].max()), int(d["clients"].max())),
                                connecting=False)
            plan = load_plan(ROOT / "experiments" / plan_path, variant)
            expanded = expand(plan, spec, plan_path)
            base = campaign_name(plan, spec).split("@")[0] + "@"
            d = d[d["campaign"].str.startswith(base)].drop_duplicates(["campaign", "run_id", "trial"])
            estimate = (estimate_seconds(expanded, plan.protocol, baselines=None)
                        - TrialCost().volume_s * len(expanded.volumes))
            recorded = float(d["seconds"].sum())
            rows.append({"table": table, "trials": int(len(d)), "recorded_min": recorded / 60,
                         "estimate_min": estimate / 60, "ratio": estimate / recorded})
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'table':36} {'trials':>6} {'recorded':>9} {'estimate':>9} {'ratio':>6}")
    for r in rows:
        print(f"{r['table']:36} {r['trials']:6d} {r['recorded_min']:7.1f} m {r['estimate_min']:7.1f} m "
              f"{r['ratio']:6.2f}")
    inside = sum(0.7 <= r["ratio"] <= 1.3 for r in rows)
    print(f"within ±30%: {inside} of {len(rows)}; ratio median {sorted(r['ratio'] for r in rows)[len(rows) // 2]:.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Collect the upgrade proof (experiments/upgrade_proof): for each today, the bottleneck plan below it, a fit on
# those data alone, and `glmodel verify` of the upgrades in whatif/<today>.yaml (three trials a run). About 25-30
# minutes a today on a 2-core machine. The stores and model files go to $1 (default upgrade-proof/); export
# them with `glmodel export` for data/ (benchmarks/upgrade_from_below.py reads the exported tables).
#   bash benchmarks/upgrade_proof_collect.sh [OUT-DIR] [TODAY...]
# PLAN=experiments/upgrade_proof/plan_third.yaml for the third proof (plan.yaml: the first and second);
# PLAN=.../plan_fourth.yaml WHATIF=experiments/upgrade_proof/whatif_fourth for the fourth (plan_fifth.yaml and
# whatif_fifth for the fifth, plan_sixth.yaml and whatif_sixth for the sixth, plan_seventh.yaml and whatif_seventh
# for the seventh, plan_eighth.yaml and whatif_eighth for the eighth, plan_ninth.yaml and whatif_ninth for the ninth).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-upgrade-proof}
shift || true
todays=("$@")
[ "${#todays[@]}" -eq 0 ] && todays=(link_bound disk_bound balanced)
glmodel=${GLMODEL:-$here/.venv/bin/glmodel}
lab=${GLMODEL_LAB_DIR:-$out/lab}
mkdir -p "$out"
[ -e "$lab/lab.yaml" ] || "$glmodel" lab up --nodes 4 --client-nodes 2 --brick-size 2GB --dir "$lab"
plan=${PLAN:-$here/experiments/upgrade_proof/plan.yaml}
for today in "${todays[@]}"; do
  store=$out/$today.db
  echo "== $today: the bottleneck plan below it ($(date -u +%H:%M:%S))"
  "$glmodel" collect --cluster "$lab/lab.yaml" --plan "$plan" --variant "$today" --store "$store"
  "$glmodel" fit --store "$store" --family hardware --out "$out/$today-below.json" >"$out/$today-fit.txt"
  echo "== $today: verify the upgrades ($(date -u +%H:%M:%S))"
  "$glmodel" verify --cluster "$lab/lab.yaml" --model "$out/$today-below.json" \
    --scenarios "${WHATIF:-$here/experiments/upgrade_proof/whatif}/$today.yaml" --plan "$plan" --variant "${today}_verify" \
    --store "$store" --json >"$out/$today-verify.json" || echo "verify of $today exited $?"
  # every campaign, the verification ones included
  "$here/.venv/bin/python" "$here/benchmarks/export_all_campaigns.py" "$store" "$out/$today.csv"
done
echo "== done ($(date -u +%H:%M:%S))"

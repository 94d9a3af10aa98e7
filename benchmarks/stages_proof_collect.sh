#!/usr/bin/env bash
# Collect the stages proof (experiments/upgrade_proof/plan_stages.yaml) through the path a user takes: the lab
# addressed as a plain cluster (no `lab:`, emulation allowed), for each today the plan below it, a fit on those
# data alone, the what-if file from today's measured inputs, `predict`, and `glmodel verify` of the upgrades
# (three trials a run, built by emulation). Stores, model files and JSON go to $1 (default stages-proof/);
# benchmarks/stages_proof.py figures --dir reads them.
#   bash benchmarks/stages_proof_collect.sh [OUT-DIR] [TODAY...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-stages-proof}" && cd "${1:-stages-proof}" && pwd)
shift || true
todays=("$@")
[ "${#todays[@]}" -eq 0 ] && todays=(round_trip)
glmodel=${GLMODEL:-$here/.venv/bin/glmodel}
python=$here/.venv/bin/python
lab=${GLMODEL_LAB_DIR:-$out/lab}
# an IOPS limit holds a brick's writes only on a block device of its own: the iops today's bricks are ext4 loops
backing=dir
for t in "${todays[@]}"; do case $t in iops*) backing=ext4 ;; esac; done
[ -e "$lab/lab.yaml" ] || "$glmodel" lab up --nodes 4 --client-nodes 2 --backing "$backing" --dir "$lab"
plain=$out/plain.yaml
# the lab as a user's cluster: no lab state to change hardware with, emulation allowed, a veth's speed given
"$python" -c 'import sys; from pathlib import Path
from gluster_model.lab.clusterfile import write_plain_cluster_file
write_plain_cluster_file(Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], name="lab-plain",
                         network={"name": "2G", "gbps": 2})' "$lab" "$plain" "$out/records"
plan=$here/experiments/upgrade_proof/plan_stages.yaml
for today in "${todays[@]}"; do
  store=$out/$today.db
  echo "== $today: the plan below it ($(date -u +%H:%M:%S))"
  "$glmodel" collect --yes --cluster "$plain" --plan "$plan" --variant "$today" --store "$store"
  "$glmodel" fit --store "$store" --family hardware --out "$out/$today-below.json" >"$out/$today-fit.txt"
  "$python" "$here/benchmarks/stages_proof.py" whatif --store "$store" --today "$today" --out "$out/$today-whatif.yaml"
  # the purchase answer from the bottleneck model, as benchmarks/upgrade_from_below.py takes it: the model `fit`
  # selects by held-out R² can be one that cannot answer beyond the data (the round-trip today's: trees)
  "$glmodel" predict --model "$out/$today-below.json" --scenarios "$out/$today-whatif.yaml" --use bottleneck \
    --details >"$out/$today-predict.txt"
  echo "== $today: verify the upgrades ($(date -u +%H:%M:%S))"
  "$glmodel" verify --yes --cluster "$plain" --model "$out/$today-below.json" --scenarios "$out/$today-whatif.yaml" \
    --plan "$plan" --variant "${today}_verify" --store "$store" --json >"$out/$today-verify.json" \
    || echo "verify of $today exited $?"
  # every campaign, the verification ones included
  "$python" "$here/benchmarks/export_all_campaigns.py" "$store" "$out/$today.csv"
done
echo "== done ($(date -u +%H:%M:%S))"

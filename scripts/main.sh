#!/usr/bin/env bash
# Set up from nothing (as root) and run glmodel's main job end to end on the local lab:
# bring up a 3-node GlusterFS lab, check every host, run a short real campaign into ./glmodel.db
# (resumable: running this again skips what is done), list its runs, export the trial table, fit it, and ask the
# fitted model a what-if question (experiments/whatif/lab.yaml), fit the shipped datasets and ask them the study's
# purchase question, run the read-cost study at its quick scale, and
# write the report (results/report/index.html).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh"
cd "$here"
lab_dir=${GLMODEL_LAB_DIR:-$here/glmodel-lab}
store=${GLMODEL_STORE:-$here/glmodel.db}
glmodel=$here/.venv/bin/glmodel

mkdir -p "$here/results"  # outputs go here; glmodel makes no directory it is not asked for
"$glmodel" lab up --nodes 3 --dir "$lab_dir"
"$glmodel" check --cluster "$lab_dir/lab.yaml"
"$glmodel" collect --cluster "$lab_dir/lab.yaml" --plan experiments/plans/smoke.yaml --store "$store"
"$glmodel" runs list --store "$store" --campaign smoke@lab
"$glmodel" export --store "$store" --campaign smoke@lab --format csv --out "$here/results/smoke.csv"
"$glmodel" fit --store "$store" --campaign smoke@lab --out "$here/results/smoke-model.json"
"$glmodel" predict --model "$here/results/smoke-model.json" --scenarios experiments/whatif/lab.yaml \
    --csv "$here/results/smoke-whatif.csv" --figure "$here/results/smoke-whatif.png"
# The shipped hardware-family dataset (48 lab runs over link rate, brick filesystem, servers, clients, replica,
# shard, file size: data/README.md): the study's hardware model, fitted and asked the study's purchase question.
"$glmodel" fit --data data/hardware_family.csv --family hardware --out "$here/results/hardware-model.json"
"$glmodel" predict --model "$here/results/hardware-model.json" --scenarios experiments/whatif/study_decision.yaml \
    --csv "$here/results/hardware-whatif.csv"
# The emulated-hardware dataset (72 lab runs, 12 settings of link, disk, RAM and CPU chosen to vary
# independently: data/README.md): the study's hardware model inside measured data, asked the study's decision
# (every candidate interpolated, none extrapolated).
"$glmodel" fit --data data/hardware_emulated.csv --family hardware --out "$here/results/emulated-model.json"
"$glmodel" predict --model "$here/results/emulated-model.json" --scenarios experiments/whatif/emulated_decision.yaml \
    --csv "$here/results/emulated-whatif.csv"
# A methodology study at its quick scale (read cost, local vs distributed: 3-sigma rule with re-run), then the
# report over everything in the store, with the smoke campaign's model.
"$glmodel" collect --cluster "$lab_dir/lab.yaml" --plan experiments/read_cost.yaml --variant quick --store "$store"
"$glmodel" report --store "$store" --model "$here/results/smoke-model.json" --out "$here/results/report"
echo
echo "Report: $here/results/report/index.html (summary: $here/results/report/report.md)"
echo "The lab stays up for you to use. Cluster file: $lab_dir/lab.yaml; results: $store, results/smoke.csv, results/smoke-model.json, results/smoke-whatif.{csv,png}, results/hardware-model.json, results/hardware-whatif.csv, results/emulated-model.json, results/emulated-whatif.csv"
echo "Tear it down with: $glmodel lab down --dir $lab_dir"

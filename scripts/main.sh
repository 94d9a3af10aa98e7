#!/usr/bin/env bash
# Set up from nothing (as root) and run glmodel's main job end to end on the local lab:
# bring up a 3-node GlusterFS lab, check every host, run a short real campaign into ./glmodel.db
# (resumable: running this again skips what is done), list its runs, export the trial table, fit it, and ask the
# fitted model a what-if question (experiments/whatif/lab.yaml), run the read-cost study at its quick scale, fit
# the shipped datasets and ask them the study's purchase question, write the report that opens with the answer
# (results/report/index.html), and end on the decision.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh"
cd "$here"
lab_dir=${GLMODEL_LAB_DIR:-$here/glmodel-lab}
store=${GLMODEL_STORE:-$here/glmodel.db}
glmodel=$here/.venv/bin/glmodel

mkdir -p "$here/results/logs"  # outputs go here; glmodel makes no directory it is not asked for
logs=$here/results/logs

# Long outputs (every fit table) go to a log file; the terminal gets the command's last line. A failure shows
# the whole log.
logged() {
  local name=$1; shift
  if ! "$@" >"$logs/$name.txt" 2>&1; then
    cat "$logs/$name.txt" >&2
    exit 1
  fi
  tail -n 1 "$logs/$name.txt"
}

"$glmodel" lab up --nodes 3 --dir "$lab_dir"
"$glmodel" check --cluster "$lab_dir/lab.yaml"
"$glmodel" collect --cluster "$lab_dir/lab.yaml" --plan experiments/plans/smoke.yaml --store "$store"
"$glmodel" runs list --store "$store" --campaign smoke@lab
"$glmodel" export --store "$store" --campaign smoke@lab --format csv --out "$here/results/smoke.csv"
logged smoke-fit "$glmodel" fit --store "$store" --campaign smoke@lab --out "$here/results/smoke-model.json"
"$glmodel" predict --model "$here/results/smoke-model.json" --scenarios experiments/whatif/lab.yaml \
    --csv "$here/results/smoke-whatif.csv" --figure "$here/results/smoke-whatif.png"
# A methodology study at its quick scale (read cost, local vs distributed: 3-sigma rule with re-run).
"$glmodel" collect --cluster "$lab_dir/lab.yaml" --plan experiments/read_cost.yaml --variant quick --store "$store"
# The shipped hardware-family dataset (48 lab runs over link rate, brick filesystem, servers, clients, replica,
# shard, file size: data/README.md), asked the study's purchase question at the study's own scale (10 GbE,
# InfiniBand): every candidate lies outside what was measured, so predict says so in a few lines instead of
# printing guesses (--details prints them).
logged family-fit "$glmodel" fit --data data/hardware_family.csv --family hardware \
    --out "$here/results/hardware-model.json"
"$glmodel" predict --model "$here/results/hardware-model.json" --scenarios experiments/whatif/study_decision.yaml \
    --csv "$here/results/hardware-whatif.csv"
# The emulated-hardware dataset (lab nodes as small machines: link, disk, RAM and CPU set and measured in 17
# settings, data/README.md): the study's purchase decision answered inside measured data, and the report that
# opens with it.
logged emulated-fit "$glmodel" fit --data data/hardware_emulated.csv --family hardware \
    --out "$here/results/emulated-model.json"
"$glmodel" report --store "$store" --model "$here/results/emulated-model.json" \
    --scenarios experiments/whatif/emulated_decision.yaml --out "$here/results/report"
echo
echo "== The decision: which upgrade buys the most throughput per euro? =="
"$glmodel" predict --model "$here/results/emulated-model.json" --scenarios experiments/whatif/emulated_decision.yaml \
    --csv "$here/results/emulated-whatif.csv" --figure "$here/results/emulated-whatif.png"
echo
echo "Report: $here/results/report/index.html (Markdown: $here/results/report/report.md)"
echo "Every table of the fits: $logs/; the lab stays up (cluster file $lab_dir/lab.yaml, store $store)."
echo "Tear it down with: $glmodel lab down --dir $lab_dir"

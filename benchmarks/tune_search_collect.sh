#!/usr/bin/env bash
# Collect the tuning searches of experiments/tune_search (one store per workload) on a 4-node lab with clients
# apart from servers, and export each store's trials for data/tune_search_<workload>.csv, which
# benchmarks/tune_verified.py reads. About 5-20 minutes a workload on a 2-core machine; leave the machine
# otherwise idle (a trial disturbed by another process is flagged and measured again).
#   bash benchmarks/tune_search_collect.sh [OUT-DIR] [WORKLOAD...]
# VARIANT=rtt: the plans' variant with a round trip of about half a millisecond (files tune_search_<w>_rtt.csv);
# VARIANT=wide LAB_NODES=6: the same round trip over a 4-brick distribute volume (listing and smallfile).
# VARIANT=replica3 LAB_NODES=6 LAB_CLIENTS=3: the read search over replica 3, three servers and three clients.
# VARIANT=replica3_disks LAB_NODES=5: the read search over replica 3 on three servers whose disks bound reads.
# VARIANT=stretched: the random-write search across a round trip of +1 ms (every received packet held 500 us).
# VARIANT=shared: the read search with both clients reading one file (a dataset many hosts read).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-tune-search}
shift || true
workloads=("$@")
[ "${#workloads[@]}" -eq 0 ] && workloads=(read smallfile listing write randwrite)
glmodel=${GLMODEL:-$here/.venv/bin/glmodel}
lab=${GLMODEL_LAB_DIR:-$out/lab}
mkdir -p "$out"
[ -e "$lab/lab.yaml" ] || "$glmodel" lab up --nodes "${LAB_NODES:-4}" --client-nodes "${LAB_CLIENTS:-2}" --brick-size 4GB --dir "$lab"
variant=${VARIANT:-}
for w in "${workloads[@]}"; do
  name=$w${variant:+_$variant}
  store=$out/$name.db
  echo "== $name ($(date -u +%H:%M:%S))"
  "$glmodel" collect --cluster "$lab/lab.yaml" --plan "$here/experiments/tune_search/$w.yaml" \
    ${variant:+--variant "$variant"} --store "$store"
  "$glmodel" export --store "$store" --out "$out/tune_search_$name.csv"
done

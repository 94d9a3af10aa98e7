#!/usr/bin/env bash
# Set up from nothing (as root) and run glmodel's main job end to end on the local lab:
# bring up a 3-node GlusterFS lab and check that every host is ready.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh"
cd "$here"
lab_dir=${GLMODEL_LAB_DIR:-$here/glmodel-lab}
glmodel=$here/.venv/bin/glmodel

"$glmodel" lab up --nodes 3 --dir "$lab_dir"
"$glmodel" check --cluster "$lab_dir/lab.yaml"
echo
echo "The lab stays up for you to use. Cluster file: $lab_dir/lab.yaml"
echo "Tear it down with: $glmodel lab down --dir $lab_dir"

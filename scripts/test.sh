#!/usr/bin/env bash
# Set up from nothing (as root) and run the whole test suite: the type check; the integration tests against
# real local GlusterFS labs, one lab per process, each process in a network namespace of its own, a test file's
# tests together in one process; then, in one process, the few that need the machine alone; then the unit
# tests in parallel processes, one per core (pytest-xdist). Extra arguments go to every run; with an argument
# that is not an option among them (a test path, or an option's value such as -k's), one pytest run of the
# arguments as given.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh" --test || exit 1
cd "$here" || exit 1

echo "== mypy (strict) =="
.venv/bin/python -m mypy || exit 1

# pytest's 5 is "collected no tests": never a pass here
run() {
  .venv/bin/python -m pytest "$@"
  local rc=$?
  if [ "$rc" -eq 5 ]; then
    echo "test.sh: pytest collected no tests; that is a failure here" >&2
    return 1
  fi
  return "$rc"
}

for arg in "$@"; do
  case "$arg" in
    -*) ;;
    *) echo "== pytest $* =="; run "$@"; exit $? ;;
  esac
done

workers=$(nproc 2>/dev/null || echo 2)
# One lab more than cores, four at most: a lab test mostly waits on its throttled links and disks (on two cores
# three labs used 6.5 CPU-minutes of pytest and the CLI in 13 minutes), and more labs than that share one disk.
labs=$(( workers + 1 > 4 ? 4 : workers + 1 ))
echo "== pytest: integration ($labs labs) =="
run tests/integration -n "$labs" --dist loadfile --no-loadscope-reorder -m "not alone" "$@"
integration=$?
echo "== pytest: integration, the tests that need the machine alone (one lab) =="
run tests/integration -m alone "$@" || integration=1
echo "== pytest: unit ($workers processes) =="
run tests/unit -n "$workers" --dist loadfile "$@"
unit=$?
[ "$integration" -eq 0 ] && [ "$unit" -eq 0 ]

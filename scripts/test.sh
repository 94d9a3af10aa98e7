#!/usr/bin/env bash
# Set up from nothing (as root) and run the whole test suite: unit tests, type check, and the integration
# tests against a real local GlusterFS lab. Extra arguments go to pytest.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/scripts/setup.sh" --test || exit 1
cd "$here" || exit 1

echo "== mypy (strict) =="
.venv/bin/python -m mypy || exit 1

echo "== pytest =="
.venv/bin/python -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "test.sh: pytest collected no tests; that is a failure here" >&2
  exit 1
fi
exit "$rc"

#!/usr/bin/env bash
# Install everything glmodel needs on a Debian bookworm machine, as root, and build the virtual environment.
# Idempotent: a second run checks, finds everything in place, and changes nothing.
#
#   scripts/setup.sh            system packages + .venv with glmodel
#   scripts/setup.sh --test     the same, plus PostgreSQL and the test extra (pytest, mypy, psycopg)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
venv=${GLMODEL_VENV:-$here/.venv}
with_test=0
for arg in "$@"; do
  case "$arg" in
    --test) with_test=1 ;;
    *) echo "setup.sh: unknown argument '$arg' (allowed: --test)" >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: run as root (it installs Debian packages with apt-get)" >&2
  exit 2
fi

export DEBIAN_FRONTEND=noninteractive

# iozone3 lives in Debian's non-free component. Add that component for the bookworm suite in a file of our own,
# so the distribution's sources are never edited and a re-run finds the file already there.
nonfree=/etc/apt/sources.list.d/glmodel-bookworm-non-free.sources
if ! grep -rqsE '^(deb .* bookworm .*non-free( |$)|Components:.*non-free( |$))' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  cat >"$nonfree" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  rm -f /var/lib/apt/lists/.glmodel-updated
fi

packages=(glusterfs-server glusterfs-client iozone3 iperf3 fio openssh-server openssh-client
          iproute2 iptables procps util-linux e2fsprogs xfsprogs python3 python3-venv)
# The tests also run the store against a real PostgreSQL server they start themselves (the store's unit tests
# against SQLite and PostgreSQL both, where they do not test the SQLite file itself; the collect and the
# server-going-away tests), and render the report in headless Chromium.
[ "$with_test" -eq 1 ] && packages+=(postgresql chromium)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ ! -e /var/lib/apt/lists/.glmodel-updated ]; then
    apt-get update -q
    touch /var/lib/apt/lists/.glmodel-updated
  fi
  echo "setup.sh: installing ${missing[*]}"
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# The packages start a system glusterd/sshd on install where an init system runs; the lab starts its own per
# node, bound to its own address, so the system ones are left alone (they bind 0.0.0.0 only if started by hand).

python=${GLMODEL_PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
extra=""
[ "$with_test" -eq 1 ] && extra="[test]"
stamp="$venv/.glmodel-installed$extra"
# Reinstall only when the project's metadata changed since the last install.
if [ ! -e "$stamp" ] || [ "$here/pyproject.toml" -nt "$stamp" ]; then
  "$venv/bin/python" -m pip install -q --upgrade pip
  "$venv/bin/python" -m pip install -q -e "$here$extra"
  touch "$stamp"
fi
echo "setup.sh: ready ($venv/bin/glmodel)"

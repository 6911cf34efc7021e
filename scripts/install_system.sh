#!/usr/bin/env bash
# Install the Debian packages the project needs, only those missing.
#   scripts/install_system.sh          for `make demo`
#   scripts/install_system.sh --test   also chromium, for `make test`
set -euo pipefail

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in postgresql redis-server ffmpeg; do have_pkg "$pkg" || need+=("$pkg"); done
command -v npm >/dev/null 2>&1 || need+=(npm)
# A Python 3.11 that can make virtualenvs (Debian 12's python3 is 3.11 and needs python3-venv).
if ! command -v python3.11 >/dev/null 2>&1 || ! python3.11 -c "import ensurepip, venv" >/dev/null 2>&1; then
  need+=(python3 python3-venv python3-dev)
fi
if [ "${1:-}" = "--test" ]; then
  have_pkg chromium || need+=(chromium)
fi

if [ ${#need[@]} -eq 0 ]; then
  echo "system: all Debian packages present"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "system: missing Debian packages: ${need[*]} (run as root, or: sudo apt-get install ${need[*]})" >&2
  exit 1
fi
echo "system: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${need[@]}"
# Debian starts the packaged services' default clusters where it can; the project runs its own
# on other ports (scripts/stack.sh), so the packaged ones are left alone.

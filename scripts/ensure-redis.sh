#!/usr/bin/env bash
# Makes sure redis-server and redis-cli are on the PATH, because `make test`
# runs the real-Redis half of the suite and must never skip it. Installs
# Debian's package when it can (root + apt-get); otherwise says exactly what
# to install and fails.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "redis-server is missing: installing Debian's redis-server package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server >/dev/null
  # The package starts a system service on :6379; the tests start their own
  # servers on free ports and do not use it.
  command -v redis-server >/dev/null && command -v redis-cli >/dev/null && exit 0
fi
cat >&2 <<'MSG'
make test needs redis-server and redis-cli (Redis 7), and could not install them.
Install them, then run make test again:
  Debian/Ubuntu:  sudo apt-get install redis-server
  Fedora:         sudo dnf install redis
  macOS:          brew install redis
MSG
exit 1

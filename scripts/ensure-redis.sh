#!/usr/bin/env bash
# Makes sure both servers `make test` runs the real-server suites on are on
# the PATH, because those suites must never skip:
#   - Redis 7:  redis-server and redis-cli (Debian's redis-server package);
#   - Valkey 8: valkey-server and valkey-cli (Debian 12 has it only in
#     bookworm-backports, package valkey-server, which pulls valkey-tools).
# Installs what is missing when it can (root + apt-get); otherwise says
# exactly what to install and fails. apt-get update runs at most once.
set -euo pipefail

have() { command -v "$1" >/dev/null 2>&1; }
can_apt() { [ "$(id -u)" = 0 ] && have apt-get; }

apt_updated=no
apt_update_once() {
  if [ "$apt_updated" = no ]; then
    apt-get update -qq
    apt_updated=yes
  fi
}

# candidate prints the version apt would install for a package ("" if none).
candidate() {
  apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2 }'
}

ensure_redis() {
  have redis-server && have redis-cli && return 0
  can_apt || return 1
  echo "redis-server is missing: installing Debian's redis-server package" >&2
  apt_update_once
  apt-get install -y -qq redis-server >/dev/null
  # The package starts a system service on :6379; the tests start their own
  # servers on free ports and do not use it.
  have redis-server && have redis-cli
}

# add_backports adds Debian 12's backports suite when no apt source names
# it yet. Backports are pinned at priority 100 by Debian, so nothing else
# on the machine is upgraded from them: only what is asked for with -t.
add_backports() {
  . /etc/os-release
  [ "${VERSION_CODENAME:-}" = bookworm ] || return 1
  if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "adding the bookworm-backports apt source for valkey-server" >&2
    cat >/etc/apt/sources.list.d/bookworm-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    apt_updated=no
  fi
}

ensure_valkey() {
  have valkey-server && have valkey-cli && return 0
  can_apt || return 1
  if [ -z "$(candidate valkey-server)" ]; then
    add_backports || return 1
    apt_update_once
  fi
  local version
  version=$(candidate valkey-server)
  [ -n "$version" ] || return 1
  echo "valkey-server is missing: installing $version" >&2
  # A backports version (~bpo) comes with its dependencies from backports;
  # a release that ships Valkey itself (Debian 13) needs no -t.
  case "$version" in
    *bpo12*) apt-get install -y -qq -t bookworm-backports valkey-server >/dev/null ;;
    *) apt-get install -y -qq valkey-server >/dev/null ;;
  esac
  # Like redis-server, the package starts a service on :6379 if the port
  # is free; the tests do not use it.
  have valkey-server && have valkey-cli
}

export DEBIAN_FRONTEND=noninteractive
failed=0
if ! ensure_redis; then
  failed=1
  cat >&2 <<'MSG'
make test needs redis-server and redis-cli (Redis 7), and could not install them.
  Debian/Ubuntu:  sudo apt-get install redis-server
  Fedora:         sudo dnf install redis
  macOS:          brew install redis
MSG
fi
if ! ensure_valkey; then
  failed=1
  cat >&2 <<'MSG'
make test needs valkey-server and valkey-cli (Valkey 8) for its second run of
the real-server suites, and could not install them.
  Debian 12:      add bookworm-backports, then
                  sudo apt-get install -t bookworm-backports valkey-server
  Debian 13, Ubuntu 24.10+:  sudo apt-get install valkey-server
  Fedora:         sudo dnf install valkey
  macOS:          brew install valkey
MSG
fi
[ "$failed" = 0 ] || { echo "Install them, then run make test again." >&2; exit 1; }
# The versions the suites ran on belong in every log of a run.
echo "== servers: $(redis-server --version | cut -d' ' -f1-3) ($(command -v redis-server)); $(valkey-server --version | cut -d' ' -f1-3) ($(command -v valkey-server))"

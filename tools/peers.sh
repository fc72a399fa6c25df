#!/usr/bin/env bash
# `npm run peers`: installs the real backends the tests run against (test/helpers/peers.ts), so that
# `npm test` skips none of them, and CI (.ci/run) installs them the same way. The Debian packages
# come from apt-get (as root, or through sudo), MariaDB is started on 127.0.0.1:3306, and OPA,
# Regal, kube-apiserver and VictoriaLogs are built once into the cache outside the repo that every
# clone uses (tools/opa.sh and tools/regal.sh link it into .tools/bin; tools/kube-apiserver.sh,
# tools/victoria-logs.sh; GATEHOUSE_CACHE, default ~/.cache/gatehouse): nothing to export.
# What is in place already is kept, so a second run takes seconds. Prints one line per peer and
# ends with `peers: N ready, M failed`; exits 1 when one failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

ready=0
failed=0
ok() {
  echo "ready   $*"
  ready=$((ready + 1))
}
failure() {
  echo "FAILED  $*"
  failed=$((failed + 1))
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "$1 needs root, and sudo is missing" >&2
    return 1
  fi
}

# Debian package => the program that shows it is installed. etcd-server is the store of the test
# kube-apiserver; xmlsec1 cross-checks the SAML fixtures (test/fixtures/saml/README.md).
declare -A SERVER_PACKAGES=(
  [slapd]=/usr/sbin/slapd
  [ldap-utils]=/usr/bin/ldapadd
  [prometheus]=/usr/bin/promtool
  [victoria-metrics]=/usr/bin/vmauth
  [etcd-server]=/usr/bin/etcd
  [xmlsec1]=/usr/bin/xmlsec1
  [mariadb-server]=/usr/sbin/mariadbd
)

missing_packages() {
  local package
  for package in "$@"; do [ -x "${SERVER_PACKAGES[$package]:-/usr/bin/$package}" ] || echo "$package"; done
}

apt_install() {
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq -o DPkg::Lock::Timeout=600 "$@" >/dev/null
}

mapfile -t packages < <(printf '%s\n' "${!SERVER_PACKAGES[@]}" | sort)
servers=$(missing_packages "${packages[@]}")
browser=$(missing_packages chromium)
if [ -n "$servers$browser" ]; then
  echo "apt-get install" $servers $browser
  as_root apt-get update -qq -o DPkg::Lock::Timeout=600 >/dev/null
  # shellcheck disable=SC2086 # one word per package
  [ -z "$servers" ] || apt_install --no-install-recommends $servers
  # chromium with its recommended fonts: the browser tests take screenshots
  [ -z "$browser" ] || apt_install chromium
fi
for package in "${packages[@]}" chromium; do
  if [ -n "$(missing_packages "$package")" ]; then failure "$package (apt-get install $package did not install it)"; else ok "$package"; fi
done

mariadb_up() { mariadb -uroot -h127.0.0.1 -e 'SELECT 1' >/dev/null 2>&1; }
if ! mariadb_up && [ -x /usr/sbin/mariadbd ]; then
  as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd
  for _ in $(seq 1 60); do mariadb_up && break; sleep 1; done
fi
if mariadb_up; then ok "MariaDB on 127.0.0.1:3306 (TEST_DB=mysql npm test)"; else failure "MariaDB did not answer on 127.0.0.1:3306"; fi

# Go-built peers: each script prints the binary's path, building it the first time only.
go_peer() {
  local name="$1" script="$2" log bin
  log="$(mktemp)"
  if bin="$(bash "$script" 2>"$log")"; then
    if grep -qi "building\|installing" "$log"; then ok "$name: built into $bin"; else ok "$name: $bin"; fi
  else
    tail -n 20 "$log"
    failure "$name: $script could not build it"
  fi
  rm -f "$log"
}
go_peer OPA tools/opa.sh
go_peer Regal tools/regal.sh
go_peer kube-apiserver tools/kube-apiserver.sh
go_peer VictoriaLogs tools/victoria-logs.sh

echo "peers: $ready ready, $failed failed"
[ "$failed" -eq 0 ]

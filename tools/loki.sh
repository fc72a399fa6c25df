#!/usr/bin/env bash
# Prints the path of the pinned Grafana Loki binary, building it once into a cache outside the repo
# (GATEHOUSE_CACHE, default ~/.cache/gatehouse). Loki has no Debian package and `go install` refuses
# its replace directives, so it is built as the main module (~20 minutes on 2 cores, ~7 GB of
# temporary Go caches, removed afterwards). The tests (test/connectors.loki.test.ts) and CI use it.
set -euo pipefail

LOKI_VERSION="v3.7.8"

cache="${GATEHOUSE_CACHE:-$HOME/.cache/gatehouse}"
bin="$cache/loki-$LOKI_VERSION/loki"

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "loki.sh: $bin is missing and go is not installed to build it" >&2
  exit 1
fi

mkdir -p "$cache"
# One build at a time: a second caller waits for the first and then finds the binary.
exec 9>"$cache/loki.lock"
flock 9
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

work="$(mktemp -d "$cache/loki-build.XXXXXX")"
cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
export GOMODCACHE="$work/mod" GOCACHE="$work/build" GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

echo "loki.sh: building Loki $LOKI_VERSION into $bin (about 20 minutes the first time)..." >&2
module="github.com/grafana/loki/v3@$LOKI_VERSION"
(cd "$work" && go mod download "$module") >&2
src="$(cd "$work" && go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
cp -r "$src" "$work/src"
chmod -R u+w "$work/src"
cd "$work/src"
go mod edit -dropreplace github.com/grafana/loki/pkg/push
go build -trimpath -o "$work/loki" ./cmd/loki >&2
mkdir -p "$(dirname "$bin")"
mv "$work/loki" "$bin"
echo "$bin"

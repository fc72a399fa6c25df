#!/usr/bin/env bash
# Prints the path of the pinned VictoriaLogs binary (Apache-2.0), installing it once with
# `go install` into a cache outside the repo (GATEHOUSE_CACHE, default ~/.cache/gatehouse; about
# 3 minutes on 2 cores). The logs connector and audit stream tests run it
# (test/helpers/victoria-logs.ts). Concurrent callers wait on a lock and then find the binary.
set -euo pipefail

VICTORIA_LOGS_VERSION="v1.52.1"
MODULE="github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs"

cache="${GATEHOUSE_CACHE:-$HOME/.cache/gatehouse}"
dir="$cache/victoria-logs-$VICTORIA_LOGS_VERSION"
bin="$dir/victoria-logs"

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
command -v go >/dev/null 2>&1 || { echo "victoria-logs: $bin is missing and go is not installed to build it" >&2; exit 1; }

mkdir -p "$cache"
exec 9>"$cache/victoria-logs.lock"
flock 9
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

work="$(mktemp -d "$cache/victoria-logs-build.XXXXXX")"
# shellcheck disable=SC2064 # the path is fixed now, on purpose
trap "chmod -R u+w '$work' 2>/dev/null || true; rm -rf '$work'" EXIT
echo "installing victoria-logs $VICTORIA_LOGS_VERSION into $bin (the first time only)..." >&2
GOBIN="$work/bin" GOMODCACHE="$work/mod" GOCACHE="$work/build" GOFLAGS=-mod=mod CGO_ENABLED=0 \
  go install "$MODULE@$VICTORIA_LOGS_VERSION" >&2
mkdir -p "$dir"
mv "$work/bin/victoria-logs" "$bin"
echo "$bin"

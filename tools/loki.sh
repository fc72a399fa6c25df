#!/usr/bin/env bash
# Prints the path of the pinned Grafana Loki binary, building it once into a cache outside the repo
# (~20 minutes on 2 cores, ~7 GB of temporary Go caches, removed afterwards). Loki has no Debian
# package and `go install` refuses its replace directives, so it is built as the main module. The
# tests (test/connectors.loki.test.ts) and CI use it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tools/go-cache.sh
source "$root/tools/go-cache.sh"

LOKI_VERSION="v3.7.8"

build_loki() {
  go mod edit -dropreplace github.com/grafana/loki/pkg/push
  go build -trimpath -o "$1" ./cmd/loki
}

cached_go_build loki "$LOKI_VERSION" "github.com/grafana/loki/v3@$LOKI_VERSION" build_loki

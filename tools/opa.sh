#!/usr/bin/env bash
# Prints the path of the pinned OPA binary: `opa` on PATH when it is the pinned version, else
# .tools/bin/opa under the repo root, a link to the build kept in the cache outside the repo
# (installed there with `go install` the first time).
set -euo pipefail

OPA_VERSION="v1.22.0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_opa="$root/.tools/bin/opa"
# shellcheck source=tools/lib.sh
source "$root/tools/lib.sh"

find_pinned opa "$OPA_VERSION" "$local_opa" && exit 0

install_opa() {
  local gobin
  gobin="$(mktemp -d)"
  GOBIN="$gobin" CGO_ENABLED=0 go install "github.com/open-policy-agent/opa@$OPA_VERSION" && mv "$gobin/opa" "$1"
  rm -rf "$gobin"
}
link_cached opa "$OPA_VERSION" "$local_opa" install_opa

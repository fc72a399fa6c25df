#!/usr/bin/env bash
# Prints the path of the pinned OPA binary: `opa` on PATH when it is the pinned version, else
# .tools/bin/opa under the repo root, installed there with `go install` when missing or stale.
set -euo pipefail

OPA_VERSION="v1.22.0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_opa="$root/.tools/bin/opa"
# shellcheck source=tools/lib.sh
source "$root/tools/lib.sh"

find_pinned opa "$OPA_VERSION" "$local_opa" && exit 0

if ! command -v go >/dev/null 2>&1; then
  echo "opa.sh: OPA $OPA_VERSION is neither on PATH nor in $root/.tools/bin, and go is not installed to build it" >&2
  exit 1
fi

echo "opa.sh: installing OPA $OPA_VERSION into $root/.tools/bin (go install)..." >&2
GOBIN="$root/.tools/bin" CGO_ENABLED=0 go install "github.com/open-policy-agent/opa@$OPA_VERSION" >&2
echo "$local_opa"

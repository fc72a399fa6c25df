#!/usr/bin/env bash
# Prints the path of the pinned Regal (the Rego linter): `regal` on PATH when it is the pinned
# version, else .tools/bin/regal under the repo root, a link to the build kept in the cache
# outside the repo. It is built from the module's source archive on the Go module proxy, with the
# dependencies its go.sum pins: `go install regal@<version>` cannot be used because the proxy we
# reach refuses the module's version list, which `go install` reads first.
set -euo pipefail

REGAL_VERSION="v0.37.0"
# SHA-256 of the proxy's source archive of $REGAL_VERSION, checked before anything is built
REGAL_ZIP_SHA256="d171f3980aa1f6476b0567cc6d158360f17bc255fe71625c6699b73bd7be76d8"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_regal="$root/.tools/bin/regal"
# shellcheck source=tools/lib.sh
source "$root/tools/lib.sh"

find_pinned regal "$REGAL_VERSION" "$local_regal" && exit 0

build_regal() {
  local out="$1" tmp proxy src
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2064 # the path is fixed now, on purpose
  trap "rm -rf '$tmp'" RETURN
  proxy="$(go env GOPROXY | cut -d, -f1)"
  curl -fsSL -o "$tmp/regal.zip" "$proxy/github.com/open-policy-agent/regal/@v/$REGAL_VERSION.zip"
  echo "$REGAL_ZIP_SHA256  $tmp/regal.zip" | sha256sum -c --quiet - || { echo "regal.sh: the archive's checksum does not match" >&2; return 1; }
  (cd "$tmp" && unzip -q regal.zip)
  src="$tmp/github.com/open-policy-agent/regal@$REGAL_VERSION"
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-X github.com/open-policy-agent/regal/pkg/version.Version=${REGAL_VERSION#v}" -o "$out" .)
}
link_cached regal "$REGAL_VERSION" "$local_regal" build_regal

#!/usr/bin/env bash
# Prints the path of the pinned kube-apiserver binary, building it once into a cache outside the
# repo (~15 minutes on 2 cores). Kubernetes has no Debian package and `go install` refuses its
# replace directives, so k8s.io/kubernetes is built as the main module with each ./staging module
# replaced by its published release. The ops connector tests (test/ops.*.test.ts) run it with
# Debian's etcd-server.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=tools/go-cache.sh
source "$root/tools/go-cache.sh"

KUBERNETES_VERSION="v1.31.4"
# the staging modules (k8s.io/api, k8s.io/client-go, ...) are published as v0.<minor>.<patch>
STAGING_VERSION="v0.${KUBERNETES_VERSION#v1.}"

build_kube_apiserver() {
  local staged
  staged="$(sed -n 's#^[[:space:]]*\(k8s\.io/[^ ]*\) => \./staging/.*#\1#p' go.mod)"
  [ -n "$staged" ] || { echo "no ./staging replaces found in go.mod" >&2; return 1; }
  for module in $staged; do
    go mod edit -replace "$module=$module@$STAGING_VERSION"
  done
  # The version stamps a release build sets: the module source has no git metadata, so without
  # them /version (and `--version`) says v0.0.0-master+$Format:%H$.
  local minor="${KUBERNETES_VERSION#v1.}" ldflags="" pkg
  minor="${minor%%.*}"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
  done
  go build -trimpath -ldflags "$ldflags" -o "$1" ./cmd/kube-apiserver
}

cached_go_build kube-apiserver "$KUBERNETES_VERSION" "k8s.io/kubernetes@$KUBERNETES_VERSION" build_kube_apiserver

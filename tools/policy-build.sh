#!/usr/bin/env bash
# Compiles policies/authz to WebAssembly: policies/build/authz.wasm plus manifest.json (OPA
# version, SHA-256 of the Rego sources, entry points), and the OPA bundle
# policies/build/bundle.tar.gz (the wasm, the Rego sources, a .manifest whose revision is the
# source hash). Reproducible: an unchanged tree rebuilds to the same bytes (opa writes fixed
# mtimes, and the sources go in sorted), so CI can fail on a stale build.
#
# tools/policy-build.sh <source dir> <build dir> builds another tree of Rego the same way (a
# candidate for `npm run cli -- policy-diff`); both paths absolute. Its sourceHash is over that
# tree's non-test *.rego files.
#
# POLICY_SIGNING_KEY=<private key PEM> signs the bundle (.signatures.json, as `opa build
# --signing-key` writes it; POLICY_SIGNING_ALG, default RS256, e.g. ES256 for an EC key) and
# writes only it, to POLICY_BUNDLE_OUT (default policies/build/bundle.signed.tar.gz): the
# committed build stays as it is.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

source_dir="policies/authz"
hashed_dir="policies"
build_dir="policies/build"
if [ "$#" -eq 2 ]; then
  source_dir="$1"
  hashed_dir="$1"
  build_dir="$2"
elif [ "$#" -ne 0 ]; then
  echo "usage: tools/policy-build.sh [<source dir> <build dir>]" >&2
  exit 2
fi
[ -d "$source_dir" ] || { echo "policy-build: $source_dir is not a directory" >&2; exit 2; }

opa="$(bash tools/opa.sh)"

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum | cut -d' ' -f1; else shasum -a 256 | cut -d' ' -f1; fi
}

# The source hash TypeScript recomputes to detect a stale build: for every non-test *.rego under
# policies/, sorted by repo-relative path in byte order, "<path>\n<contents>\n", concatenated.
mapfile -t hashed < <(find "$hashed_dir" -type f -name '*.rego' ! -name '*_test.rego' | LC_ALL=C sort)
source_hash="$(for f in "${hashed[@]}"; do printf '%s\n' "$f"; cat "$f"; printf '\n'; done | sha256)"

mapfile -t sources < <(find "$source_dir" -type f -name '*.rego' ! -name '*_test.rego' | LC_ALL=C sort)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# The entry points are declared once, in the Rego: every rule whose METADATA says
# `entrypoint: true` (the engine refuses a build that lacks one it calls).
"$opa" inspect -a --format json "$source_dir" >"$tmp/inspect.json"
mapfile -t entrypoints < <(node -e '
  const report = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const names = (report.annotations ?? []).filter((a) => a.annotations?.entrypoint).map((a) => a.path.slice(1).map((p) => p.value).join("/"));
  console.log([...new Set(names)].sort().join("\n"));
' "$tmp/inspect.json")
[ "${#entrypoints[@]}" -gt 0 ] && [ -n "${entrypoints[0]}" ] || { echo "policy-build: no rule is annotated entrypoint: true" >&2; exit 1; }

entry_flags=()
for e in "${entrypoints[@]}"; do entry_flags+=(-e "$e"); done
# The bundle holds the sources as policies/authz/…, another tree's too; built from a copy named
# policies/ and by relative path, so the wasm names the files as the sources do.
for f in "${sources[@]}"; do
  rel="${f#"$source_dir"/}"
  mkdir -p "$tmp/policies/authz/$(dirname "$rel")"
  cp "$f" "$tmp/policies/authz/$rel"
done
sign_flags=()
bundle_out="$build_dir/bundle.tar.gz"
if [ -n "${POLICY_SIGNING_KEY:-}" ]; then
  # opa runs in $tmp: the key by its absolute path
  signing_key="$(cd "$(dirname "$POLICY_SIGNING_KEY")" && pwd)/$(basename "$POLICY_SIGNING_KEY")"
  sign_flags=(--signing-key "$signing_key" --signing-alg "${POLICY_SIGNING_ALG:-RS256}")
  bundle_out="${POLICY_BUNDLE_OUT:-$build_dir/bundle.signed.tar.gz}"
fi
(cd "$tmp" && "$opa" build -t wasm "${entry_flags[@]}" --revision "$source_hash" "${sign_flags[@]}" -o bundle.tar.gz --bundle policies)

if [ -n "${POLICY_SIGNING_KEY:-}" ]; then
  mkdir -p "$(dirname "$bundle_out")"
  mv "$tmp/bundle.tar.gz" "$bundle_out"
  echo "policy bundle: $bundle_out (signed, ${POLICY_SIGNING_ALG:-RS256}), revision $source_hash"
  exit 0
fi

mkdir -p "$build_dir"
# -P keeps the bundle's absolute member name (/policy.wasm) instead of warning about it
tar -xzOPf "$tmp/bundle.tar.gz" /policy.wasm >"$tmp/authz.wasm"
mv "$tmp/authz.wasm" "$build_dir/authz.wasm"
mv "$tmp/bundle.tar.gz" "$bundle_out"

opa_version="v$("$opa" version | sed -n 's/^Version: *//p')"
{
  printf '{\n'
  printf '  "opaVersion": "%s",\n' "$opa_version"
  printf '  "sourceHash": "%s",\n' "$source_hash"
  printf '  "entrypoints": [\n'
  for i in "${!entrypoints[@]}"; do
    sep=","
    [ "$i" -eq $((${#entrypoints[@]} - 1)) ] && sep=""
    printf '    "%s"%s\n' "${entrypoints[$i]}" "$sep"
  done
  printf '  ]\n'
  printf '}\n'
} >"$build_dir/manifest.json"

echo "policy build: $build_dir/authz.wasm ($(wc -c <"$build_dir/authz.wasm" | tr -d ' ') bytes), sourceHash $source_hash"
echo "policy bundle: $bundle_out (unsigned)"

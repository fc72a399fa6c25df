# Sourced by tools/kube-apiserver.sh (not run): builds a pinned Go program once into a cache
# outside the repo (GATEHOUSE_CACHE, default ~/.cache/gatehouse) and prints its path. For programs
# that refuse `go install` (replace directives): the script gives a function that turns the
# downloaded module source into a binary.

# cached_go_build <name> <version> <module@version> <build function>
# The build function runs inside a writable copy of the module's source with the temporary Go
# caches exported, and must leave the binary at "$1". Concurrent callers wait on a lock and then
# find the binary; the temporary caches (several GB) are removed afterwards.
cached_go_build() {
  local name="$1" version="$2" module="$3" build="$4"
  local cache="${GATEHOUSE_CACHE:-$HOME/.cache/gatehouse}"
  local bin="$cache/$name-$version/$name"

  if [ -x "$bin" ]; then
    echo "$bin"
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "$name: $bin is missing and go is not installed to build it" >&2
    return 1
  fi

  mkdir -p "$cache"
  exec 9>"$cache/$name.lock"
  flock 9
  if [ -x "$bin" ]; then
    echo "$bin"
    return 0
  fi

  local work
  work="$(mktemp -d "$cache/$name-build.XXXXXX")"
  # shellcheck disable=SC2064 # the path is fixed now, on purpose
  trap "chmod -R u+w '$work' 2>/dev/null || true; rm -rf '$work'" EXIT
  export GOMODCACHE="$work/mod" GOCACHE="$work/build" GOWORK=off GOFLAGS=-mod=mod CGO_ENABLED=0

  echo "building $name $version into $bin (the first time only)..." >&2
  (cd "$work" && go mod download "$module") >&2
  local src
  src="$(cd "$work" && go mod download -json "$module" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  cp -r "$src" "$work/src"
  chmod -R u+w "$work/src"
  (cd "$work/src" && "$build" "$work/$name") >&2
  mkdir -p "$(dirname "$bin")"
  mv "$work/$name" "$bin"
  echo "$bin"
}

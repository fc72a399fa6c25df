# Sourced by the tools' scripts (not run): finding a pinned tool, on PATH or in .tools/bin under
# the repo root, by the version it reports; building it once into the cache outside the repo
# (GATEHOUSE_CACHE, default ~/.cache/gatehouse) that every clone links to; a seeded shuffle.

# the version a tool reports ("Version: 1.22.0", aligned or not) as "v1.22.0"
version_of() {
  echo "v$("$1" version 2>/dev/null | sed -n 's/^Version: *//p')"
}

# Prints the path of the tool at the pinned version and succeeds: `name` on PATH first, then
# `local_path`; fails, printing nothing, when neither is that version.
find_pinned() {
  local name="$1" version="$2" local_path="$3" found
  if found="$(command -v "$name" 2>/dev/null)" && [ "$(version_of "$found")" = "$version" ]; then
    echo "$found"
    return 0
  fi
  if [ -x "$local_path" ] && [ "$(version_of "$local_path")" = "$version" ]; then
    echo "$local_path"
    return 0
  fi
  return 1
}

# link_cached <name> <version> <local_path> <build function>
# Links local_path to the cached build of the tool, building it first when the cache lacks it:
# the build function gets the binary's path as "$1" and must leave the tool there. Concurrent
# callers wait on a lock and then find the binary. Prints local_path.
link_cached() {
  local name="$1" version="$2" local_path="$3" build="$4"
  local cache="${GATEHOUSE_CACHE:-$HOME/.cache/gatehouse}"
  local bin="$cache/$name-$version/$name"
  mkdir -p "$cache/$name-$version" "$(dirname "$local_path")"
  (
    flock 9
    if [ ! -x "$bin" ] || [ "$(version_of "$bin")" != "$version" ]; then
      command -v go >/dev/null 2>&1 || { echo "$name $version is not in $cache and go is not installed to build it" >&2; exit 1; }
      echo "building $name $version into $bin (the first time only)..." >&2
      "$build" "$bin.partial" >&2 && mv "$bin.partial" "$bin"
    fi
  ) 9>"$cache/$name.lock" || return 1
  ln -sfn "$bin" "$local_path"
  echo "$local_path"
}

# shuffle_with_seed <seed>: the lines of stdin in an order drawn from the seed alone, so that the
# same seed gives the same order again (a byte stream determined by the seed drives shuf).
shuffle_with_seed() {
  shuf --random-source=<(openssl enc -aes-256-ctr -pass "pass:$1" -nosalt -pbkdf2 </dev/zero 2>/dev/null)
}

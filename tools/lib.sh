# Shared by tools/opa.sh and tools/regal.sh (sourced, not run): finding a pinned tool, on PATH or
# in .tools/bin under the repo root, by the version it reports.

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

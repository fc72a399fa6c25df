#!/usr/bin/env bash
# `npm run test:each [-- FILE...]`: proves the test files independent of each other.
#   tools/test-each.sh [FILE...]            each file alone, in its own mocha process, JOBS at a
#                                           time (default 2); the log of a failing file is kept
#   tools/test-each.sh --shuffle [SEED] [FILE...]
#                                           all of them in one mocha process, in a random file
#                                           order; the seed is printed, and the same seed gives
#                                           the same order again
# Without FILE, every test/**/*.test.ts. TEST_DB and the other test variables pass through.
# Ends with `each: N passed alone, M failed` (or mocha's own summary) and exits 1 on a failure.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

shuffle=""
if [ "${1:-}" = "--shuffle" ]; then
  shift
  if [[ "${1:-}" =~ ^[0-9]+$ ]]; then shuffle="$1"; shift; else shuffle="$RANDOM$RANDOM"; fi
fi
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find test -name '*.test.ts' | sort); fi
mocha="$root/node_modules/.bin/mocha"

if [ -n "$shuffle" ]; then
  # shellcheck source=tools/lib.sh
  source "$root/tools/lib.sh"
  mapfile -t files < <(printf '%s\n' "${files[@]}" | shuffle_with_seed "$shuffle")
  echo "shuffled order, seed $shuffle (again: tools/test-each.sh --shuffle $shuffle)"
  printf '  %s\n' "${files[@]}"
  exec "$mocha" "${files[@]}"
fi

logs="$(mktemp -d "${TMPDIR:-/tmp}/gatehouse-test-each.XXXXXX")"
export mocha logs
run_alone() {
  local file="$1" log start
  log="$logs/$(echo "$file" | tr '/' '_').log"
  start=$(date +%s)
  if "$mocha" "$file" >"$log" 2>&1; then
    echo "ok    $file ($(($(date +%s) - start)) s)"
    rm -f "$log"
  else
    echo "FAIL  $file ($(($(date +%s) - start)) s): $log"
  fi
}
export -f run_alone

printf '%s\n' "${files[@]}" | xargs -P "${JOBS:-2}" -I{} bash -c 'run_alone "$1"' _ {} | tee "$logs/results"
passed=$(grep -c '^ok' "$logs/results")
failed=$(grep -c '^FAIL' "$logs/results")
echo
echo "each: $passed passed alone, $failed failed"
if [ "$failed" -gt 0 ]; then exit 1; fi
rm -rf "$logs"

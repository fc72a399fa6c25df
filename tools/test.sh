#!/usr/bin/env bash
# npm test: the suite in TEST_JOBS parallel workers (2 by default), or one file after another when
# TEST_JOBS=1 (mocha's parallel mode with a single job would load the files as CommonJS, where
# import.meta.resolve is missing). Arguments go to mocha; test files among them
# (`npm test -- test/login.test.ts`) run instead of the whole suite.
# TEST_SHUFFLE=<seed> (or `random` for a new seed) hands the files to the workers in an order drawn
# from the seed, printed first: the same seed gives the same order again. A file that passes only
# after another one shows up as a failure under some seed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${TEST_JOBS:-2}"

options=()
files=()
for argument in "$@"; do
  if [[ "$argument" == *.test.ts ]]; then files+=("$argument"); else options+=("$argument"); fi
done
[ "${#files[@]}" -gt 0 ] || mapfile -t files < <(find test -name '*.test.ts' | sort)
if [ -n "${TEST_SHUFFLE:-}" ]; then
  seed="$TEST_SHUFFLE"
  [ "$seed" != random ] || seed="$RANDOM$RANDOM"
  # shellcheck source=tools/lib.sh
  source tools/lib.sh
  mapfile -t files < <(printf '%s\n' "${files[@]}" | shuffle_with_seed "$seed")
  echo "test files in shuffled order, seed $seed (the same order again: TEST_SHUFFLE=$seed npm test)"
fi

if [ "$jobs" -le 1 ]; then exec npx mocha "${options[@]}" "${files[@]}"; fi
exec npx mocha --parallel --jobs "$jobs" "${options[@]}" "${files[@]}"

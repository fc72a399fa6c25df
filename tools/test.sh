#!/usr/bin/env bash
# npm test: the suite in TEST_JOBS parallel workers (2 by default), or one file after another when
# TEST_JOBS=1 (mocha's parallel mode with a single job would load the files as CommonJS, where
# import.meta.resolve is missing). Arguments go to mocha.
set -euo pipefail
jobs="${TEST_JOBS:-2}"
if [ "$jobs" -le 1 ]; then exec npx mocha "$@" 'test/**/*.test.ts'; fi
exec npx mocha --parallel --jobs "$jobs" "$@" 'test/**/*.test.ts'

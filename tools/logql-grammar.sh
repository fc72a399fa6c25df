#!/usr/bin/env bash
# Generates the LogQL parser, src/connectors/logql/parser.ts and parser.terms.ts, from
# src/connectors/logql/logql.grammar with the lezer-generator of package-lock.json. The output is
# committed, so the service runs without a build step; CI regenerates it into a temporary
# directory and fails when it differs from the committed files.
#
# tools/logql-grammar.sh <dir> writes the two files to <dir> instead.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

grammar_dir="src/connectors/logql"
out_dir="${1:-$grammar_dir}"
if [ "$#" -gt 1 ]; then
  echo "usage: tools/logql-grammar.sh [<output dir>]" >&2
  exit 2
fi
mkdir -p "$out_dir"
node_modules/.bin/lezer-generator --typeScript "$grammar_dir/logql.grammar" -o "$out_dir/parser.ts"

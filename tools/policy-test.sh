#!/usr/bin/env bash
# Checks the Rego policies: formatting, strict compilation, Regal's lint, unit tests, and line
# coverage of every policy line (100 %: each uncovered line is listed as file:line).
# Stops at the first failing step with a message saying which one.
set -euo pipefail

MIN_COVERAGE=100

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
opa="$(bash tools/opa.sh)"

fail() {
  echo "policy-test: $*" >&2
  exit 1
}

# policies/build holds the compiled output (manifest.json would otherwise load as data)
load_flags=(--ignore build)

unformatted="$("$opa" fmt --list policies)" || fail "opa fmt could not read the policies"
if [ -n "$unformatted" ]; then
  printf '%s\n' "$unformatted" >&2
  fail "the files above are not formatted; run: $opa fmt -w policies"
fi

"$opa" check --strict "${load_flags[@]}" policies || fail "opa check --strict failed"

# Regal, the Rego linter, with the exceptions .regal/config.yaml justifies
regal="$(bash tools/regal.sh)" || fail "could not install Regal (tools/regal.sh)"
"$regal" lint policies/authz || fail "regal lint found violations"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# exit status 2 means failing tests, which the summary below reports; anything else is an error
status=0
"$opa" test "${load_flags[@]}" --format=json policies >"$tmp/results.json" || status=$?
[ "$status" -eq 0 ] || [ "$status" -eq 2 ] || fail "opa test could not run (exit $status)"

# coverage is only measured once every test passes (with failures opa prints no JSON report)
if [ "$status" -eq 0 ]; then
  "$opa" test "${load_flags[@]}" --coverage --format=json policies >"$tmp/coverage.json" ||
    fail "opa test --coverage could not run"
fi

node - "$tmp/results.json" "$tmp/coverage.json" "$MIN_COVERAGE" <<'JS'
const fs = require("fs");
const [resultsFile, coverageFile, minCoverage] = process.argv.slice(2);
const results = JSON.parse(fs.readFileSync(resultsFile, "utf8"));
const report = fs.existsSync(coverageFile) ? JSON.parse(fs.readFileSync(coverageFile, "utf8")) : null;
const failed = results.filter((r) => r.fail || r.error);
const passed = results.filter((r) => !r.fail && !r.error && !r.skip);
for (const r of failed) {
  const why = r.error ? `: ${r.error.message ?? JSON.stringify(r.error)}` : "";
  console.error(`FAIL ${r.package}.${r.name} (${r.location.file}:${r.location.row})${why}`);
  if (r.output) console.error(Buffer.from(r.output, "base64").toString().trimEnd());
}
const coverage = report ? `${(report.coverage ?? 0).toFixed(2)}%` : "n/a";
console.log(`policy tests: ${passed.length} passed, ${failed.length} failed, coverage ${coverage}`);
const die = (message) => {
  console.error(`policy-test: ${message}`);
  process.exit(1);
};
if (results.length === 0) die("no tests found");
if (failed.length > 0) die(`${failed.length} test(s) failed`);
// every line no test evaluates, as file:line (a range of lines is listed line by line)
const uncovered = new Set();
for (const [file, f] of Object.entries(report.files ?? {})) {
  for (const range of f.not_covered ?? []) {
    for (let row = range.start.row; row <= range.end.row; row++) uncovered.add(`${file}:${row}`);
  }
}
if ((report.coverage ?? 0) < Number(minCoverage) || uncovered.size > 0) {
  for (const line of uncovered) console.error(`  not covered: ${line}`);
  die(`coverage ${coverage} is under ${minCoverage}%: ${uncovered.size} line(s) no test evaluates`);
}
JS

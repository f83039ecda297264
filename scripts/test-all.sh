#!/usr/bin/env bash
# The README's test command (`npm run test:all`) and CI's (.ci/run): installs what the tests
# need on a fresh Debian machine with Node 20, then runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

# Debian's Chromium drives the browser tests (playwright-core cannot download a browser here);
# Debian's Firefox ESR opens the offline report in tests/browser/report-firefox.test.ts.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/firefox-esr ] || missing+=(firefox-esr)
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "Installing Debian's ${missing[*]} for the browser tests..."
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# `npm install` (not `npm ci`): vite 8 lists a Windows-only optional dependency that the
# registry reachable here does not have, so it cannot be in the lock file and `npm ci` refuses
# the lock as out of sync. `npm install` follows the lock file for everything it holds.
npm install --no-audit --no-fund

# ESLint, Prettier's check, then types: the app, workers, CLI and tests; then the pure core
# alone, without DOM or Node types; then the layers' import rules. It runs beside the tests (most
# of the tests' time is waiting on Chromium, workers and child processes, not the 2 cores), and its
# output follows theirs.
out="$(mktemp -d)"
npm run --silent check >"$out/check.log" 2>&1 &
check_pid=$!
# Every test: core, workers, pool, CLI (`unit`, also `npm test`), the real benchmark data at scale
# in ../shared/data (`data`), and headless Chromium on the built app. The `rves-measure` project
# is a measurement (`npm run bench -- --only rves`).
report="$out/vitest.json"
status=0
npx vitest run --project unit --project data --project node --project browser --project browser-engines --reporter=default --reporter=json --outputFile.json="$report" || status=$?
check_status=0
wait "$check_pid" || check_status=$?
echo "npm run check:"
cat "$out/check.log"
# Plain closing lines, whatever the reporters printed above.
if [ -f "$report" ]; then
  node -e 'const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);' "$report"
fi
if [ "$check_status" -ne 0 ]; then
  echo "npm run check failed (exit $check_status): its output is above"
  [ "$status" -ne 0 ] || status=$check_status
else
  echo "npm run check: passed"
fi
exit "$status"

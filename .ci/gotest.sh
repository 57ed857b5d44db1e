#!/usr/bin/env bash
# Runs go test through gotestsum, keeps the JSON event stream in .test/go-test.json, and ends with one
# plain line "N passed, N failed, N skipped". Exits non-zero if anything failed (a test, or a package that
# did not build), and under CI=true also if anything was skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .test
json=.test/go-test.json
go tool gotestsum --format pkgname-and-test-fails --jsonfile "$json" -- "$@"
status=$?

read -r passed failed skipped < <(awk '
  /"Action":"(pass|fail|skip)"/ {
    match($0, /"Action":"[a-z]+"/); action = substr($0, RSTART + 10, RLENGTH - 11)
    match($0, /"Package":"[^"]*"/); pkg = substr($0, RSTART + 11, RLENGTH - 12)
    if ($0 ~ /"Test":"/) { n[action]++; if (action == "fail") testfail[pkg] = 1 }
    else if (action == "fail") pkgfail[pkg] = 1
  }
  END {
    # A package that failed without a failing test (build error, panic in TestMain) counts as one failure.
    for (p in pkgfail) if (!(p in testfail)) n["fail"]++
    printf "%d %d %d\n", n["pass"], n["fail"], n["skip"]
  }' "$json")

echo
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then exit 1; fi
if [ "${CI:-}" = "true" ] && [ "$skipped" -ne 0 ]; then
  echo "CI=true: skipped tests count as failures (a test that cannot reach its real component must fail)" >&2
  exit 1
fi

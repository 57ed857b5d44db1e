#!/usr/bin/env bash
# Runs go test through gotestsum, keeps the JSON event stream in .test/go-test.json, and ends with one
# plain line "N passed, N failed, N skipped". Exits non-zero if anything failed (a test, or a package that
# did not build), and under CI=true also if anything was skipped.
#
# Two phases: the tests themselves, with every AWS call the functions make in their e2e tests recorded
# into .test/aws-calls; then, when the whole module ran (./...), infra's IAM proof (build tag iamproof),
# which checks each recorded call against the role the CDK app synthesizes. The summary counts both.
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .test
json=.test/go-test.json
proof_json=.test/iam-proof.json
calls="$PWD/.test/aws-calls"
rm -rf "$calls" "$proof_json"
mkdir -p "$calls"

NODEWRIGHT_AWS_CALLS="$calls" go tool gotestsum --format pkgname-and-test-fails --jsonfile "$json" -- "$@"
status=$?

# IAM_PROOF=1 runs the proof after a narrowed run too (it then fails for the functions not covered).
whole=false
for arg in "$@"; do
  if [ "$arg" = "./..." ] || [ "${IAM_PROOF:-}" = "1" ]; then whole=true; fi
done
files=("$json")
if $whole; then
  echo
  echo "IAM proof: every recorded AWS call against the synthesized roles (go test -tags iamproof ./infra/)"
  NODEWRIGHT_AWS_CALLS="$calls" go tool gotestsum --format standard-verbose --jsonfile "$proof_json" -- \
    -tags iamproof -count=1 -timeout=15m -run '^TestEveryRecordedCallIsAllowedByItsRole$' ./infra/ |
    grep -v '^!!' # the CDK runtime's Node.js banner
  proof=${PIPESTATUS[0]}
  if [ "$proof" -ne 0 ]; then status=$proof; fi
  files+=("$proof_json")
else
  echo
  echo "IAM proof skipped: PKGS is a subset, so the recordings in $calls may not cover every function (IAM_PROOF=1 runs it)"
fi

read -r passed failed skipped < <(awk '
  /"Action":"(pass|fail|skip)"/ {
    match($0, /"Action":"[a-z]+"/); action = substr($0, RSTART + 10, RLENGTH - 11)
    match($0, /"Package":"[^"]*"/); pkg = FILENAME ":" substr($0, RSTART + 11, RLENGTH - 12)
    if ($0 ~ /"Test":"/) { n[action]++; if (action == "fail") testfail[pkg] = 1 }
    else if (action == "fail") pkgfail[pkg] = 1
  }
  END {
    # A package that failed without a failing test (build error, panic in TestMain) counts as one failure.
    for (p in pkgfail) if (!(p in testfail)) n["fail"]++
    printf "%d %d %d\n", n["pass"], n["fail"], n["skip"]
  }' "${files[@]}")

echo
echo "${passed} passed, ${failed} failed, ${skipped} skipped"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then exit 1; fi
if [ "${CI:-}" = "true" ] && [ "$skipped" -ne 0 ]; then
  echo "CI=true: skipped tests count as failures (a test that cannot reach its real component must fail)" >&2
  exit 1
fi

// Package mirrortest installs the nodewright.sh mirrors (CRDs, read-only policy and binding) into a test's
// real API server and gives tests a NodeClaim mirror writer acting as the lifecycle function, the one
// mirror writer. It is for tests only (e2e packages), so that each one does not copy the set-up.
package mirrortest

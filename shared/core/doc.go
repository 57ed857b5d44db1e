// Package core groups Nodewright's pure decision code: the configuration types (apis), the scheduler
// (scheduling), the consolidation engine (disruption), drift and expiry (drift), the drain plan (drain),
// the repair rules (reconcile), NodeOverlay (nodeoverlay), the deployment-wide settings (settings) and
// the per-tier sizes (sizing).
//
// A package here decides from what it is given: it makes no call to AWS, Kubernetes or DynamoDB, reads
// no clock it is not handed where determinism matters, and imports only other core packages, the
// standard library and Kubernetes' API types. Every other group may import it. The rule is checked by
// shared/testsupport/layout's test, and by the purity tests of scheduling, disruption and drift.
package core

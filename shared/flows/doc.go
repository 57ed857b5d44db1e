// Package flows groups the use cases, one per thing Nodewright does for a cluster: provisioning
// (pending pods to launched claims), disruptionrun (consolidation, drift, expiry and requested
// disruption), lifecycle (registration, initialization and repairs), interruption (spot, rebalance,
// health and state-change events), termination (drain and remove), podwebhook (the pending-pod intake),
// with driftinput (drift's inputs from what the flows hold) and runmetrics (each run's metrics).
//
// A flow composes core decisions with adapters; it may import core, adapters and other flows, never test
// support. Only the function mains (functions/), the CLI (cmd/) and test support import flows.
// shared/testsupport/layout's test checks the rule.
package flows

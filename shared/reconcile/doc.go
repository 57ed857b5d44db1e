// Package reconcile compares what Nodewright recorded (claims), what EC2 runs (instances tagged for the
// cluster) and what Kubernetes sees (Nodes), and says what to repair: the backstop for every event that
// was missed, duplicated or interrupted (DESIGN.md decision 5, reference §d.4, §d.6).
//
// Decisions, each with a reason:
//   - adopt: a pending claim whose instance exists (a crash between CreateFleet and the claim update)
//     becomes launched with that instance, instead of launching again or leaking it;
//   - launch timeout: a claim still pending 5 minutes after it was written is deleted;
//   - registration timeout: a claim launched 15 minutes ago whose Node never registered is deleted and
//     its instance terminated;
//   - leaked instance: an instance tagged for the cluster with no live claim, older than 30 seconds (EC2's
//     eventual consistency) is terminated;
//   - ghost claim: a registered claim whose instance is gone and whose Node is not Ready is deleted;
//   - ghost node: a Nodewright Node whose instance is gone is deleted.
//
// It never scales down on incomplete data: if any of the three lists is incomplete, it decides nothing.
// The package is pure: lists and the time in, actions out.
package reconcile

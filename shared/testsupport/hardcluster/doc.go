// Package hardcluster generates the fragmented clusters that consolidation is measured on: seeded,
// shaped the way a real cluster looks some time after a scale-in, and hard in the ways that make
// Karpenter's consolidation and ours slow or poor.
//
// A cluster is built as the scheduler and the autoscaler built it: a stream of pods from many
// deployments is packed first-fit onto nodes of random catalog types (a new node opens when no open
// node in the pod's zone has room), then most pods are deleted at random (Config.Removed, 60% by
// default). What makes it hard:
//
//   - mostly spot (Config.SpotShare, three quarters by default), so that with Karpenter's default rules
//     (spot-to-spot consolidation off) most nodes may only be deleted, never replaced;
//   - oversized nodes filled only half (Config.OversizedShare), on-demand;
//   - zone topology spreads (maxSkew 1) on many deployments, half DoNotSchedule and half
//     ScheduleAnyway, each deployment's pods placed round-robin over the zones so the spread held when
//     they were scheduled;
//   - one deployment under a PodDisruptionBudget that allows no disruption, a few of its pods on a few
//     nodes;
//   - nodes that are not candidates: managed-node-group nodes (no NodePool label) and nodes of the
//     NodePool that never initialized;
//   - one DaemonSet on every node.
//
// Generate returns the objects; Cluster.Write writes them as the input files of `nodewright plan
// --disrupt` (and of the Karpenter side-by-side harness in shared/testsupport/karpentercompare), and
// Cluster.WriteRemaining the pods left on the NodePool's nodes as pending pods, whose plan on an empty
// cluster gives the LP lower bound consolidation is measured against. Everything comes from
// Config.Seed: the same Config gives the same files.
package hardcluster

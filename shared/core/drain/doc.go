// Package drain decides, for one node being terminated, what to do with each of its pods right now: evict
// it, delete it because the termination deadline forces it, or wait. It is pure: pods, the time and the
// deadline in; a plan out. The termination function applies the plan through the Eviction API and asks
// again until the node is drained.
//
// The rules are Karpenter's (reference §d.5, §c.10):
//   - Pods that need draining are those not finished, not mirror pods, not tolerating the
//     karpenter.sh/disrupted:NoSchedule taint (they would come straight back), and not stuck terminating
//     past their grace period.
//   - Eviction goes in four tiers, each only once the previous one is empty: non-critical pods, then
//     non-critical DaemonSet pods, then critical pods (system-cluster-critical, system-node-critical), then
//     critical DaemonSet pods.
//   - karpenter.sh/do-not-disrupt pods ("true", or a duration not over yet since the pod started) are
//     not evicted; they hold the drain until the deadline. Any other value protects nothing and is
//     reported in Plan.Invalid.
//   - With a termination deadline (the NodePool's terminationGracePeriod), each remaining pod is deleted,
//     bypassing PDBs and do-not-disrupt, at deadline − its terminationGracePeriodSeconds, with its grace
//     clamped to what is left (at least 1 s), so every pod is gone by the deadline.
package drain

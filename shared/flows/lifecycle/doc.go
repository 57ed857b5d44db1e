// Package lifecycle brings a launched claim's Node into the cluster and keeps claims, instances and Nodes
// consistent.
//
// Its core is pure functions over the claim's expectations and the Nodes (reference §d.2, §d.3):
// registration (find the Node by providerID, bring it the NodePool's labels and taints, lift
// karpenter.sh/unregistered, label it registered) and initialization (Ready, startup and known ephemeral
// taints gone, every requested extended resource present; then label it initialized).
//
// Runner is the use case the scheduled lifecycle function calls: under the "lifecycle" lease, a sweeping
// pass (RunnerConfig.SweepEvery) reads the instances, the live claims, the NodePools and the Nodes, applies
// registration and initialization through the Kubernetes adapter, then carries out reconcile.Decide's repairs (adopt, launch and
// registration timeouts, leaked instances, ghost claims and Nodes), recording a decision for each step.
// Registration records the Node on the claim before it opens the Node, and puts Nodewright's finalizer
// (nodewright.sh/termination) on it. Nodes leave only through the termination flow: the pass hands it the
// claims of deleted Nodes (kubectl delete node) and of NodePools removed from the configuration, sends
// stalled drains again (handover.go says when), and releases a deleting Node's finalizer once no claim
// stands for it and its instance is gone. Last, on a whole read, it deletes the launch templates and
// instance profiles no claim uses any more (housekeeping.go says how "in use" is decided), and gives the
// instances of registered claims the Name tag of their Node, as Karpenter does (naming.go). Every pass also
// records the memory capacity the Nodes of registered claims report per instance type and AMI (memory.go),
// which the plans use in place of the VM-overhead estimate, writing only what is new or smaller. With the
// NodeRepair feature gate on, a sweep also asks for the replacement of Nodes unhealthy past their
// toleration, within Karpenter's 20% guard (noderepair.go says how). Every pass writes the NodeClaim
// mirrors (mirrors.go); a sweep then turns each mirror a user deleted into its claim's disruption request,
// as `nodewright disrupt` writes it (mirrordeletions.go). The passes
// between sweeps, every few seconds while Nodes join, read only the joining claims (by lifecycle, from an
// index) and list no instances: they register and initialize, and leave the rest to the next sweep. Its
// adapters sit behind the small interfaces declared in runner.go.
package lifecycle

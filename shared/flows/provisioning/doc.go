// Package provisioning is the use-case ring between Nodewright's configuration and its scheduling core:
// it turns validated Karpenter v1 objects (shared/core/apis) into the scheduler's NodePools and allocatable
// settings, reads and writes the instance-type catalog file that `nodewright plan` takes, and launches a
// claim with fallback across its offerings (launch.go), recording capacity failures for every invocation.
//
// Provisioner (provisioner.go) is one provisioning run, what functions/provisioner calls: under the
// single-writer lease it reads the configuration (runconfig.go), the cluster (clusterview.go), the node
// classes and their instance types (nodeclasses.go), unavailable offerings and the claims still booting
// (inflight.go), solves, and for each new claim writes the claim record before it builds the launch
// (launchplan.go) and launches it (claimlaunch.go), recording a decision for every launch and every pod
// that cannot be provisioned. Pods that opt out of Karpenter's nodes (scheduling.OptsOut) are not read as
// pending at all: no launch, Event or record, as in Karpenter. With the CapacityBuffer gate on, the
// virtual pods of the cluster's CapacityBuffers are planned for with the pending pods and each buffer's
// status is written back (buffers.go, shared/adapters/capacitybuffer).
//
// shared/core/scheduling stays pure and never imports shared/core/apis; this package may import both. Its I/O goes
// through the io.Reader and io.Writer and the small interfaces (Store, ClusterReader, NodeClassResolver,
// LaunchTemplates, InstanceLauncher, UnavailableRecorder) its callers hand it; shared/flows/provisioning/e2e
// runs it over the real adapters against moto and a local control plane.
package provisioning

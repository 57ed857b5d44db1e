// Package provisioning is the use-case ring between Nodewright's configuration and its scheduling core:
// it turns validated Karpenter v1 objects (shared/apis) into the scheduler's NodePools and allocatable
// settings, reads and writes the instance-type catalog file that `nodewright plan` takes, and launches a
// claim with fallback across its offerings (launch.go), recording capacity failures for every invocation.
//
// shared/scheduling stays pure and never imports shared/apis; this package may import both. Its I/O goes
// through the io.Reader and io.Writer and the small interfaces (InstanceLauncher, UnavailableRecorder)
// its callers hand it.
package provisioning

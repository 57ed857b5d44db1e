// Package provisioning is the use-case ring between Nodewright's configuration and its scheduling core:
// it turns validated Karpenter v1 objects (shared/apis) into the scheduler's NodePools and allocatable
// settings, and reads and writes the instance-type catalog file that `nodewright plan` takes.
//
// shared/scheduling stays pure and never imports shared/apis; this package may import both. It does no
// I/O beyond the io.Reader and io.Writer its callers hand it.
package provisioning

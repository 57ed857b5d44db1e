// Package schedulingtest builds pods, nodes, NodePools, DaemonSets and instance-type catalogs for tests
// and benchmarks of the scheduling package. Every builder is deterministic: the same options give the
// same objects, and "random" workloads take an explicit seed.
package schedulingtest

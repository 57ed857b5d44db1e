// Package consolidation is the use case behind functions/disruption and `nodewright plan --disrupt`:
// it turns Karpenter v1 configuration and the cluster's state into the pure engine's input
// (shared/disruption) and carries the engine's commands out.
//
// This file set starts with the conversion of NodePools (nodepools.go); the runner that executes
// commands (taint, replacement first, drain through the termination flow, budgets on the ledger) builds
// on it.
package consolidation

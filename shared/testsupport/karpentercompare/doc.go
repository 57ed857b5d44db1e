// Command karpentercompare runs Karpenter's own scheduler (sigs.k8s.io/karpenter) and Nodewright's
// scheduling.Solve on the same benchmark inputs and prints, per input, the NodeClaims each creates,
// what launching them would cost per hour, how long each solve took, and the LP lower bound.
//
// It is a separate Go module so that Karpenter and its dependencies never enter the main module's
// build; `make bench-karpenter` runs it. Usage:
//
//	go run . -pods=1000,5000 -scales=20 -runs=3
package main

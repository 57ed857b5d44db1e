// Package sizing says how much memory and time each of Nodewright's functions gets for a cluster of a
// given size. The CDK app sizes the functions from it (context value clusterPods) and the scale harness
// (`make bench-scale`) runs each function's use case with the same figures, so what is measured is what
// is deployed. It is pure: no AWS, no Kubernetes.
package sizing

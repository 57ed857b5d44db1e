package sizing

import (
	"fmt"
	"sort"
	"time"
)

// Function names, as the folders under functions/.
const (
	Provisioner  = "provisioner"
	Disruption   = "disruption"
	Lifecycle    = "lifecycle"
	Termination  = "termination"
	Interruption = "interruption"
	Webhook      = "webhook"
)

// Functions are the functions sized here, in a stable order.
var Functions = []string{Provisioner, Disruption, Lifecycle, Termination, Interruption, Webhook}

// MaxClusterPods is the largest cluster the tiers cover: Kubernetes' supported ceiling.
const MaxClusterPods = 150_000

// DefaultClusterPods is the size assumed when the deployment does not say.
const DefaultClusterPods = 30_000

// Size is one function's configuration.
type Size struct {
	MemoryMB int
	Timeout  time.Duration
}

// GoMemLimit is the Go runtime's soft memory limit for the function (GOMEMLIMIT): 90% of its memory, so
// the collector works harder before the Lambda sandbox's hard limit is reached.
func (s Size) GoMemLimit() string { return fmt.Sprintf("%dMiB", s.MemoryMB*9/10) }

// tier is the configuration for clusters up to pods pods.
type tier struct {
	pods   int
	memory map[string]int
}

// timeouts do not depend on the cluster's size: each function's run is bounded to fit them.
var timeouts = map[string]time.Duration{
	Provisioner:  60 * time.Second,
	Disruption:   180 * time.Second,
	Lifecycle:    60 * time.Second,
	Termination:  60 * time.Second,
	Interruption: 30 * time.Second,
	Webhook:      5 * time.Second,
}

// tiers are the measured tiers (shared/testsupport/scalebench/README.md, "Performance at scale"), smallest first. The first is what the
// functions had before sizing existed, and stays the default.
var tiers = []tier{
	{pods: 30_000, memory: map[string]int{Provisioner: 1024, Disruption: 2048, Lifecycle: 512, Termination: 512, Interruption: 512, Webhook: 256}},
	{pods: 60_000, memory: map[string]int{Provisioner: 2048, Disruption: 3072, Lifecycle: 1024, Termination: 512, Interruption: 512, Webhook: 256}},
	{pods: 150_000, memory: map[string]int{Provisioner: 4096, Disruption: 4096, Lifecycle: 1536, Termination: 1024, Interruption: 512, Webhook: 256}},
}

// For returns each function's size for a cluster of clusterPods pods: the smallest tier that holds it.
// An error names the value when it is out of range.
func For(clusterPods int) (map[string]Size, error) {
	if clusterPods <= 0 || clusterPods > MaxClusterPods {
		return nil, fmt.Errorf("clusterPods %d: must be between 1 and %d (Kubernetes' supported ceiling)", clusterPods, MaxClusterPods)
	}
	i := sort.Search(len(tiers), func(i int) bool { return tiers[i].pods >= clusterPods })
	out := make(map[string]Size, len(Functions))
	for _, fn := range Functions {
		out[fn] = Size{MemoryMB: tiers[i].memory[fn], Timeout: timeouts[fn]}
	}
	return out, nil
}

// Tiers returns the upper bounds of the tiers, smallest first.
func Tiers() []int {
	out := make([]int, len(tiers))
	for i, t := range tiers {
		out[i] = t.pods
	}
	return out
}

package sandbox

import (
	"context"
	"math"
	"sort"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// Percentiles summarise durations in seconds (nearest-rank).
type Percentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	N   int     `json:"n"`
}

// percentiles of ds; zero for none.
func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(s)))) - 1
		return math.Round(s[max(i, 0)].Seconds()*1000) / 1000
	}
	return Percentiles{P50: rank(0.5), P99: rank(0.99), N: len(s)}
}

// median of vs (the mean of the middle two for an even count); zero for none.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	s := append([]float64(nil), vs...)
	sort.Float64s(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// Capacity is what the cluster's claims add up to.
type Capacity struct {
	Nodes             int            `json:"nodesLaunched"`
	InstanceTypes     map[string]int `json:"instanceTypes"`
	TotalPricePerHour float64        `json:"totalPricePerHour"`
	LeakedInstances   int            `json:"leakedInstances"`
	Leaks             []string       `json:"leaks,omitempty"`
}

// capacity reads the live claims and the cluster's instances: what runs, what it costs, and what leaked
// (an instance without a live claim, or a claim past launch whose instance is gone).
func (s *Sandbox) capacity(ctx context.Context) (Capacity, error) {
	claims, err := s.Store.ListClaims(ctx)
	if err != nil {
		return Capacity{}, err
	}
	insts, err := s.Launcher.List(ctx)
	if err != nil {
		return Capacity{}, err
	}
	running := map[string]bool{}
	for _, i := range insts {
		running[i.ID] = true
	}
	c := Capacity{InstanceTypes: map[string]int{}}
	owned := map[string]bool{}
	for _, cl := range claims {
		if !cl.Lifecycle.Live() {
			continue
		}
		if cl.InstanceID != "" {
			owned[cl.InstanceID] = true
		}
		if cl.Lifecycle == state.Pending {
			continue
		}
		c.Nodes++
		c.InstanceTypes[cl.InstanceType]++
		c.TotalPricePerHour += cl.PricePerHour
		if !running[cl.InstanceID] {
			c.Leaks = append(c.Leaks, "claim "+cl.Name+" has no running instance "+cl.InstanceID)
		}
	}
	for _, i := range insts {
		if !owned[i.ID] && !s.agent.isForeign(i.ID) { // another provisioner's instance is not Nodewright's leak
			c.LeakedInstances++
			c.Leaks = append(c.Leaks, "instance "+i.ID+" has no live claim")
		}
	}
	c.TotalPricePerHour = math.Round(c.TotalPricePerHour*10000) / 10000
	return c, nil
}

// allMet says whether a scenario worked: it has targets, every one was met, and no component failed.
func allMet(targets map[string]bool, errs []string) bool {
	for _, ok := range targets {
		if !ok {
			return false
		}
	}
	return len(targets) > 0 && len(errs) == 0
}

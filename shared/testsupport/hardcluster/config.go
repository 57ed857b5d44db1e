package hardcluster

import (
	"errors"
	"fmt"
)

// Config says what cluster to generate. Shares are fractions in [0, 1]; a zero share means none.
type Config struct {
	// Nodes is how many nodes the cluster has, non-candidates included.
	Nodes int
	// Seed makes the cluster: the same Config gives the same cluster.
	Seed uint64
	// Removed is the share of the packed pods deleted after packing (the scale-in).
	Removed float64
	// SpotShare is the share of the NodePool's ordinary nodes that run spot.
	SpotShare float64
	// OversizedShare is the share of nodes that are oversized (12xlarge and up, on-demand) and were
	// filled only to half their allocatable.
	OversizedShare float64
	// Deployments is how many deployments the pods come from; SpreadShare of them spread over zones
	// (maxSkew 1), alternately DoNotSchedule and ScheduleAnyway.
	Deployments int
	SpreadShare float64
	// ManagedShare is the share of nodes in an EKS managed node group (no NodePool label);
	// UninitializedShare the share of the NodePool's nodes that never initialized. Neither is a
	// candidate.
	ManagedShare, UninitializedShare float64
	// GuardedNodes is how many nodes run one pod of the deployment whose PDB allows no disruption.
	GuardedNodes int
}

// Defaults is the hard cluster of n nodes from seed: 60% of the pods deleted, three quarters of the
// ordinary nodes spot, 5% oversized half-empty nodes, 120 deployments of which 40% zone-spread, 3% of
// the nodes in a managed node group, 1% never initialized, and a zero-disruption PDB on 5 nodes.
func Defaults(n int, seed uint64) Config {
	return Config{
		Nodes: n, Seed: seed, Removed: 0.6, SpotShare: 0.75, OversizedShare: 0.05,
		Deployments: 120, SpreadShare: 0.4, ManagedShare: 0.03, UninitializedShare: 0.01, GuardedNodes: 5,
	}
}

// validate names the first field that makes no cluster.
func (c Config) validate() error {
	var errs []error
	if c.Nodes < 1 {
		errs = append(errs, fmt.Errorf("config: Nodes: %d, need at least 1", c.Nodes))
	}
	if c.Deployments < 1 {
		errs = append(errs, fmt.Errorf("config: Deployments: %d, need at least 1", c.Deployments))
	}
	if c.GuardedNodes < 0 || c.GuardedNodes > c.Nodes {
		errs = append(errs, fmt.Errorf("config: GuardedNodes: %d, need 0 to Nodes (%d)", c.GuardedNodes, c.Nodes))
	}
	for _, s := range []struct {
		name string
		v    float64
	}{{"Removed", c.Removed}, {"SpotShare", c.SpotShare}, {"OversizedShare", c.OversizedShare},
		{"SpreadShare", c.SpreadShare}, {"ManagedShare", c.ManagedShare}, {"UninitializedShare", c.UninitializedShare}} {
		if !(s.v >= 0 && s.v <= 1) {
			errs = append(errs, fmt.Errorf("config: %s: %v, need a share in [0, 1]", s.name, s.v))
		}
	}
	return errors.Join(errs...)
}

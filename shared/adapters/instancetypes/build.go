package instancetypes

import (
	"fmt"
	"slices"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Prices is what the catalog needs to price offerings; *pricing.Provider satisfies it.
type Prices interface {
	OnDemand(instanceType string) (float64, bool)
	Spot(instanceType, zone string) (float64, bool)
}

// Build turns the catalog into the scheduler's instance types for one EC2NodeClass: labels and
// allocatable from the AWS model under cfg, and an offering per zone (restricted to zones, the zones of
// the node class's subnets; nil means all) and capacity type that has a price. Offerings carry the id
// of their zone from cfg.ZoneIDs (none when it lacks the zone) and types carry cfg.Region. Types left
// with no offering are returned in skipped with the reason.
func (c *Catalog) Build(cfg scheduling.NodeClassConfig, prices Prices, zones []string) (types []*scheduling.InstanceType, skipped map[string]string, err error) {
	return c.BuildWithReservations(cfg, prices, zones, nil)
}

// BuildWithReservations is Build plus a reserved offering per capacity reservation of the node class
// (see ReservedOffering).
func (c *Catalog) BuildWithReservations(cfg scheduling.NodeClassConfig, prices Prices, zones []string, reservations []Reservation) (types []*scheduling.InstanceType, skipped map[string]string, err error) {
	skipped = map[string]string{}
	for _, t := range c.Types {
		if why := incompatible(t.Info.Name, cfg); why != "" {
			skipped[t.Info.Name] = why
			continue
		}
		offerings := reservedOfferings(t.Info.Name, reservations, prices)
		for _, z := range t.Zones {
			if zones != nil && !slices.Contains(zones, z) {
				continue
			}
			if t.OnDemand {
				if p, ok := prices.OnDemand(t.Info.Name); ok {
					offerings = append(offerings, scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeOnDemand, Price: p, Available: true})
				}
			}
			if t.Spot {
				if p, ok := prices.Spot(t.Info.Name, z); ok {
					offerings = append(offerings, scheduling.Offering{Zone: z, CapacityType: scheduling.CapacityTypeSpot, Price: p, Available: true})
				}
			}
		}
		for i := range offerings {
			offerings[i].ZoneID = cfg.ZoneIDs[offerings[i].Zone]
		}
		if len(offerings) == 0 {
			skipped[t.Info.Name] = "no priced offering in the node class's zones"
			continue
		}
		it, err := scheduling.NewAWSInstanceType(t.Info, cfg, offerings)
		if err != nil {
			return nil, nil, fmt.Errorf("building instance type %s: %w", t.Info.Name, err)
		}
		types = append(types, it)
	}
	return types, skipped, nil
}

// WithObservedMemory returns types with each type that observed names built again under cfg with that
// memory capacity (scheduling.NodeClassConfig.ObservedMemory) and the offerings it was built with; the
// others are returned as they are. Only the observed types are rebuilt: a few of the catalog's hundreds.
func (c *Catalog) WithObservedMemory(types []*scheduling.InstanceType, cfg scheduling.NodeClassConfig, observed map[string]int64) ([]*scheduling.InstanceType, error) {
	if len(observed) == 0 {
		return types, nil
	}
	cfg.ObservedMemory = observed
	infos := make(map[string]scheduling.InstanceInfo, len(observed))
	for _, t := range c.Types {
		if observed[t.Info.Name] > 0 {
			infos[t.Info.Name] = t.Info
		}
	}
	out := slices.Clone(types)
	for i, it := range out {
		if observed[it.Name] <= 0 {
			continue
		}
		info, ok := infos[it.Name]
		if !ok {
			return nil, fmt.Errorf("instance type %s is not in the catalog", it.Name)
		}
		rebuilt, err := scheduling.NewAWSInstanceType(info, cfg, it.Offerings)
		if err != nil {
			return nil, fmt.Errorf("building instance type %s with its observed memory: %w", it.Name, err)
		}
		out[i] = rebuilt
	}
	return out, nil
}

package provisioning

import (
	"maps"
	"slices"

	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/core/drift"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// driftCatalog is the region's catalog as drift's InstanceTypeNotFound reads it, indexed once per run:
// every instance type with the capacity types it is sold as, offered in every zone of the region. That is
// Karpenter's list of what a NodePool may launch: an offering per zone and capacity type whether or not
// the type has capacity, a price or a subnet there now (those make an offering unavailable, not absent),
// so a node drifts this way only when its type, its capacity type or its zone has left the catalog. A
// subnet no longer selected is SubnetDrift's to say.
type driftCatalog struct {
	types map[string]*instancetypes.Type
	zones []string
}

// driftCatalog returns the run's index of its catalog, built on first use; nil when the run has none.
// The caller holds driftMu.
func (l *Launches) driftCatalog() *driftCatalog {
	if l.offers == nil && l.catalog != nil {
		l.offers = newDriftCatalog(l.catalog)
	}
	return l.offers
}

func newDriftCatalog(cat *instancetypes.Catalog) *driftCatalog {
	dc := &driftCatalog{types: make(map[string]*instancetypes.Type, len(cat.Types))}
	zones := map[string]bool{}
	for i := range cat.Types {
		t := &cat.Types[i]
		dc.types[t.Info.Name] = t
		for _, z := range t.Zones {
			zones[z] = true
		}
	}
	dc.zones = slices.Sorted(maps.Keys(zones))
	return dc
}

// offered is drift's lookup of the instance types a NodePool whose EC2NodeClass is rc offers: the
// catalog's, with the class's reserved offerings added. A nil catalog leaves it nil (not known).
func (dc *driftCatalog) offered(rc *readyClass) func(string) ([]drift.Offering, bool) {
	if dc == nil {
		return nil
	}
	return func(name string) ([]drift.Offering, bool) {
		t, ok := dc.types[name]
		if !ok {
			return nil, false
		}
		out := make([]drift.Offering, 0, 2*len(dc.zones))
		for _, z := range dc.zones {
			if t.OnDemand {
				out = append(out, drift.Offering{Zone: z, CapacityType: scheduling.CapacityTypeOnDemand})
			}
			if t.Spot {
				out = append(out, drift.Offering{Zone: z, CapacityType: scheduling.CapacityTypeSpot})
			}
		}
		if it := rc.byName[name]; it != nil {
			for _, o := range it.Offerings {
				if o.CapacityType == scheduling.CapacityTypeReserved {
					out = append(out, drift.Offering{Zone: o.Zone, CapacityType: o.CapacityType})
				}
			}
		}
		return out, true
	}
}

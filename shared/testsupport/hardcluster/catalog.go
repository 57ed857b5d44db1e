package hardcluster

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

// ordinarySizes and oversizedSizes are the sizes nodes are drawn from, with their weights for
// ordinary nodes: a fifth 2xlarge, most 4xlarge, a fifth 8xlarge.
var (
	ordinarySizes  = map[string]int{"2xlarge": 20, "4xlarge": 60, "8xlarge": 20}
	oversizedSizes = map[string]int{"12xlarge": 1, "16xlarge": 1, "24xlarge": 1}
)

// nodeCategories are the instance categories of the NodePool (and of every generated node).
var nodeCategories = []string{"c", "m", "r"}

// ReadCatalog reads a catalog file in the `nodewright plan --instance-types` format.
func ReadCatalog(path string) ([]provisioning.CatalogEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c, err := provisioning.ReadCatalog(path, f)
	if err != nil {
		return nil, err
	}
	return c.InstanceTypes, nil
}

// nodeType is a catalog type nodes may be drawn from.
type nodeType struct {
	entry  *provisioning.CatalogEntry
	weight int
}

// typePool is the types of one kind of node (ordinary or oversized), drawn by weight.
type typePool struct {
	types []nodeType
	total int
}

// newTypePools splits the catalog's amd64 c, m and r types (no GPU, no metal, with an allocatable)
// into ordinary and oversized nodes by size.
func newTypePools(catalog []provisioning.CatalogEntry) (ordinary, oversized typePool, err error) {
	for i := range catalog {
		e := &catalog[i]
		if e.Arch != "amd64" || e.GPUs > 0 || e.Allocatable == nil || !slices.Contains(nodeCategories, e.Labels["karpenter.k8s.aws/instance-category"]) {
			continue
		}
		_, size, _ := strings.Cut(e.Name, ".")
		if w, ok := ordinarySizes[size]; ok {
			ordinary.add(e, w)
		} else if w, ok := oversizedSizes[size]; ok {
			oversized.add(e, w)
		}
	}
	if ordinary.total == 0 || oversized.total == 0 {
		return ordinary, oversized, fmt.Errorf("the catalog has no amd64 c, m or r types of sizes %v and %v with an allocatable", keys(ordinarySizes), keys(oversizedSizes))
	}
	return ordinary, oversized, nil
}

func (p *typePool) add(e *provisioning.CatalogEntry, w int) {
	p.types = append(p.types, nodeType{entry: e, weight: w})
	p.total += w
}

// draw picks by weight a type with an available offering of capacity type ct, in zone when zone is
// not empty, and returns it with the zone (drawn among its zones for ct when zone is empty). It
// returns nil when no type qualifies.
func (p *typePool) draw(r intn, ct, zone string) (*provisioning.CatalogEntry, string) {
	var fit []nodeType
	total := 0
	for _, t := range p.types {
		if zones := offeredZones(t.entry, ct); len(zones) > 0 && (zone == "" || slices.Contains(zones, zone)) {
			fit = append(fit, t)
			total += t.weight
		}
	}
	if total == 0 {
		return nil, ""
	}
	k := r.IntN(total)
	for _, t := range fit {
		if k >= t.weight {
			k -= t.weight
			continue
		}
		if zone == "" {
			zones := offeredZones(t.entry, ct)
			zone = zones[r.IntN(len(zones))]
		}
		return t.entry, zone
	}
	panic("unreachable: k < total")
}

// offeredZones are the zones, sorted, where e has an available offering of ct.
func offeredZones(e *provisioning.CatalogEntry, ct string) []string {
	var zones []string
	for _, o := range e.Offerings {
		if o.CapacityType == ct && o.Available && !slices.Contains(zones, o.Zone) {
			zones = append(zones, o.Zone)
		}
	}
	slices.Sort(zones)
	return zones
}

// priceOf is e's price for ct in zone.
func priceOf(e *provisioning.CatalogEntry, ct, zone string) float64 {
	for _, o := range e.Offerings {
		if o.CapacityType == ct && o.Zone == zone {
			return o.Price
		}
	}
	return 0
}

// intn is the part of *rand.Rand the draws use.
type intn interface{ IntN(int) int }

func keys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

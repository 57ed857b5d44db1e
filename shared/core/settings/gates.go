package settings

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// FeatureGates are the Karpenter feature gates Nodewright implements.
type FeatureGates struct {
	// SpotToSpotConsolidation lets consolidation replace spot nodes with cheaper spot nodes.
	SpotToSpotConsolidation bool
	// NodeRepair replaces Nodewright's nodes that stay unhealthy (Node conditions, EC2 status checks) past
	// their toleration, unless too many of their NodePool are unhealthy (shared/flows/lifecycle noderepair.go).
	NodeRepair bool
	// ReservedCapacity launches into the capacity reservations EC2NodeClasses select
	// (capacityReservationSelectorTerms); off, they are ignored and nothing launches as reserved.
	ReservedCapacity bool
	// CapacityBuffer reads the cluster's CapacityBuffers (autoscaling.x-k8s.io/v1beta1) and keeps the
	// room they ask for: provisioning plans for their virtual pods and consolidation keeps their room
	// (shared/adapters/capacitybuffer). Off, no CapacityBuffer is read.
	CapacityBuffer bool
	// NodeOverlay applies the configuration's NodeOverlays (karpenter.sh/v1alpha1) to the instance types of
	// every NodePool before each solve and consolidation decision (shared/core/nodeoverlay); off, a
	// configuration that holds one is refused.
	NodeOverlay bool
	// StaticCapacity accepts static NodePools (spec.replicas): each keeps exactly replicas nodes,
	// launched by the provisioner without pending pods (shared/flows/provisioning staticpools.go). Off, a
	// NodePool with replicas is refused where the configuration is validated (cdk synth, nodewright apply).
	StaticCapacity bool
}

// DefaultFeatureGates are Karpenter's defaults.
func DefaultFeatureGates() FeatureGates { return FeatureGates{ReservedCapacity: true} }

// gate is one of Karpenter's feature gates: its default and its field. Nodewright implements all six
// of Karpenter v1.14's gates.
type gate struct {
	name  string
	def   bool
	field func(*FeatureGates) *bool
}

// gates are Karpenter's feature gates (FEATURE_GATES, v1.14), in its order.
var gates = []gate{
	{name: "NodeRepair", field: func(g *FeatureGates) *bool { return &g.NodeRepair }},
	{name: "ReservedCapacity", def: true, field: func(g *FeatureGates) *bool { return &g.ReservedCapacity }},
	{name: "SpotToSpotConsolidation", field: func(g *FeatureGates) *bool { return &g.SpotToSpotConsolidation }},
	{name: "NodeOverlay", field: func(g *FeatureGates) *bool { return &g.NodeOverlay }},
	{name: "StaticCapacity", field: func(g *FeatureGates) *bool { return &g.StaticCapacity }},
	{name: "CapacityBuffer", field: func(g *FeatureGates) *bool { return &g.CapacityBuffer }},
}

func findGate(name string) (gate, bool) {
	for _, g := range gates {
		if g.name == name {
			return g, true
		}
	}
	return gate{}, false
}

// set turns one gate on or off; a name that is not one of Karpenter's gates is refused.
func (fg *FeatureGates) set(name string, on bool) error {
	g, ok := findGate(name)
	if !ok {
		return fmt.Errorf("unknown feature gate %q: Karpenter's gates are %s", name, gateNames())
	}
	*g.field(fg) = on
	return nil
}

func gateNames() string {
	names := make([]string, len(gates))
	for i, g := range gates {
		names[i] = g.name
	}
	return strings.Join(names, ", ")
}

// ParseFeatureGates reads Karpenter's FEATURE_GATES form, "Name=true,Other=false" (spaces around items are
// ignored; the values are Go's booleans: true, false, 1, 0, t, f...). Gates it does not name keep their
// defaults; an empty string is the defaults. The error, a *FieldError for the featureGates context value,
// names the first item that is malformed, repeated, not one of Karpenter's gates, or asks for a gate
// Nodewright does not implement.
func ParseFeatureGates(s string) (FeatureGates, error) {
	fg := DefaultFeatureGates()
	if strings.TrimSpace(s) == "" {
		return fg, nil
	}
	bad := func(reason string) (FeatureGates, error) {
		return DefaultFeatureGates(), &FieldError{Field: "featureGates", Value: s, Reason: reason}
	}
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(item), "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" {
			return bad(fmt.Sprintf("%q is not Name=true or Name=false", strings.TrimSpace(item)))
		}
		on, err := strconv.ParseBool(value)
		if err != nil {
			return bad(fmt.Sprintf("feature gate %s: %q is not true or false", name, value))
		}
		if seen[name] {
			return bad(fmt.Sprintf("feature gate %s is set twice", name))
		}
		seen[name] = true
		if err := fg.set(name, on); err != nil {
			return bad(err.Error())
		}
	}
	return fg, nil
}

// Map is the gates Nodewright implements, by Karpenter's names.
func (fg FeatureGates) Map() map[string]bool {
	out := map[string]bool{}
	for _, g := range gates {
		if g.field != nil {
			out[g.name] = *g.field(&fg)
		}
	}
	return out
}

// String writes the gates Nodewright implements in Karpenter's form, sorted by name.
func (fg FeatureGates) String() string {
	m := fg.Map()
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatBool(m[n])
	}
	return strings.Join(parts, ",")
}

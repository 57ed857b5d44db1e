package nodeoverlay

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Overlay is a validated NodeOverlay in the form Apply uses.
type Overlay struct {
	Name   string
	Weight int32
	// Requirements select instance types and offerings.
	Requirements scheduling.Requirements
	// Price is the overlay's price or priceAdjustment as written ("0.42", "+0.1", "-30%"), "" for none.
	Price string
	// Capacity are the extended resources it sets, by name.
	Capacity map[string]int64
}

// FromAPI turns a NodeOverlay that passed apis.ValidateNodeOverlay into an Overlay. The error is for an
// overlay that did not (a requirement or price that does not parse), naming the field.
func FromAPI(no *apis.NodeOverlay) (Overlay, error) {
	o := Overlay{Name: no.Name, Requirements: scheduling.Requirements{}}
	if no.Spec.Weight != nil {
		o.Weight = *no.Spec.Weight
	}
	for i, r := range no.Spec.Requirements {
		req, err := scheduling.NewRequirement(r.Key, scheduling.Operator(r.Operator), r.Values...)
		if err != nil {
			return Overlay{}, fmt.Errorf("NodeOverlay %s: spec.requirements[%d]: %w", no.Name, i, err)
		}
		o.Requirements.Add(req)
	}
	switch {
	case no.Spec.Price != nil:
		o.Price = *no.Spec.Price
	case no.Spec.PriceAdjustment != nil:
		o.Price = *no.Spec.PriceAdjustment
	}
	if o.Price != "" {
		if _, err := parseChange(o.Price); err != nil {
			return Overlay{}, fmt.Errorf("NodeOverlay %s: spec.price: %w", no.Name, err)
		}
	}
	for name, q := range no.Spec.Capacity {
		switch name {
		case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourcePods:
			return Overlay{}, fmt.Errorf("NodeOverlay %s: spec.capacity[%s]: an overlay sets extended resources only", no.Name, name)
		}
		if o.Capacity == nil {
			o.Capacity = map[string]int64{}
		}
		o.Capacity[string(name)] = q.Value()
	}
	return o, nil
}

// FromObjects converts every NodeOverlay of objs (validated), in the order Apply takes them.
func FromObjects(objs []*apis.NodeOverlay) ([]Overlay, error) {
	out := make([]Overlay, 0, len(objs))
	for _, no := range objs {
		o, err := FromAPI(no)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	order(out)
	return out, nil
}

// order sorts overlays as Karpenter takes them: heaviest first, equal weights by name from Z to A.
func order(overlays []Overlay) {
	slices.SortStableFunc(overlays, func(a, b Overlay) int {
		return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(b.Name, a.Name))
	})
}

// change is a parsed price or price adjustment.
type change struct {
	absolute bool    // the price is replaced by amount
	percent  bool    // the price is scaled by (1 + amount/100)
	amount   float64 // else amount is added
}

// parseChange reads "0.42" (a price), "+0.1"/"-0.1" (an amount) or "+10%"/"-30%" (a percentage).
func parseChange(s string) (change, error) {
	if s == "" {
		return change{}, fmt.Errorf("empty price")
	}
	c := change{absolute: s[0] != '+' && s[0] != '-'}
	num := s
	if strings.HasSuffix(s, "%") {
		if c.absolute {
			return change{}, fmt.Errorf("%q: a percentage needs a sign", s)
		}
		c.percent, num = true, strings.TrimSuffix(s, "%")
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return change{}, fmt.Errorf("%q is not a price or price adjustment", s)
	}
	c.amount = v
	return c, nil
}

// apply returns the price after the change, never below 0.
func (c change) apply(price float64) float64 {
	switch {
	case c.absolute:
		price = c.amount
	case c.percent:
		price *= 1 + c.amount/100
	default:
		price += c.amount
	}
	return max(price, 0)
}

// AdjustedPrice is price after an overlay's price or priceAdjustment (see Overlay.Price): the price
// given, the price plus or minus an amount, or the price scaled by a percentage; never below 0. A change
// that does not parse (validation refuses it) leaves the price as it is.
func AdjustedPrice(price float64, s string) float64 {
	c, err := parseChange(s)
	if err != nil {
		return price
	}
	return c.apply(price)
}

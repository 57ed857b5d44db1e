package scheduling

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func familyCandidates(families ...string) []*candidate {
	var out []*candidate
	for i, f := range families {
		it := NewInstanceType(fmt.Sprintf("%s.%d", f, i), map[string]string{LabelInstanceFamily: f}, Resources{}, Resources{}, []Offering{{Zone: "a", CapacityType: CapacityTypeSpot, Price: float64(i + 1), Available: true}})
		out = append(out, &candidate{it: it, price: float64(i + 1), priceRank: i})
	}
	return out
}

func TestCheckMinValues(t *testing.T) {
	fam := MustRequirement(LabelInstanceFamily, OpExists)
	fam.MinValues = 3
	reqs := NewRequirements(fam)
	assert.Nil(t, checkMinValues(familyCandidates("c5", "m5", "r5"), reqs))
	err := checkMinValues(familyCandidates("c5", "c5", "m5"), reqs)
	require.NotNil(t, err)
	assert.Equal(t, MinValuesError{Key: LabelInstanceFamily, Want: 3, Have: 2}, *err)

	// Values excluded by the requirement do not count.
	narrowed := MustRequirement(LabelInstanceFamily, OpNotIn, "r5")
	narrowed.MinValues = 3
	assert.NotNil(t, checkMinValues(familyCandidates("c5", "m5", "r5"), NewRequirements(narrowed)))
}

func TestTruncateForMinValues(t *testing.T) {
	fam := MustRequirement(LabelInstanceFamily, OpExists)
	fam.MinValues = 3
	reqs := NewRequirements(fam)
	cands := familyCandidates("c5", "c5", "c5", "c5", "m5", "r5")

	got := truncateForMinValues(cands, reqs, 3)
	var names []string
	for _, c := range got {
		names = append(names, c.it.Name)
	}
	assert.Equal(t, []string{"c5.0", "m5.4", "r5.5"}, names, "dearer types that add a family displace cheaper ones that do not")
	assert.Nil(t, checkMinValues(got, reqs))

	assert.Len(t, truncateForMinValues(cands, Requirements{}, 2), 2)
	assert.Len(t, truncateForMinValues(cands, reqs, 10), 6)
}

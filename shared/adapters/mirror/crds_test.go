package mirror

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// karpenterShortNames are the short names Karpenter's CRDs declare (only EC2NodeClass has any).
var karpenterShortNames = []string{"ec2nc", "ec2ncs"}

func TestTheCRDsAreNodewrightsOwnAndClashWithNoKarpenterName(t *testing.T) {
	crds := CRDs()
	require.Len(t, crds, 3)
	seen := map[string]bool{}
	for _, c := range crds {
		assert.Equal(t, "nodewright.sh", c.Spec.Group)
		assert.True(t, strings.HasSuffix(c.Name, ".nodewright.sh"), c.Name)
		assert.Equal(t, "Cluster", c.Spec.Scope)
		assert.Equal(t, []string{"nodewright"}, c.Spec.Names.Categories)
		require.Len(t, c.Spec.Versions, 1)
		v := c.Spec.Versions[0]
		assert.Equal(t, "v1", v.Name)
		assert.NotNil(t, v.Subresources.Status, "%s has a status subresource", c.Name)
		for _, s := range c.Spec.Names.ShortNames {
			assert.NotContains(t, karpenterShortNames, s)
			assert.False(t, seen[s], "short name %s used twice", s)
			seen[s] = true
		}
	}
	var names []string
	for _, col := range crds[0].Spec.Versions[0].AdditionalPrinterColumns {
		if col.Priority == 0 {
			names = append(names, col.Name)
		}
	}
	assert.Equal(t, []string{"Type", "Capacity", "Zone", "Node", "Ready", "Age"}, names, "NodeClaim's columns, as Karpenter's")
}

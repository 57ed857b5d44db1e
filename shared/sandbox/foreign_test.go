package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/instance"
)

func TestKarpenterCollectsOnlyItsTagCombination(t *testing.T) {
	karpenterV11 := map[string]string{karpenterTagNodePool: "general", karpenterTagNodeClass: "default",
		eksTagClusterName: Cluster, kubernetesClusterTag(Cluster): "owned", karpenterTagNodeClaim: "general-x"}
	karpenterV10 := map[string]string{karpenterTagNodePool: "general", karpenterTagNodeClass: "default",
		kubernetesClusterTag(Cluster): "owned"}
	nodewright := map[string]string{kubernetesClusterTag(Cluster): "owned", instance.TagCluster: Cluster,
		instance.TagNodePool: "default", instance.TagNodeClass: "default", instance.TagNodeClaim: "default-x"}
	otherCluster := map[string]string{karpenterTagNodePool: "general", karpenterTagNodeClass: "default",
		eksTagClusterName: "other", kubernetesClusterTag("other"): "owned"}
	noNodeClass := map[string]string{karpenterTagNodePool: "general", eksTagClusterName: Cluster}
	for name, c := range map[string]struct {
		tags map[string]string
		want bool
	}{
		"Karpenter v1.1+ instance":       {karpenterV11, true},
		"Karpenter v1.0 instance":        {karpenterV10, true},
		"Nodewright's instance":          {nodewright, false},
		"another cluster's instance":     {otherCluster, false},
		"without the node class tag key": {noNodeClass, false},
	} {
		assert.Equal(t, c.want, karpenterCollects(c.tags, Cluster), name)
	}
}

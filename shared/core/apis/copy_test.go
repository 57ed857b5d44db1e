package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestDeepCopyIsIndependent(t *testing.T) {
	np := baseNodePool(t)
	np.Origin = apis.Origin{File: "x.yaml", Document: 2, Item: -1}
	c := np.DeepCopy()
	assert.Equal(t, np, c)
	c.Spec.Template.ObjectMeta.Labels["team"] = "changed"
	c.Spec.Template.Spec.Requirements[0].Values[0] = "changed"
	assert.Equal(t, "a", np.Spec.Template.ObjectMeta.Labels["team"])
	assert.Equal(t, "spot", np.Spec.Template.Spec.Requirements[0].Values[0])

	nc := baseEC2NodeClass(t)
	ncc := nc.DeepCopy()
	assert.Equal(t, nc, ncc)
	*ncc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = "1Gi"
	assert.Equal(t, "50Gi", *nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize)
}

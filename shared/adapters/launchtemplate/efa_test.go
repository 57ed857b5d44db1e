package launchtemplate

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// A node whose pods request vpc.amazonaws.com/efa gets its EFA interfaces at launch, one per network
// card, the first as the primary interface; the security groups move into the interfaces.
func TestDataGivesEFAInterfaces(t *testing.T) {
	tpl := testTemplate(func(s *apis.EC2NodeClassSpec) { s.AssociatePublicIPAddress = aws.Bool(false) })
	tpl.Options.EFAInterfaces = 3
	data, err := Data(tpl)
	require.NoError(t, err)
	assert.Nil(t, data.SecurityGroupIds)
	require.Len(t, data.NetworkInterfaces, 3)
	for i, ni := range data.NetworkInterfaces {
		assert.Equal(t, "efa", aws.ToString(ni.InterfaceType), "interface %d", i)
		assert.EqualValues(t, i, aws.ToInt32(ni.NetworkCardIndex), "interface %d", i)
		assert.EqualValues(t, min(i, 1), aws.ToInt32(ni.DeviceIndex), "interface %d", i)
		assert.Equal(t, []string{"sg-1", "sg-2"}, ni.Groups)
		assert.False(t, aws.ToBool(ni.AssociatePublicIpAddress))
	}

	tpl.Options.EFAInterfaces = 0
	data, err = Data(tpl)
	require.NoError(t, err)
	require.Len(t, data.NetworkInterfaces, 1, "associatePublicIPAddress alone: one plain interface")
	assert.Nil(t, data.NetworkInterfaces[0].InterfaceType)
}

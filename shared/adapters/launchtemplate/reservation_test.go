package launchtemplate

import (
	"encoding/base64"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDataTargetsTheCapacityReservation(t *testing.T) {
	plain, err := Data(testTemplate(nil))
	require.NoError(t, err)
	assert.Nil(t, plain.CapacityReservationSpecification, "no reservation, no targeting")

	tmpl := testTemplate(nil)
	tmpl.Options.CapacityReservationID, tmpl.Options.CapacityReservationType = "cr-0123", "default"
	tmpl.Options.Labels["karpenter.k8s.aws/capacity-reservation-id"] = "cr-0123"
	data, err := Data(tmpl)
	require.NoError(t, err)
	require.NotNil(t, data.CapacityReservationSpecification)
	assert.Equal(t, "cr-0123", aws.ToString(data.CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId))
	assert.Nil(t, data.InstanceMarketOptions, "an ODCR is plain on-demand")
	userData, err := base64.StdEncoding.DecodeString(aws.ToString(data.UserData))
	require.NoError(t, err)
	assert.Contains(t, string(userData), "karpenter.k8s.aws/capacity-reservation-id=cr-0123", "the node registers with the reservation label")

	name, err := Name("prod", data)
	require.NoError(t, err)
	plainName, err := Name("prod", plain)
	require.NoError(t, err)
	assert.NotEqual(t, plainName, name, "a reservation gets a template of its own")

	tmpl.Options.CapacityReservationType = "capacity-block"
	block, err := Data(tmpl)
	require.NoError(t, err)
	require.NotNil(t, block.InstanceMarketOptions)
	assert.Equal(t, ec2types.MarketTypeCapacityBlock, block.InstanceMarketOptions.MarketType)

	tmpl.Options.CapacityReservationType, tmpl.Options.CapacityReservationInterruptible = "default", true
	interruptible, err := Data(tmpl)
	require.NoError(t, err)
	require.NotNil(t, interruptible.InstanceMarketOptions, "an interruptible reservation has its own market type")
	assert.Equal(t, ec2types.MarketTypeInterruptibleCapacityReservation, interruptible.InstanceMarketOptions.MarketType)
	assert.Equal(t, "cr-0123", aws.ToString(interruptible.CapacityReservationSpecification.CapacityReservationTarget.CapacityReservationId))
}

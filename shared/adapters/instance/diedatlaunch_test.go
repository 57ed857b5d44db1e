package instance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiedAtLaunch(t *testing.T) {
	for code, died := range map[string]bool{
		"Client.InvalidKMSKey.InvalidState": true, "Client.InternalError": true, "Client.VolumeLimitExceeded": true,
		"Server.InsufficientInstanceCapacity": true, "Client.UserInitiatedShutdown": false, "Server.SpotInstanceTermination": false,
		"Client.InstanceInitiatedShutdown": false, "": false,
	} {
		assert.Equal(t, died, DiedAtLaunch(code), code)
	}
}

// TestGoneReasonsReadsTheStateReason: the state reason EC2 gives a terminated instance is read by id;
// a running instance has none to give.
func TestGoneReasonsReadsTheStateReason(t *testing.T) {
	terminated := `<item><instanceId>i-0died</instanceId><instanceType>m5.large</instanceType><instanceState><code>48</code><name>terminated</name></instanceState>
<stateReason><code>Client.InvalidKMSKey.InvalidState</code><message>Client.InvalidKMSKey.InvalidState: The KMS key provided is in an incorrect state</message></stateReason></item>`
	client, _ := newEC2Wire(t, map[string][]wireAnswer{
		"DescribeInstances": {{200, describeXML(terminated + instanceXML("i-0alive", nil))}},
	})
	codes, messages, err := New(client, "demo").GoneReasons(context.Background(), []string{"i-0died", "i-0alive"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"i-0died": "Client.InvalidKMSKey.InvalidState"}, codes)
	assert.Contains(t, messages["i-0died"], "incorrect state")
}

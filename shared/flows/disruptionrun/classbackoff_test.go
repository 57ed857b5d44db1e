package disruptionrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// TestReplacementsOfAClassBackingOffWait: while the EC2NodeClass of a replacement's pool backs off
// (its instances die at launch), a drift launches no replacement there and says why; once the back-off
// is over it does.
func TestReplacementsOfAClassBackingOffWait(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("old", "medium", "3")
	f.node("busy", "medium", "3")
	f.launch.setDrift("claim-old", amiDrift())
	f.runner.cfg.MaxCommands = 1
	f.launch.classFailures = []state.ClassFailures{{NodeClass: "default", Failures: []state.LaunchFailure{
		{InstanceID: "i-0dead", At: f.clock.Now().Add(-time.Minute), Code: "Client.InvalidKMSKey.InvalidState", Message: "bad key"}}}}

	rep := f.runAs("run-1")
	assert.Equal(t, 0, f.launches(), "no replacement while the class backs off")
	require.Len(t, rep.Rejected, 1)
	assert.Contains(t, rep.Rejected[0], "EC2NodeClass default is backing off: 1 instance(s) died at launch")
	assert.Contains(t, rep.Rejected[0], "Client.InvalidKMSKey.InvalidState")
	assert.False(t, f.cluster.tainted("old"))

	f.clock.Advance(5 * time.Minute)
	f.runAs("run-2")
	assert.Equal(t, 1, f.launches(), "the back-off is over")
}

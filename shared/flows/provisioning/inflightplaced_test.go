package provisioning

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// mutableCluster returns whatever snapshot the test set last.
type mutableCluster struct{ snap *kube.Snapshot }

func (c *mutableCluster) Snapshot(context.Context) (*kube.Snapshot, error) { return c.snap, nil }

func TestARunListsThePodsItPlacedOnAClaimInFlightOnce(t *testing.T) {
	a, b := pod("a", nil), pod("b", nil)
	a.UID, b.UID = "uid-a", "uid-b"
	cluster := &mutableCluster{snap: pendingSnapshot(a)}
	w := newTestProvisioner(t, cluster)
	ctx := context.Background()

	first, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, first.Claims, 1)
	assert.Empty(t, first.PlacedInFlight, "the claim was launched for the pod: it is in Claims")
	claim := first.Claims[0].Name

	cluster.snap = pendingSnapshot(a, b) // b went pending since; both fit on the claim in flight
	second, err := w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, second.Claims)
	assert.Equal(t, []InFlightPlacement{{Claim: claim, PodUIDs: []types.UID{"uid-b"}}}, second.PlacedInFlight,
		"only the pod the previous run had not seen")
	var nominated []string
	for _, ev := range second.nominations {
		nominated = append(nominated, ev.Object.Name+": "+ev.Message)
	}
	assert.Equal(t, []string{"b: Pod should schedule on: nodeclaim/" + claim}, nominated)

	third, err := w.p.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Empty(t, third.PlacedInFlight, "both pods were seen by the run before")
}

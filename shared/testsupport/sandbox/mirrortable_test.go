package sandbox

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

// TestScaleUpShowsEveryClaimInKubectl: after a scale-up under the real control plane, the view of
// `kubectl get nodeclaims.nodewright.sh -o wide` lists every live claim, and nothing else, with its
// type, zone, instance, node and READY True; while each claim was launched and its Node not registered,
// its mirror said READY False with the reason; the report's mirrors match the claims; and the
// administrator cannot change a mirror.
func TestScaleUpShowsEveryClaimInKubectl(t *testing.T) {
	sb := start(t)
	ctx := context.Background()
	watch, err := sb.watchMirrors(ctx)
	require.NoError(t, err)
	defer watch.close()

	rep, err := sb.ScaleUp(ctx, ScaleUpOptions{Replicas: 6, Timeout: 2 * time.Minute})
	require.NoError(t, err)
	require.Equal(t, 6, rep.PodsBound, "every pod bound")
	assert.Empty(t, rep.Errors)

	cols, rows, err := sb.NodeClaimView(ctx)
	require.NoError(t, err)
	assert.Subset(t, cols, []string{"Name", "Type", "Capacity", "Zone", "Node", "Ready", "Age", "ImageID", "ID", "NodePool", "NodeClass", "Drifted"},
		"-o wide's columns")
	claims, err := sb.Store.ListClaims(ctx)
	require.NoError(t, err)
	live := 0
	for _, c := range claims {
		if !c.Lifecycle.Live() {
			continue
		}
		live++
		row := rows[c.Name]
		require.NotNil(t, row, "claim %s is listed", c.Name)
		assert.Equal(t, c.NodeName, row["Node"], "%s: NODE", c.Name)
		assert.NotEmpty(t, row["Node"], "%s: NODE", c.Name)
		assert.Equal(t, "True", row["Ready"], "%s: READY", c.Name)
		assert.Equal(t, c.InstanceType, row["Type"], "%s: TYPE", c.Name)
		assert.Equal(t, c.Zone, row["Zone"], "%s: ZONE", c.Name)
		assert.Equal(t, c.ProviderID, row["ID"], "%s: ID", c.Name)
		assert.Equal(t, c.NodePool, row["NodePool"], "%s: NODEPOOL", c.Name)

		ready, ok := watch.readyWhileUnregistered(c.Name)
		require.True(t, ok, "%s's mirror showed it launched before its Node registered", c.Name)
		assert.True(t, strings.HasPrefix(ready, "False ") && strings.Contains(ready, "Registered is not true"),
			"%s: READY False with the reason while unregistered, got %q", c.Name, ready)
	}
	assert.Positive(t, live)
	assert.Len(t, rows, live, "no mirror without a live claim")
	assert.Equal(t, live, rep.Claims)
	assert.Equal(t, rep.Claims, rep.MirrorsMatchingClaims, "mismatches: %v", rep.MirrorMismatches)
	assert.Positive(t, rep.MirrorLagSeconds.N)

	admin, err := dynamic.NewForConfig(sb.CP.Config)
	require.NoError(t, err)
	name := slices.Sorted(maps.Keys(rows))[0]
	_, err = admin.Resource(mirror.NodeClaims.Resource()).Patch(ctx, name, types.MergePatchType,
		[]byte(`{"metadata":{"labels":{"team":"b"}}}`), metav1.PatchOptions{})
	assert.True(t, apierrors.IsForbidden(err), "the administrator cannot change mirror %s: %v", name, err)
}

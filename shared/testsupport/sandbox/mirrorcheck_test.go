package sandbox

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// served is the mirror the writer would have written for claim, as the API server serves it.
func served(t *testing.T, claim state.Claim, node *corev1.Node) *unstructured.Unstructured {
	t.Helper()
	o := mirror.NodeClaim(mirror.Claim{Record: claim, Node: node})
	b, err := json.Marshal(map[string]any{"apiVersion": mirror.APIVersion, "kind": "NodeClaim",
		"metadata": map[string]any{"name": o.Name}, "spec": o.Spec, "status": o.Status})
	require.NoError(t, err)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(b))
	return u
}

// TestMirrorMismatchSaysHowAMirrorLagsItsClaim: the report's mirrorsMatchingClaims counts a mirror only
// when its node, phase and conditions are the claim's: one written before the Node registered, or none
// at all, does not count.
func TestMirrorMismatchSaysHowAMirrorLagsItsClaim(t *testing.T) {
	at := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	launched := state.Claim{Name: "default-abcde", NodePool: "default", NodeClass: "default", Lifecycle: state.Launched,
		InstanceID: "i-0123", ProviderID: "aws:///us-east-1a/i-0123", InstanceType: "m5.large", Zone: "us-east-1a",
		CreatedAt: at, LaunchedAt: &at}
	initialized := launched
	initialized.Lifecycle, initialized.NodeName, initialized.RegisteredAt, initialized.InitializedAt = state.Initialized,
		"ip-10-0-3-17.ec2.internal", &at, &at
	node := &corev1.Node{}
	node.Name = initialized.NodeName

	assert.Empty(t, mirrorMismatch(initialized, node, served(t, initialized, node)), "the mirror of the claim as it is")
	assert.Empty(t, mirrorMismatch(launched, nil, served(t, launched, nil)))
	assert.Equal(t, "no mirror", mirrorMismatch(initialized, node, nil))
	assert.Equal(t, `node "", claim "ip-10-0-3-17.ec2.internal"; phase Launched, claim Initialized; `+
		"Initialized Unknown/NotInitialized, claim True/Initialized; Ready False/NodeNotFound, claim True/Ready; "+
		"Registered Unknown/NodeNotFound, claim True/Registered",
		mirrorMismatch(initialized, node, served(t, launched, nil)), "a mirror still showing the launch")
}

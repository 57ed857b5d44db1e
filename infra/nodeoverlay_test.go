package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// overlayManifests copies the sample manifests into a folder with a NodeOverlay beside them.
func overlayManifests(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir("manifests")
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("manifests", e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "overlay.yaml"), []byte(`apiVersion: karpenter.sh/v1alpha1
kind: NodeOverlay
metadata: {name: savings-plan}
spec:
  requirements: [{key: karpenter.k8s.aws/instance-family, operator: In, values: [m5]}]
  priceAdjustment: "-30%"
`), 0o644))
	return dir
}

// A NodeOverlay fails the synth while the NodeOverlay gate is off, naming the object and the gate; with
// featureGates NodeOverlay=true it is deployed as a configuration item beside the NodePools.
func TestSynthTakesNodeOverlaysOnlyWithTheGate(t *testing.T) {
	dir := overlayManifests(t)
	propsOrError(t, map[string]interface{}{"clusterName": "unit", "manifests": dir},
		"NodeOverlay/savings-plan: kind: Forbidden: NodeOverlay is alpha in Karpenter and its feature gate NodeOverlay is off")

	props, ok := propsOrError(t, map[string]interface{}{"clusterName": "unit", "manifests": dir, "featureGates": "NodeOverlay=true"}, "")
	require.True(t, ok)
	var found bool
	for _, it := range props.Config {
		if it.Kind == state.KindNodeOverlay && it.Name == "savings-plan" {
			found = true
			assert.Contains(t, it.Spec, `"priceAdjustment":"-30%"`)
		}
	}
	assert.True(t, found, "the overlay is a configuration item")
}

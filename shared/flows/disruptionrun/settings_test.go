package disruptionrun

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// The engine decides with the stored settings the read found with the NodePools: the
// SpotToSpotConsolidation gate, the minValues policy and the preference policy, as the provisioner
// solves with them.
func TestTheEngineDecidesWithTheStoredSettings(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("a", "medium", "1")
	ctx := context.Background()
	w := f.runner.read(ctx, nil, nil)
	require.Empty(t, w.input.Incomplete)
	assert.False(t, w.input.Options.SpotToSpotConsolidation, "Karpenter's default")
	assert.Equal(t, scheduling.MinValuesStrict, w.input.MinValuesPolicy)
	assert.False(t, w.input.IgnorePreferences)

	f.launch.settings = settings.Default()
	f.launch.settings.FeatureGates.SpotToSpotConsolidation = true
	f.launch.settings.MinValuesPolicy = settings.MinValuesBestEffort
	f.launch.settings.PreferencePolicy = settings.PreferencesIgnore
	w = f.runner.read(ctx, nil, nil)
	require.Empty(t, w.input.Incomplete)
	assert.True(t, w.input.Options.SpotToSpotConsolidation)
	assert.Equal(t, scheduling.MinValuesBestEffort, w.input.MinValuesPolicy)
	assert.True(t, w.input.IgnorePreferences)
}

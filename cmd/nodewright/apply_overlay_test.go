package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// nodewright apply stores a NodeOverlay only when the deployment's stored settings turn the NodeOverlay
// gate on: the functions would not apply it otherwise. Nothing is applied when it is refused.
func TestApplyStoresNodeOverlaysOnlyWithTheDeploymentsGate(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "nodewright-overlay")
	dir := t.TempDir()
	with := writeOverlayFile(t, dir, "with.yaml", overlayPools+savingsPlan)
	run := func() (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch([]string{"apply", "-f", with, "--table", "nodewright-overlay"}, strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, _, stderr := run()
	assert.Equal(t, 1, code, "no stored settings: Karpenter's defaults, gate off")
	assert.Contains(t, stderr, "NodeOverlay/savings-plan: kind: Forbidden: NodeOverlay is alpha in Karpenter and its feature gate NodeOverlay is off")
	assert.Contains(t, stderr, "nothing applied")
	items, err := store.ListConfig(ctx, "")
	require.NoError(t, err)
	assert.Empty(t, items)

	s := settings.Default()
	s.FeatureGates.NodeOverlay = true
	it, err := state.SettingsItem(s)
	require.NoError(t, err)
	_, err = store.PutConfig(ctx, it)
	require.NoError(t, err)
	code, out, stderr := run()
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "nodeoverlay/savings-plan created")
	stored, err := store.GetConfig(ctx, state.KindNodeOverlay, "savings-plan")
	require.NoError(t, err)
	assert.Contains(t, stored.Spec, `"priceAdjustment":"-30%"`)
}

package state

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/settings"
)

func TestSettingsItemHoldsTheSettings(t *testing.T) {
	s := settings.Default()
	s.MinValuesPolicy = settings.MinValuesBestEffort
	it, err := SettingsItem(s)
	require.NoError(t, err)
	assert.Equal(t, KindSettings, it.Kind)
	assert.Equal(t, SettingsName, it.Name)
	assert.NotEmpty(t, it.SpecHash)
	var back settings.Settings
	require.NoError(t, json.Unmarshal([]byte(it.Spec), &back))
	assert.Equal(t, s, back)

	other, err := SettingsItem(settings.Default())
	require.NoError(t, err)
	assert.NotEqual(t, it.SpecHash, other.SpecHash, "a change of settings is a change of the item")
}

// `nodewright apply --prune` makes the NodePools and EC2NodeClasses match the manifests; the settings the
// CDK app stored are not in any manifest, and stay.
func TestApplyWithPruneKeepsTheSettings(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	it, err := SettingsItem(settings.Default())
	require.NoError(t, err)
	_, err = s.PutConfig(ctx, it)
	require.NoError(t, err)
	items, err := ConfigItemsFrom(decodeValid(t, applyManifests))
	require.NoError(t, err)
	res, err := s.ApplyConfig(ctx, items, true)
	require.NoError(t, err)
	assert.Empty(t, res.Deleted)
	stored, err := s.GetConfig(ctx, KindSettings, SettingsName)
	require.NoError(t, err)
	assert.Equal(t, it.Spec, stored.Spec)
}

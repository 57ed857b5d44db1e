package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// status shows the settings the functions work with: those the CDK app stored, or Karpenter's defaults,
// said to be defaults, when none are stored.
func TestStatusShowsTheSettings(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "status-settings")
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"status", "--table", "status-settings"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, stderr := run()
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "SETTINGS (none stored: the defaults)")
	assert.Regexp(t, `minValuesPolicy\s+Strict`, out)
	assert.Regexp(t, `featureGates\s+CapacityBuffer=false,NodeOverlay=false,NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,StaticCapacity=false`, out)

	s := settings.Default()
	s.MinValuesPolicy, s.PreferencePolicy, s.VMMemoryOverheadPercent, s.ReservedENIs = "BestEffort", "Ignore", 0.05, 1
	s.BatchIdleDuration, s.BatchMaxDuration, s.FeatureGates.SpotToSpotConsolidation = time.Second, 20*time.Second, true
	it, err := state.SettingsItem(s)
	require.NoError(t, err)
	_, err = store.PutConfig(ctx, it)
	require.NoError(t, err)

	code, out, stderr = run()
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "SETTINGS (stored by the deployment)")
	for _, re := range []string{`minValuesPolicy\s+BestEffort`, `preferencePolicy\s+Ignore`, `vmMemoryOverheadPercent\s+0\.05`,
		`reservedENIs\s+1`, `batchIdleDuration\s+1s`, `batchMaxDuration\s+20s`,
		`featureGates\s+CapacityBuffer=false,NodeOverlay=false,NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=true,StaticCapacity=false`} {
		assert.Regexp(t, re, out)
	}

	code, out, stderr = run("-o", "json")
	require.Equal(t, 0, code, stderr)
	var rep statusReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.True(t, rep.Settings.Stored)
	assert.Equal(t, s, rep.Settings.Settings)
}

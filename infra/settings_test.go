package main

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/settings"
)

// TestSettingsContext: Karpenter's settings are context values, validated at synth; unset ones keep
// Karpenter's defaults, and a bad one fails the synth naming the value and why.
func TestSettingsContext(t *testing.T) {
	base := func(extra map[string]interface{}) map[string]interface{} {
		ctx := map[string]interface{}{"clusterName": "unit", "manifests": "manifests"}
		for k, v := range extra {
			ctx[k] = v
		}
		return ctx
	}
	t.Run("defaults when none is set", func(t *testing.T) {
		props, ok := propsOrError(t, base(nil), "")
		require.True(t, ok)
		assert.Equal(t, settings.Default(), props.Settings)
	})
	want := settings.Settings{MinValuesPolicy: "BestEffort", PreferencePolicy: "Ignore", VMMemoryOverheadPercent: 0.05,
		ReservedENIs: 1, BatchIdleDuration: 2 * time.Second, BatchMaxDuration: 15 * time.Second,
		FeatureGates: settings.FeatureGates{SpotToSpotConsolidation: true, ReservedCapacity: false}}
	t.Run("as text from -c", func(t *testing.T) {
		props, ok := propsOrError(t, base(map[string]interface{}{"minValuesPolicy": "BestEffort", "preferencePolicy": "Ignore",
			"vmMemoryOverheadPercent": "0.05", "reservedENIs": "1", "batchIdleDuration": "2s", "batchMaxDuration": "15s",
			"featureGates": "SpotToSpotConsolidation=true,ReservedCapacity=false"}), "")
		require.True(t, ok)
		assert.Equal(t, want, props.Settings)
	})
	t.Run("as JSON in cdk.json", func(t *testing.T) {
		props, ok := propsOrError(t, base(map[string]interface{}{"minValuesPolicy": "BestEffort", "preferencePolicy": "Ignore",
			"vmMemoryOverheadPercent": 0.05, "reservedENIs": 1.0, "batchIdleDuration": "2s", "batchMaxDuration": "15s",
			"featureGates": "SpotToSpotConsolidation=true,ReservedCapacity=false"}), "")
		require.True(t, ok)
		assert.Equal(t, want, props.Settings)
	})
	for name, tc := range map[string]struct {
		ctx     map[string]interface{}
		wantErr string
	}{
		"unknown min values policy": {map[string]interface{}{"minValuesPolicy": "Relaxed"},
			`context value minValuesPolicy "Relaxed": use Strict`},
		"unknown preference policy": {map[string]interface{}{"preferencePolicy": "Prefer"},
			`context value preferencePolicy "Prefer": use Respect`},
		"overhead out of range": {map[string]interface{}{"vmMemoryOverheadPercent": 7.5},
			`context value vmMemoryOverheadPercent "7.5": a fraction of the memory`},
		"overhead not a number": {map[string]interface{}{"vmMemoryOverheadPercent": "7.5%"},
			`context value vmMemoryOverheadPercent "7.5%": not a number`},
		"reserved ENIs negative": {map[string]interface{}{"reservedENIs": "-1"},
			`context value reservedENIs "-1": a number of network interfaces cannot be negative`},
		"reserved ENIs not whole": {map[string]interface{}{"reservedENIs": 1.5},
			`context value reservedENIs "1.5": not a whole number`},
		"idle not a duration": {map[string]interface{}{"batchIdleDuration": "1"},
			`context value batchIdleDuration "1": not a duration such as 500ms or 2s`},
		"idle a JSON number": {map[string]interface{}{"batchIdleDuration": 1.0},
			`context value batchIdleDuration "1": not a duration such as 500ms or 2s`},
		"max below idle": {map[string]interface{}{"batchIdleDuration": "5s", "batchMaxDuration": "2s"},
			`context value batchMaxDuration "2s": a positive duration no shorter than batchIdleDuration (5s)`},
		"unknown gate": {map[string]interface{}{"featureGates": "Drift=true"},
			`context value featureGates "Drift=true": unknown feature gate "Drift"`},
		"gates as an object": {map[string]interface{}{"featureGates": map[string]interface{}{"SpotToSpotConsolidation": true}},
			`context value featureGates: Karpenter's form as text, such as "SpotToSpotConsolidation=true,ReservedCapacity=false"`},
		"the old spot-to-spot switch": {map[string]interface{}{"spotToSpotConsolidation": "true"},
			"context value spotToSpotConsolidation is replaced by featureGates: use -c featureGates=SpotToSpotConsolidation=true"},
	} {
		t.Run(name, func(t *testing.T) { propsOrError(t, base(tc.ctx), tc.wantErr) })
	}
	t.Run("every bad value is named at once", func(t *testing.T) {
		ctx := base(map[string]interface{}{"minValuesPolicy": "x", "reservedENIs": "-3"})
		_, err := stackPropsFromContext(awscdk.NewApp(&awscdk.AppProps{Context: &ctx}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "minValuesPolicy")
		assert.Contains(t, err.Error(), "reservedENIs")
	})
}

// The settings are stored with the configuration, as one more item the functions read with the
// NodePools; the disruption function no longer takes spot-to-spot from its environment.
func TestSettingsAreWrittenWithTheConfiguration(t *testing.T) {
	template, _ := synthWith(t, map[string]interface{}{"minValuesPolicy": "BestEffort", "featureGates": "SpotToSpotConsolidation=true"})
	var found []string
	for _, r := range *template.FindResources(jsii.String("Custom::AWS"), nil) {
		body := jsonString(t, (*r)["Properties"].(map[string]interface{})["Create"])
		if strings.Contains(body, "Settings#cluster") {
			found = append(found, body)
		}
	}
	require.Len(t, found, 1, "one settings item")
	assert.Regexp(t, `minValuesPolicy[\\"]*:[\\"]*BestEffort`, found[0])
	assert.Regexp(t, `SpotToSpotConsolidation[\\"]*:true`, found[0])
	for _, r := range *template.FindResources(jsii.String("AWS::Lambda::Function"), nil) {
		assert.NotContains(t, jsonString(t, (*r)["Properties"]), "SPOT_TO_SPOT")
	}
}

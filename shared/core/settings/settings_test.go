package settings

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultsAreKarpentersAndValid(t *testing.T) {
	d := Default()
	require.NoError(t, d.Validate())
	assert.Equal(t, "Strict", d.MinValuesPolicy)
	assert.Equal(t, "Respect", d.PreferencePolicy)
	assert.False(t, d.IgnorePreferences())
	assert.Equal(t, 0.075, d.VMMemoryOverheadPercent)
	assert.Zero(t, d.ReservedENIs)
	assert.Equal(t, 500*time.Millisecond, d.BatchIdleDuration, "half Karpenter's second: the webhook reports each pod as it is marked")
	assert.Equal(t, 10*time.Second, d.BatchMaxDuration)
	assert.Equal(t, FeatureGates{ReservedCapacity: true}, d.FeatureGates)
}

func TestValidateNamesTheFieldAndTheReason(t *testing.T) {
	for name, tc := range map[string]struct {
		mutate func(*Settings)
		field  string
		reason string
	}{
		"min values policy":        {func(s *Settings) { s.MinValuesPolicy = "Loose" }, "minValuesPolicy", "use Strict"},
		"preference policy":        {func(s *Settings) { s.PreferencePolicy = "respect" }, "preferencePolicy", "use Respect"},
		"negative overhead":        {func(s *Settings) { s.VMMemoryOverheadPercent = -0.1 }, "vmMemoryOverheadPercent", "fraction"},
		"overhead as a percent":    {func(s *Settings) { s.VMMemoryOverheadPercent = 7.5 }, "vmMemoryOverheadPercent", "0.075 is 7.5 %"},
		"negative reserved ENIs":   {func(s *Settings) { s.ReservedENIs = -1 }, "reservedENIs", "cannot be negative"},
		"negative idle":            {func(s *Settings) { s.BatchIdleDuration = -time.Second }, "batchIdleDuration", "from 0s"},
		"idle past the invocation": {func(s *Settings) { s.BatchIdleDuration = 30 * time.Second; s.BatchMaxDuration = time.Minute }, "batchIdleDuration", "60 s invocation"},
		"max below idle":           {func(s *Settings) { s.BatchIdleDuration = 2 * time.Second; s.BatchMaxDuration = time.Second }, "batchMaxDuration", "no shorter than batchIdleDuration"},
		"zero max":                 {func(s *Settings) { s.BatchIdleDuration = 0; s.BatchMaxDuration = 0 }, "batchMaxDuration", "positive"},
	} {
		t.Run(name, func(t *testing.T) {
			s := Default()
			tc.mutate(&s)
			err := s.Validate()
			require.Error(t, err)
			var fe *FieldError
			require.True(t, errors.As(err, &fe), err.Error())
			assert.Equal(t, tc.field, fe.Field)
			assert.Contains(t, err.Error(), "context value "+tc.field)
			assert.Contains(t, err.Error(), tc.reason)
		})
	}
	s := Default()
	s.MinValuesPolicy, s.ReservedENIs = "x", -2
	assert.ErrorContains(t, s.Validate(), "minValuesPolicy")
	assert.ErrorContains(t, s.Validate(), "reservedENIs", "every invalid value is named")
	s = Default()
	s.BatchIdleDuration = 0
	assert.NoError(t, s.Validate(), "0s idle: no wait")
}

func TestParseFeatureGates(t *testing.T) {
	for in, want := range map[string]FeatureGates{
		"":                             {ReservedCapacity: true},
		"SpotToSpotConsolidation=true": {SpotToSpotConsolidation: true, ReservedCapacity: true},
		"NodeRepair=true":              {NodeRepair: true, ReservedCapacity: true},
		"StaticCapacity=true":          {StaticCapacity: true, ReservedCapacity: true},
		"NodeOverlay=true":             {NodeOverlay: true, ReservedCapacity: true},
		"CapacityBuffer=true":          {CapacityBuffer: true, ReservedCapacity: true},
		" ReservedCapacity = false , SpotToSpotConsolidation=1": {SpotToSpotConsolidation: true},
		// Karpenter's default FEATURE_GATES, copied as is: the gates Nodewright lacks are off there too.
		"NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,NodeOverlay=false,StaticCapacity=false,CapacityBuffer=false": {ReservedCapacity: true},
	} {
		got, err := ParseFeatureGates(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for in, reason := range map[string]string{
		"SpotToSpot=true":             `unknown feature gate "SpotToSpot": Karpenter's gates are NodeRepair, ReservedCapacity, SpotToSpotConsolidation, NodeOverlay, StaticCapacity, CapacityBuffer`,
		"NodeClassCEL=true":           `unknown feature gate "NodeClassCEL"`,
		"NodeRepair=maybe":            `feature gate NodeRepair: "maybe" is not true or false`,
		"SpotToSpotConsolidation":     `"SpotToSpotConsolidation" is not Name=true or Name=false`,
		"SpotToSpotConsolidation=yes": `feature gate SpotToSpotConsolidation: "yes" is not true or false`,
		"ReservedCapacity=true,":      `"" is not Name=true or Name=false`,
		"=true":                       "is not Name=true",
		"ReservedCapacity=true,ReservedCapacity=false": "feature gate ReservedCapacity is set twice",
	} {
		_, err := ParseFeatureGates(in)
		require.Error(t, err, in)
		var fe *FieldError
		require.True(t, errors.As(err, &fe), in)
		assert.Equal(t, "featureGates", fe.Field)
		assert.Equal(t, in, fe.Value)
		assert.Contains(t, err.Error(), reason, in)
	}
}

func TestFeatureGatesPrintInKarpentersForm(t *testing.T) {
	assert.Equal(t, "CapacityBuffer=false,NodeOverlay=false,NodeRepair=false,ReservedCapacity=true,SpotToSpotConsolidation=false,StaticCapacity=false", DefaultFeatureGates().String())
	fg, err := ParseFeatureGates(FeatureGates{SpotToSpotConsolidation: true, NodeRepair: true}.String())
	require.NoError(t, err)
	assert.Equal(t, FeatureGates{SpotToSpotConsolidation: true, NodeRepair: true}, fg, "String parses back")
}

func TestStoredSettingsRoundTrip(t *testing.T) {
	s := Settings{MinValuesPolicy: MinValuesBestEffort, PreferencePolicy: PreferencesIgnore, VMMemoryOverheadPercent: 0.06,
		ReservedENIs: 1, BatchIdleDuration: 2 * time.Second, BatchMaxDuration: 20 * time.Second,
		FeatureGates: FeatureGates{SpotToSpotConsolidation: true, NodeRepair: true}}
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.JSONEq(t, `{"minValuesPolicy":"BestEffort","preferencePolicy":"Ignore","vmMemoryOverheadPercent":0.06,"reservedENIs":1,
		"batchIdleDuration":"2s","batchMaxDuration":"20s","featureGates":{"CapacityBuffer":false,"NodeOverlay":false,"NodeRepair":true,"ReservedCapacity":false,"SpotToSpotConsolidation":true,"StaticCapacity":false}}`, string(b))
	var back Settings
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, s, back)

	var partial Settings
	require.NoError(t, json.Unmarshal([]byte(`{"reservedENIs":2,"featureGates":{"SpotToSpotConsolidation":true}}`), &partial))
	want := Default()
	want.ReservedENIs, want.FeatureGates.SpotToSpotConsolidation = 2, true
	assert.Equal(t, want, partial, "what a document leaves out keeps its default")

	assert.Error(t, json.Unmarshal([]byte(`{"batchIdleDuration":"soon"}`), &partial))
	assert.Error(t, json.Unmarshal([]byte(`{"featureGates":{"Teleport":true}}`), &partial))
}

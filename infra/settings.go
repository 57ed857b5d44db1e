package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nodewright/nodewright/shared/core/settings"
)

// settingsFromContext reads Karpenter's settings from their context values (get returns a value, nil
// when unset): minValuesPolicy, preferencePolicy, vmMemoryOverheadPercent, reservedENIs,
// batchIdleDuration, batchMaxDuration and featureGates (Karpenter's "Name=true,Other=false"). Unset
// ones keep settings.Default's values. Every value that is malformed or invalid is in the error, each
// naming its context value and why. The retired spotToSpotConsolidation switch is refused, pointing at
// featureGates, so there is one place to set a gate.
func settingsFromContext(get func(key string) interface{}) (settings.Settings, error) {
	s := settings.Default()
	var errs []error
	bad := func(key string, v interface{}, reason string) {
		errs = append(errs, &settings.FieldError{Field: key, Value: fmt.Sprint(v), Reason: reason})
	}
	if get("spotToSpotConsolidation") != nil {
		errs = append(errs, errors.New("context value spotToSpotConsolidation is replaced by featureGates: use -c featureGates=SpotToSpotConsolidation=true "+
			"(or \"featureGates\": \"SpotToSpotConsolidation=true\" in cdk.json)"))
	}
	text := func(key string, into *string) {
		switch v := get(key).(type) {
		case nil:
		case string:
			if v != "" {
				*into = v
			}
		default:
			bad(key, v, "not text")
		}
	}
	text("minValuesPolicy", &s.MinValuesPolicy)
	text("preferencePolicy", &s.PreferencePolicy)
	switch v := get("vmMemoryOverheadPercent").(type) {
	case nil:
	case float64:
		s.VMMemoryOverheadPercent = v
	case string:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			bad("vmMemoryOverheadPercent", v, "not a number (a fraction: 0.075 is 7.5 %)")
		} else {
			s.VMMemoryOverheadPercent = f
		}
	default:
		bad("vmMemoryOverheadPercent", v, "not a number (a fraction: 0.075 is 7.5 %)")
	}
	switch v := get("reservedENIs").(type) {
	case nil:
	case float64:
		if v != float64(int64(v)) {
			bad("reservedENIs", v, "not a whole number")
		} else {
			s.ReservedENIs = int64(v)
		}
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			bad("reservedENIs", v, "not a whole number")
		} else {
			s.ReservedENIs = n
		}
	default:
		bad("reservedENIs", v, "not a whole number")
	}
	duration := func(key string, into *time.Duration) {
		switch v := get(key).(type) {
		case nil:
		case string:
			d, err := time.ParseDuration(v)
			if err != nil {
				bad(key, v, "not a duration such as 500ms or 2s")
			} else {
				*into = d
			}
		default:
			bad(key, v, "not a duration such as 500ms or 2s")
		}
	}
	duration("batchIdleDuration", &s.BatchIdleDuration)
	duration("batchMaxDuration", &s.BatchMaxDuration)
	switch v := get("featureGates").(type) {
	case nil:
	case string:
		gates, err := settings.ParseFeatureGates(v)
		if err != nil {
			errs = append(errs, err)
		} else {
			s.FeatureGates = gates
		}
	default:
		errs = append(errs, fmt.Errorf("context value featureGates: Karpenter's form as text, such as %q", "SpotToSpotConsolidation=true,ReservedCapacity=false"))
	}
	if len(errs) == 0 {
		errs = append(errs, s.Validate())
	}
	return s, errors.Join(errs...)
}

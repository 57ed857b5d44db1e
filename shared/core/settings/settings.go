package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Policies.
const (
	// MinValuesStrict leaves pods unscheduled when no launch can keep a requirement's minValues; with
	// MinValuesBestEffort the minValues are lowered to what the instance types allow, and the claim is
	// marked relaxed (Karpenter's MIN_VALUES_POLICY).
	MinValuesStrict     = "Strict"
	MinValuesBestEffort = "BestEffort"
	// PreferencesRespect relaxes preferred affinities and ScheduleAnyway spreads only when a pod cannot be
	// placed with them; PreferencesIgnore drops them up front (Karpenter's PREFERENCE_POLICY).
	PreferencesRespect = "Respect"
	PreferencesIgnore  = "Ignore"
)

// Defaults: Karpenter's, except the batch idle duration.
const (
	DefaultVMMemoryOverheadPercent = 0.075
	// DefaultBatchIdleDuration is half Karpenter's 1 s: the pending-pod webhook tells Nodewright about each
	// pod as kube-scheduler marks it, so a burst is caught in less.
	DefaultBatchIdleDuration = 500 * time.Millisecond
	DefaultBatchMaxDuration  = 10 * time.Second
	// MaxBatchIdleDuration bounds the wait: the provisioner's 60 s invocation must still read the cluster,
	// solve and launch after it.
	MaxBatchIdleDuration = 10 * time.Second
)

// Settings are the values every function works with.
type Settings struct {
	// MinValuesPolicy is MinValuesStrict or MinValuesBestEffort.
	MinValuesPolicy string
	// PreferencePolicy is PreferencesRespect or PreferencesIgnore.
	PreferencePolicy string
	// VMMemoryOverheadPercent is the share of an instance type's memory the hypervisor keeps (a fraction:
	// 0.075 is 7.5 %), taken off before kube-reserved and eviction thresholds.
	VMMemoryOverheadPercent float64
	// ReservedENIs are network interfaces kept out of the ENI-limited pod density (VPC CNI custom
	// networking).
	ReservedENIs int64
	// BatchIdleDuration is how long the provisioner waits after the newest pending-pod message before it
	// reads the cluster; BatchMaxDuration bounds the wait from the oldest message of the batch.
	BatchIdleDuration, BatchMaxDuration time.Duration
	FeatureGates                        FeatureGates
}

// Default returns the settings of a deployment that sets none.
func Default() Settings {
	return Settings{MinValuesPolicy: MinValuesStrict, PreferencePolicy: PreferencesRespect,
		VMMemoryOverheadPercent: DefaultVMMemoryOverheadPercent, BatchIdleDuration: DefaultBatchIdleDuration,
		BatchMaxDuration: DefaultBatchMaxDuration, FeatureGates: DefaultFeatureGates()}
}

// IgnorePreferences reports whether preferences are dropped up front.
func (s Settings) IgnorePreferences() bool { return s.PreferencePolicy == PreferencesIgnore }

// FieldError is one invalid setting: Field is the CDK context value's name.
type FieldError struct {
	Field, Value, Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("context value %s %q: %s", e.Field, e.Value, e.Reason)
}

// Validate returns every invalid value, as *FieldError's joined (nil when all are valid).
func (s Settings) Validate() error {
	var errs []error
	bad := func(field string, value any, reason string) {
		errs = append(errs, &FieldError{Field: field, Value: fmt.Sprint(value), Reason: reason})
	}
	switch s.MinValuesPolicy {
	case MinValuesStrict, MinValuesBestEffort:
	default:
		bad("minValuesPolicy", s.MinValuesPolicy, "use Strict (pods wait when minValues cannot be met) or BestEffort (minValues are lowered to what the instance types allow)")
	}
	switch s.PreferencePolicy {
	case PreferencesRespect, PreferencesIgnore:
	default:
		bad("preferencePolicy", s.PreferencePolicy, "use Respect (preferences are relaxed only when a pod cannot be placed with them) or Ignore (preferences are dropped)")
	}
	if s.VMMemoryOverheadPercent < 0 || s.VMMemoryOverheadPercent >= 1 {
		bad("vmMemoryOverheadPercent", s.VMMemoryOverheadPercent, "a fraction of the memory from 0 up to, not including, 1 (0.075 is 7.5 %)")
	}
	if s.ReservedENIs < 0 {
		bad("reservedENIs", s.ReservedENIs, "a number of network interfaces cannot be negative")
	}
	if s.BatchIdleDuration < 0 || s.BatchIdleDuration > MaxBatchIdleDuration {
		bad("batchIdleDuration", s.BatchIdleDuration, fmt.Sprintf("from 0s (no wait) to %s: the provisioner's 60 s invocation must still solve and launch after the wait", MaxBatchIdleDuration))
	}
	if s.BatchMaxDuration <= 0 || s.BatchMaxDuration < s.BatchIdleDuration {
		bad("batchMaxDuration", s.BatchMaxDuration, fmt.Sprintf("a positive duration no shorter than batchIdleDuration (%s)", s.BatchIdleDuration))
	}
	return errors.Join(errs...)
}

// stored is how Settings are written: durations as Go duration text, gates by Karpenter's names.
type stored struct {
	MinValuesPolicy         string          `json:"minValuesPolicy"`
	PreferencePolicy        string          `json:"preferencePolicy"`
	VMMemoryOverheadPercent float64         `json:"vmMemoryOverheadPercent"`
	ReservedENIs            int64           `json:"reservedENIs"`
	BatchIdleDuration       string          `json:"batchIdleDuration"`
	BatchMaxDuration        string          `json:"batchMaxDuration"`
	FeatureGates            map[string]bool `json:"featureGates"`
}

// MarshalJSON writes the settings as they are stored.
func (s Settings) MarshalJSON() ([]byte, error) {
	return json.Marshal(stored{MinValuesPolicy: s.MinValuesPolicy, PreferencePolicy: s.PreferencePolicy,
		VMMemoryOverheadPercent: s.VMMemoryOverheadPercent, ReservedENIs: s.ReservedENIs,
		BatchIdleDuration: s.BatchIdleDuration.String(), BatchMaxDuration: s.BatchMaxDuration.String(),
		FeatureGates: s.FeatureGates.Map()})
}

// UnmarshalJSON reads stored settings; what the document leaves out keeps its default, and a gate the
// document names that this build does not know is an error.
func (s *Settings) UnmarshalJSON(b []byte) error {
	d := Default()
	in := stored{MinValuesPolicy: d.MinValuesPolicy, PreferencePolicy: d.PreferencePolicy,
		VMMemoryOverheadPercent: d.VMMemoryOverheadPercent, BatchIdleDuration: d.BatchIdleDuration.String(),
		BatchMaxDuration: d.BatchMaxDuration.String()}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	var err error
	if d.BatchIdleDuration, err = time.ParseDuration(in.BatchIdleDuration); err != nil {
		return fmt.Errorf("batchIdleDuration: %w", err)
	}
	if d.BatchMaxDuration, err = time.ParseDuration(in.BatchMaxDuration); err != nil {
		return fmt.Errorf("batchMaxDuration: %w", err)
	}
	for name, on := range in.FeatureGates {
		if err := d.FeatureGates.set(name, on); err != nil {
			return fmt.Errorf("featureGates: %w", err)
		}
	}
	d.MinValuesPolicy, d.PreferencePolicy = in.MinValuesPolicy, in.PreferencePolicy
	d.VMMemoryOverheadPercent, d.ReservedENIs = in.VMMemoryOverheadPercent, in.ReservedENIs
	*s = d
	return nil
}

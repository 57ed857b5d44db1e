package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// statusSettings are the settings the functions work with: Stored says the deployment stored them
// (otherwise they are settings.Default, as the functions then use).
type statusSettings struct {
	Stored   bool              `json:"stored"`
	Settings settings.Settings `json:"values"`
}

// readSettings reads the stored settings; an item that does not decode is an error (the functions
// would fall back to the defaults and report it).
func readSettings(ctx context.Context, store *state.Store) (statusSettings, error) {
	it, err := store.GetConfig(ctx, state.KindSettings, state.SettingsName)
	if errors.Is(err, state.ErrNotFound) {
		return statusSettings{Settings: settings.Default()}, nil
	}
	if err != nil {
		return statusSettings{}, err
	}
	var s settings.Settings
	if err := json.Unmarshal([]byte(it.Spec), &s); err != nil {
		return statusSettings{}, fmt.Errorf("decoding the stored settings (the functions use the defaults): %w", err)
	}
	return statusSettings{Stored: true, Settings: s}, nil
}

// writeSettings prints the settings by their CDK context names.
func writeSettings(w io.Writer, s statusSettings) {
	if s.Stored {
		fmt.Fprintln(w, "SETTINGS (stored by the deployment)")
	} else {
		fmt.Fprintln(w, "SETTINGS (none stored: the defaults)")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	v := s.Settings
	for _, kv := range [][2]string{
		{"minValuesPolicy", v.MinValuesPolicy},
		{"preferencePolicy", v.PreferencePolicy},
		{"vmMemoryOverheadPercent", strconv.FormatFloat(v.VMMemoryOverheadPercent, 'g', -1, 64)},
		{"reservedENIs", strconv.FormatInt(v.ReservedENIs, 10)},
		{"batchIdleDuration", v.BatchIdleDuration.String()},
		{"batchMaxDuration", v.BatchMaxDuration.String()},
		{"featureGates", v.FeatureGates.String()},
	} {
		fmt.Fprintf(tw, "  %s\t%s\n", kv[0], kv[1])
	}
	tw.Flush()
}

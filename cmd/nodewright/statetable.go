package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// tableFlags are the flags of the commands that read or write a deployed stack's state table.
type tableFlags struct {
	table, region *string
	// opened is the region open connected in (the flag's, or the AWS configuration's).
	opened *string
}

func addTableFlags(fset *flag.FlagSet) tableFlags {
	return tableFlags{
		table:  fset.String("table", os.Getenv("NODEWRIGHT_STATE_TABLE"), "state table `NAME` (the stack output StateTableName; env NODEWRIGHT_STATE_TABLE)"),
		region: fset.String("region", "", "AWS `REGION` (default: from the AWS configuration)"),
		opened: new(string),
	}
}

// open connects to the state table with the AWS configuration of the environment.
func (f tableFlags) open(ctx context.Context) (*state.Store, error) {
	cfg, err := loadAWSConfig(ctx, *f.region)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration: %w", err)
	}
	*f.opened = cfg.Region
	return state.New(state.NewClient(cfg), *f.table), nil
}

// currency is the currency the stack's prices are in: its region's (pricing.Currency), CNY in China.
func (f tableFlags) currency() string { return pricing.Currency(*f.opened) }

// perHour writes an hourly price in its currency: "$0.1920/h" in USD, "1.0130 CNY/h" otherwise.
func perHour(currency string, v float64) string {
	if currency == "" || currency == "USD" {
		return fmt.Sprintf("$%.4f/h", v)
	}
	return fmt.Sprintf("%.4f %s/h", v, currency)
}

// perHourHeader is the heading of a column of hourly prices: "$/H" in USD, "CNY/H" otherwise.
func perHourHeader(currency string) string {
	if currency == "" || currency == "USD" {
		return "$/H"
	}
	return currency + "/H"
}

// writeJSON prints v indented, as the -o json of every command does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

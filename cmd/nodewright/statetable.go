package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nodewright/nodewright/shared/state"
)

// tableFlags are the flags of the commands that read or write a deployed stack's state table.
type tableFlags struct {
	table, region *string
}

func addTableFlags(fset *flag.FlagSet) tableFlags {
	return tableFlags{
		table:  fset.String("table", os.Getenv("NODEWRIGHT_STATE_TABLE"), "state table `NAME` (the stack output StateTableName; env NODEWRIGHT_STATE_TABLE)"),
		region: fset.String("region", "", "AWS `REGION` (default: from the AWS configuration)"),
	}
}

// open connects to the state table with the AWS configuration of the environment.
func (f tableFlags) open(ctx context.Context) (*state.Store, error) {
	cfg, err := loadAWSConfig(ctx, *f.region)
	if err != nil {
		return nil, fmt.Errorf("loading AWS configuration: %w", err)
	}
	return state.New(state.NewClient(cfg), *f.table), nil
}

// writeJSON prints v indented, as the -o json of every command does.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

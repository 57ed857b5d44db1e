// Command gentable rewrites regions of the shipped on-demand price table (shared/adapters/pricing/data/on-demand.json)
// from an ec2instances.info instances.json, or from a price table generated into
// aws/karpenter-provider-aws, that is already on disk; it makes no network calls. Regions not
// named with -regions are kept exactly as they are. See shared/adapters/pricing/data/README.md for the sources and
// the command that produced the shipped table.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
)

func main() {
	if err := run(os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "gentable:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	instances   string
	karpenter   string // a Karpenter generated price table, instead of instances
	currency    string // of the prices read, when not the table's
	table       string
	regions     []string // nil: every commercial region in -instances
	keep        map[string]bool
	source      string
	generatedAt string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("gentable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var regions, keep string
	fs.StringVar(&o.instances, "instances", "", "path of an ec2instances.info instances.json (for example data/instances.json of the github.com/cristim/ec2-instances-info module)")
	fs.StringVar(&o.karpenter, "karpenter-table", "", "path of a price table generated into aws/karpenter-provider-aws (pkg/providers/pricing/zz_generated.pricing_*.go), instead of -instances")
	fs.StringVar(&o.currency, "currency", "", `currency of the prices read when not the table's, for example "CNY per hour" for China`)
	fs.StringVar(&o.table, "table", "data/on-demand.json", "path of the price table to update in place")
	fs.StringVar(&regions, "regions", "commercial", `comma-separated regions to take from -instances, or "commercial" for every commercial region it has (GovCloud, China, Local Zones and Wavelength Zones excluded)`)
	fs.StringVar(&keep, "keep", FallbackKeep, "comma-separated regions never replaced (us-east-1 comes from Karpenter's newer table)")
	fs.StringVar(&o.source, "source", "", "where -instances comes from (module@version or repository@commit), stored with each region")
	fs.StringVar(&o.generatedAt, "generated-at", "", "RFC 3339 time the source's prices were taken, stored with each region")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.keep = map[string]bool{}
	for _, r := range splitList(keep) {
		o.keep[r] = true
	}
	if strings.TrimSpace(regions) != "commercial" {
		o.regions = splitList(regions)
		if len(o.regions) == 0 {
			return o, errors.New("-regions: names no region")
		}
	}
	switch {
	case o.instances == "" && o.karpenter == "":
		return o, errors.New("-instances: required (or -karpenter-table), the path of the downloaded instances.json")
	case o.instances != "" && o.karpenter != "":
		return o, errors.New("-karpenter-table: give it or -instances, not both")
	case o.table == "":
		return o, errors.New("-table: required")
	case o.source == "":
		return o, errors.New("-source: required, the table must say where each region's prices come from")
	}
	if _, err := time.Parse(time.RFC3339, o.generatedAt); err != nil {
		return o, fmt.Errorf("-generated-at: %q is not an RFC 3339 time: %w", o.generatedAt, err)
	}
	return o, nil
}

func run(args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(o.table)
	if err != nil {
		return fmt.Errorf("reading -table: %w", err)
	}
	table, err := pricing.ParseStatic(raw)
	if err != nil {
		return fmt.Errorf("-table %s: %w", o.table, err)
	}
	prices, skipped, err := readPrices(o)
	if err != nil {
		return err
	}
	for _, region := range sortedRegions(prices) {
		if o.keep[region] {
			fmt.Fprintf(stderr, "%s: kept as it is (-keep)\n", region)
			continue
		}
		table.Regions[region] = prices[region]
		table.Sources[region] = pricing.RegionSource{Source: o.source, GeneratedAt: o.generatedAt, Currency: o.currency}
		if o.karpenter != "" {
			fmt.Fprintf(stderr, "%s: %d types\n", region, len(prices[region]))
			continue
		}
		s := skipped[region]
		fmt.Fprintf(stderr, "%s: %d types (skipped: %d not offered, %d previous generation, %d Mac, %d without a price)\n",
			region, len(prices[region]), s.NotOffered, s.PreviousGeneration, s.Mac, s.Unpriced)
	}
	out, err := pricing.EncodeStatic(table)
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.table, out, 0o644); err != nil {
		return fmt.Errorf("writing -table: %w", err)
	}
	return nil
}

// readPrices reads the prices of -instances or -karpenter-table, for -regions.
func readPrices(o options) (map[string]map[string]float64, map[string]skipCounts, error) {
	if o.karpenter != "" {
		f, err := os.Open(o.karpenter)
		if err != nil {
			return nil, nil, fmt.Errorf("reading -karpenter-table: %w", err)
		}
		defer f.Close()
		prices, err := onDemandFromKarpenterTable(f, o.regions)
		if err != nil {
			return nil, nil, fmt.Errorf("-karpenter-table %s: %w", o.karpenter, err)
		}
		return prices, nil, nil
	}
	f, err := os.Open(o.instances)
	if err != nil {
		return nil, nil, fmt.Errorf("reading -instances: %w", err)
	}
	defer f.Close()
	prices, skipped, err := onDemandFromEC2Instances(f, o.regions)
	if err != nil {
		return nil, nil, fmt.Errorf("-instances %s: %w", o.instances, err)
	}
	return prices, skipped, nil
}

// FallbackKeep is the region the generator leaves alone by default: us-east-1's prices come from
// Karpenter's generated table, which is newer than the ec2instances.info snapshot.
const FallbackKeep = "us-east-1"

func splitList(s string) []string {
	var out []string
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

func sortedRegions(m map[string]map[string]float64) []string {
	out := make([]string, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

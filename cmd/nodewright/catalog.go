package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	awspricing "github.com/aws/aws-sdk-go-v2/service/pricing"

	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
)

func init() {
	register("catalog", command{summary: "export the region's instance catalog for 'nodewright plan'", run: runCatalog})
}

// tagFlag is a repeatable k=v flag.
type tagFlag map[string]string

func (t tagFlag) String() string { return fmt.Sprint(map[string]string(t)) }
func (t tagFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	t[k] = val
	return nil
}

// catalogUsage is catalog's one-line usage; --region is required.
const catalogUsage = "Usage: nodewright catalog export --region REGION [--endpoint-url URL] [--subnet-tag K=V ...] [--pricing-api] [-o json]"

// runCatalog handles `nodewright catalog export`: it reads every instance type of the region and where
// each is offered, prices them (the shipped on-demand table, spot from EC2, and with --pricing-api the
// AWS Price List API), applies the AWS allocatable model with the default AL2023 settings, and writes the
// catalog JSON that `nodewright plan --instance-types` reads. A summary goes to stderr.
func runCatalog(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, catalogUsage)
		return 2
	}
	fset := flag.NewFlagSet("nodewright catalog export", flag.ContinueOnError)
	fset.SetOutput(stderr)
	region := fset.String("region", "", "AWS `REGION` whose catalog to export (required)")
	endpoint := fset.String("endpoint-url", "", "send EC2 calls to `URL` (e.g. a local moto_server)")
	output := fset.String("o", "json", "output `FORMAT` (json)")
	usePricingAPI := fset.Bool("pricing-api", false, "refresh on-demand prices from the AWS Price List API first")
	subnetTags := tagFlag{}
	fset.Var(subnetTags, "subnet-tag", "only zones of subnets tagged `KEY=VALUE` (repeatable, ANDed)")
	if err := fset.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *output != "json" {
		fmt.Fprintf(stderr, "nodewright catalog export: -o %s: only json is supported\n", *output)
		return 2
	}
	if fset.NArg() > 0 {
		fmt.Fprintf(stderr, "nodewright catalog export: unexpected arguments %q\n", fset.Args())
		return 2
	}
	// The catalog is a region's: taking the region from the environment or, failing that, from the
	// instance metadata service would export some other region's catalog without saying so.
	if *region == "" {
		fmt.Fprintln(stderr, "nodewright catalog export: --region is required")
		fmt.Fprintln(stderr, catalogUsage)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cfg, err := loadAWSConfig(ctx, *region)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright catalog export: loading AWS configuration:", err)
		return 1
	}
	ec2Client := ec2.NewFromConfig(cfg, func(o *ec2.Options) {
		if *endpoint != "" {
			o.BaseEndpoint = aws.String(*endpoint)
		}
	})
	file, summary, err := exportCatalog(ctx, ec2Client, cfg, subnetTags, *usePricingAPI)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright catalog export:", err)
		return 1
	}
	if err := provisioning.WriteCatalog(stdout, file); err != nil {
		fmt.Fprintln(stderr, "nodewright catalog export:", err)
		return 1
	}
	fmt.Fprintln(stderr, summary)
	return 0
}

func exportCatalog(ctx context.Context, api *ec2.Client, cfg aws.Config, subnetTags map[string]string, usePricingAPI bool) (*provisioning.CatalogFile, string, error) {
	var zones []string
	if len(subnetTags) > 0 {
		var err error
		if zones, err = subnetZones(ctx, api, subnetTags); err != nil {
			return nil, "", err
		}
		if len(zones) == 0 {
			return nil, "", fmt.Errorf("no subnet is tagged %v", subnetTags)
		}
	}
	cat, err := instancetypes.Discover(ctx, api)
	if err != nil {
		return nil, "", err
	}
	prices, err := pricing.NewProvider(cfg.Region)
	if err != nil {
		return nil, "", err
	}
	var notes []string
	if usePricingAPI {
		pcfg := cfg.Copy()
		pcfg.Region = pricing.EndpointRegion(cfg.Region)
		if err := prices.RefreshOnDemand(ctx, pricing.APISource{API: awspricing.NewFromConfig(pcfg)}, time.Now()); err != nil {
			notes = append(notes, "price list API: "+err.Error())
		}
	}
	if err := prices.RefreshSpot(ctx, api, time.Now()); err != nil {
		notes = append(notes, "spot prices: "+err.Error()+" (spot priced at on-demand)")
	}
	types, unpriced, err := cat.Build(scheduling.NodeClassConfig{}, prices, zones)
	if err != nil {
		return nil, "", err
	}
	file := provisioning.CatalogFrom(types)
	archs, allZones, gpus := map[string]int{}, map[string]bool{}, 0
	for _, e := range file.InstanceTypes {
		archs[e.Arch]++
		if e.GPUs > 0 {
			gpus++
		}
		for _, o := range e.Offerings {
			allZones[o.Zone] = true
		}
	}
	zoneList := make([]string, 0, len(allZones))
	for z := range allZones {
		zoneList = append(zoneList, z)
	}
	sort.Strings(zoneList)
	summary := fmt.Sprintf("%d instance types (amd64 %d, arm64 %d, %d with GPUs) in %d zones %v; %d discovered types left out: %d cannot be EKS nodes or are offered nowhere, %d have no price; on-demand prices: %s",
		len(file.InstanceTypes), archs["amd64"], archs["arm64"], gpus, len(zoneList), zoneList,
		len(cat.Skipped)+len(unpriced), len(cat.Skipped), len(unpriced), prices.OnDemandSourceInfo())
	for _, n := range notes {
		summary += "\nwarning: " + n
	}
	return file, summary, nil
}

// subnetZones returns the zones of the subnets carrying every tag.
func subnetZones(ctx context.Context, api *ec2.Client, tags map[string]string) ([]string, error) {
	var filters []ec2types.Filter
	for k, v := range tags {
		filters = append(filters, ec2types.Filter{Name: aws.String("tag:" + k), Values: []string{v}})
	}
	seen := map[string]bool{}
	pager := ec2.NewDescribeSubnetsPaginator(api, &ec2.DescribeSubnetsInput{Filters: filters})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing subnets: %w", err)
		}
		for _, s := range page.Subnets {
			seen[aws.ToString(s.AvailabilityZone)] = true
		}
	}
	zones := make([]string, 0, len(seen))
	for z := range seen {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	return zones, nil
}

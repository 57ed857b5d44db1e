package instancetypes

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// EC2API is the part of EC2 the catalog reads; *ec2.Client satisfies it.
type EC2API interface {
	ec2.DescribeInstanceTypesAPIClient
	ec2.DescribeInstanceTypeOfferingsAPIClient
}

var _ EC2API = (*ec2.Client)(nil)

// Type is one instance type of the region with where and how it can be bought.
type Type struct {
	Info scheduling.InstanceInfo
	// Zones are the availability zones that offer the type, sorted.
	Zones []string
	// Spot and OnDemand say which usage classes the type supports.
	Spot, OnDemand bool
}

// Catalog is the region's launchable instance types.
type Catalog struct {
	Types []Type // sorted by name
	// Skipped maps a type left out to why.
	Skipped map[string]string
}

// Discover reads every instance type of the region and every zone offering it. A failed page fails the
// whole discovery: a partial catalog would make the scheduler think types do not exist.
func Discover(ctx context.Context, api EC2API) (*Catalog, error) {
	zones, err := zonesByType(ctx, api)
	if err != nil {
		return nil, err
	}
	cat := &Catalog{Skipped: map[string]string{}}
	pager := ec2.NewDescribeInstanceTypesPaginator(api, &ec2.DescribeInstanceTypesInput{MaxResults: aws.Int32(100)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instance types: %w", err)
		}
		for _, it := range page.InstanceTypes {
			info, err := Info(it)
			if err != nil {
				cat.Skipped[string(it.InstanceType)] = err.Error()
				continue
			}
			t := Type{Info: info, Zones: zones[info.Name],
				Spot:     slices.Contains(it.SupportedUsageClasses, ec2types.UsageClassTypeSpot),
				OnDemand: slices.Contains(it.SupportedUsageClasses, ec2types.UsageClassTypeOnDemand)}
			if len(t.Zones) == 0 {
				cat.Skipped[info.Name] = info.Name + ": offered in no availability zone"
				continue
			}
			cat.Types = append(cat.Types, t)
		}
	}
	sort.Slice(cat.Types, func(i, j int) bool { return cat.Types[i].Info.Name < cat.Types[j].Info.Name })
	return cat, nil
}

// zonesByType maps each instance type to the availability zones that offer it.
func zonesByType(ctx context.Context, api EC2API) (map[string][]string, error) {
	out := map[string][]string{}
	pager := ec2.NewDescribeInstanceTypeOfferingsPaginator(api, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: ec2types.LocationTypeAvailabilityZone,
		MaxResults:   aws.Int32(1000),
	})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("describing instance type offerings: %w", err)
		}
		for _, o := range page.InstanceTypeOfferings {
			t := string(o.InstanceType)
			out[t] = append(out[t], aws.ToString(o.Location))
		}
	}
	for t := range out {
		sort.Strings(out[t])
		out[t] = slices.Compact(out[t])
	}
	return out, nil
}

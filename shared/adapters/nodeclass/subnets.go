package nodeclass

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// Subnet is a resolved subnet with its free addresses.
type Subnet struct {
	ID, Zone, ZoneID string
	AvailableIPs     int32
}

// subnets returns every subnet matching any term, most free addresses first (ties by id).
func (r *Resolver) subnets(ctx context.Context, terms []apis.SubnetSelectorTerm) ([]Subnet, error) {
	seen := map[string]Subnet{}
	for _, term := range terms {
		in := &ec2.DescribeSubnetsInput{Filters: tagFilters(term.Tags)}
		if term.ID != "" {
			in = &ec2.DescribeSubnetsInput{SubnetIds: []string{term.ID}}
		}
		pager := ec2.NewDescribeSubnetsPaginator(r.ec2, in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				if notFound(err) {
					break // a subnet id that does not exist matches nothing
				}
				return nil, fmt.Errorf("describing subnets: %w", err)
			}
			for _, s := range page.Subnets {
				seen[aws.ToString(s.SubnetId)] = Subnet{ID: aws.ToString(s.SubnetId), Zone: aws.ToString(s.AvailabilityZone),
					ZoneID: aws.ToString(s.AvailabilityZoneId), AvailableIPs: aws.ToInt32(s.AvailableIpAddressCount)}
			}
		}
	}
	out := make([]Subnet, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].AvailableIPs != out[j].AvailableIPs {
			return out[i].AvailableIPs > out[j].AvailableIPs
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// BestPerZone keeps, for each zone, the subnet with the most free addresses (the one a launch uses).
func BestPerZone(subnets []Subnet) map[string]Subnet {
	best := map[string]Subnet{}
	for _, s := range subnets { // sorted by free addresses, so the first per zone wins
		if _, ok := best[s.Zone]; !ok {
			best[s.Zone] = s
		}
	}
	return best
}

// tagFilters turns selector tags into EC2 filters; the value "*" matches any value of the key.
func tagFilters(tags map[string]string) []ec2types.Filter {
	keys := make([]string, 0, len(tags))
	for k := range tags {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var f []ec2types.Filter
	for _, k := range keys {
		if tags[k] == "*" {
			f = append(f, ec2types.Filter{Name: aws.String("tag-key"), Values: []string{k}})
			continue
		}
		f = append(f, ec2types.Filter{Name: aws.String("tag:" + k), Values: []string{tags[k]}})
	}
	return f
}

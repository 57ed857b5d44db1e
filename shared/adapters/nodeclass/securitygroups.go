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

// securityGroups returns every security group matching any term (by id, name or tags), sorted by id.
func (r *Resolver) securityGroups(ctx context.Context, terms []apis.SecurityGroupSelectorTerm) ([]apis.SecurityGroupStatus, error) {
	seen := map[string]apis.SecurityGroupStatus{}
	for _, term := range terms {
		in := &ec2.DescribeSecurityGroupsInput{Filters: tagFilters(term.Tags)}
		switch {
		case term.ID != "":
			in = &ec2.DescribeSecurityGroupsInput{GroupIds: []string{term.ID}}
		case term.Name != "":
			in = &ec2.DescribeSecurityGroupsInput{Filters: []ec2types.Filter{{Name: aws.String("group-name"), Values: []string{term.Name}}}}
		}
		pager := ec2.NewDescribeSecurityGroupsPaginator(r.ec2, in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				if notFound(err) {
					break
				}
				return nil, fmt.Errorf("describing security groups: %w", err)
			}
			for _, g := range page.SecurityGroups {
				seen[aws.ToString(g.GroupId)] = apis.SecurityGroupStatus{ID: aws.ToString(g.GroupId), Name: aws.ToString(g.GroupName)}
			}
		}
	}
	out := make([]apis.SecurityGroupStatus, 0, len(seen))
	for _, g := range seen {
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

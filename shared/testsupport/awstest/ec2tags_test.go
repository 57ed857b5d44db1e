package awstest

import (
	"context"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInstancesAnswerWithTheirOwnTags: motoserver.py reads a resource's tags from its own entry instead
// of scanning every tag of every resource; what a client sees must be EC2's answers all the same: a
// tag-filtered, paged DescribeInstances returns exactly the tagged live instances, each with its own tags
// as created, added and removed; a wildcard tag filter and DescribeInstances by id agree; DescribeTags
// by resource id returns the same tags; an instance that lost its last tag has none.
func TestInstancesAnswerWithTheirOwnTags(t *testing.T) {
	ctx := context.Background()
	e := ec2.NewFromConfig(Shared(t).Config())
	run := func(n int, tags map[string]string) []string {
		var spec []ec2types.Tag
		for k, v := range tags {
			spec = append(spec, ec2types.Tag{Key: aws.String(k), Value: aws.String(v)})
		}
		out, err := e.RunInstances(ctx, &ec2.RunInstancesInput{ImageId: aws.String("ami-12c6146b"), MinCount: aws.Int32(int32(n)),
			MaxCount: aws.Int32(int32(n)), TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeInstance, Tags: spec}}})
		require.NoError(t, err)
		ids := make([]string, len(out.Instances))
		for i, inst := range out.Instances {
			ids[i] = aws.ToString(inst.InstanceId)
		}
		return ids
	}
	ours := run(12, map[string]string{"cluster": "a", "pool": "general"})
	theirs := run(8, map[string]string{"cluster": "b"})
	_, err := e.CreateTags(ctx, &ec2.CreateTagsInput{Resources: ours[:3], Tags: []ec2types.Tag{{Key: aws.String("claim"), Value: aws.String("c-1")}}})
	require.NoError(t, err)
	_, err = e.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: ours[3:5], Tags: []ec2types.Tag{{Key: aws.String("pool")}}})
	require.NoError(t, err)
	_, err = e.DeleteTags(ctx, &ec2.DeleteTagsInput{Resources: theirs[:1], Tags: []ec2types.Tag{{Key: aws.String("cluster")}}})
	require.NoError(t, err)
	_, err = e.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: ours[11:]})
	require.NoError(t, err)

	want := map[string]map[string]string{}
	for i, id := range ours[:11] {
		want[id] = map[string]string{"cluster": "a", "pool": "general"}
		if i < 3 {
			want[id]["claim"] = "c-1"
		}
		if i == 3 || i == 4 {
			delete(want[id], "pool")
		}
	}
	list := func(filters []ec2types.Filter, ids []string) map[string]map[string]string {
		got := map[string]map[string]string{}
		in := &ec2.DescribeInstancesInput{Filters: filters, InstanceIds: ids}
		if len(ids) == 0 {
			in.MaxResults = aws.Int32(5)
		}
		pager := ec2.NewDescribeInstancesPaginator(e, in)
		for pager.HasMorePages() {
			page, err := pager.NextPage(ctx)
			require.NoError(t, err)
			for _, r := range page.Reservations {
				for _, inst := range r.Instances {
					tags := map[string]string{}
					for _, tag := range inst.Tags {
						tags[aws.ToString(tag.Key)] = aws.ToString(tag.Value)
					}
					got[aws.ToString(inst.InstanceId)] = tags
				}
			}
		}
		return got
	}
	live := ec2types.Filter{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}}
	assert.Equal(t, want, list([]ec2types.Filter{{Name: aws.String("tag:cluster"), Values: []string{"a"}}, live}, nil))
	assert.Equal(t, want, list([]ec2types.Filter{{Name: aws.String("tag:cluster"), Values: []string{"a*"}}, live}, nil), "a wildcard value")
	assert.Equal(t, want, list(nil, ours[:11]), "described by id")
	assert.Len(t, list([]ec2types.Filter{{Name: aws.String("tag:cluster"), Values: []string{"b"}}}, nil), 7)
	assert.Len(t, list([]ec2types.Filter{{Name: aws.String("tag-key"), Values: []string{"claim"}}}, nil), 3)
	assert.Equal(t, map[string]string{}, list(nil, theirs[:1])[theirs[0]], "its only tag removed")

	tags, err := e.DescribeTags(ctx, &ec2.DescribeTagsInput{Filters: []ec2types.Filter{{Name: aws.String("resource-id"), Values: []string{ours[0]}}}})
	require.NoError(t, err)
	var keys []string
	for _, tag := range tags.Tags {
		keys = append(keys, aws.ToString(tag.Key))
		assert.Equal(t, ec2types.ResourceTypeInstance, tag.ResourceType)
	}
	sort.Strings(keys)
	assert.Equal(t, []string{"claim", "cluster", "pool"}, keys)
}

package instance

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statusPages answers DescribeInstanceStatus from pages per filter name, and records each call's input.
type statusPages struct {
	pages map[string][][]ec2types.InstanceStatus
	calls []*ec2.DescribeInstanceStatusInput
}

func (s *statusPages) DescribeInstanceStatus(_ context.Context, in *ec2.DescribeInstanceStatusInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceStatusOutput, error) {
	cp := *in
	s.calls = append(s.calls, &cp)
	pages := s.pages[aws.ToString(in.Filters[0].Name)]
	i := 0
	if in.NextToken != nil {
		i, _ = strconv.Atoi(*in.NextToken)
	}
	out := &ec2.DescribeInstanceStatusOutput{}
	if i < len(pages) {
		out.InstanceStatuses = pages[i]
	}
	if i+1 < len(pages) {
		out.NextToken = aws.String(strconv.Itoa(i + 1))
	}
	return out, nil
}

func summary(status ec2types.SummaryStatus, details ...ec2types.InstanceStatusDetails) *ec2types.InstanceStatusSummary {
	return &ec2types.InstanceStatusSummary{Status: status, Details: details}
}

func failedSince(t time.Time) ec2types.InstanceStatusDetails {
	return ec2types.InstanceStatusDetails{Name: ec2types.StatusNameReachability, Status: ec2types.StatusTypeFailed, ImpairedSince: aws.Time(t)}
}

func TestImpairedReadsBothChecksFilteredAndPaged(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	api := &statusPages{pages: map[string][][]ec2types.InstanceStatus{
		"instance-status.status": {
			{{InstanceId: aws.String("i-0a"), InstanceStatus: summary(ec2types.SummaryStatusImpaired, failedSince(t0.Add(time.Minute)), failedSince(t0),
				ec2types.InstanceStatusDetails{Name: ec2types.StatusNameReachability, Status: ec2types.StatusTypePassed, ImpairedSince: aws.Time(t0.Add(-time.Hour))})}},
			// An endpoint that ignores the filter answers instances that are fine: they are not impaired.
			{{InstanceId: aws.String("i-0ok"), InstanceStatus: summary(ec2types.SummaryStatusOk), SystemStatus: summary(ec2types.SummaryStatusOk)},
				{InstanceId: aws.String("i-0c"), InstanceStatus: summary(ec2types.SummaryStatusImpaired)}},
		},
		"system-status.status": {
			{{InstanceId: aws.String("i-0b"), InstanceStatus: summary(ec2types.SummaryStatusOk), SystemStatus: summary(ec2types.SummaryStatusImpaired, failedSince(t0))}},
		},
	}}
	got, err := NewStatusChecks(api).Impaired(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []Impaired{
		{InstanceID: "i-0a", Check: CheckInstanceStatus, Since: t0},
		{InstanceID: "i-0b", Check: CheckSystemStatus, Since: t0},
		{InstanceID: "i-0c", Check: CheckInstanceStatus},
	}, got)
	require.Len(t, api.calls, 3, "two pages of one check, one of the other")
	for _, c := range api.calls {
		require.Len(t, c.Filters, 1)
		assert.Equal(t, []string{"impaired"}, c.Filters[0].Values)
		assert.EqualValues(t, 1000, aws.ToInt32(c.MaxResults))
		assert.Empty(t, c.InstanceIds, "the account's impaired instances, not the fleet by id")
		assert.Nil(t, c.IncludeAllInstances, "running instances only")
	}
	assert.Equal(t, "instance-status.status", aws.ToString(api.calls[0].Filters[0].Name))
	assert.Equal(t, "1", aws.ToString(api.calls[1].NextToken))
	assert.Equal(t, "system-status.status", aws.ToString(api.calls[2].Filters[0].Name))
}

func TestImpairedRefusesAnUnboundedAnswer(t *testing.T) {
	pages := make([][]ec2types.InstanceStatus, MaxStatusPages+1)
	api := &statusPages{pages: map[string][][]ec2types.InstanceStatus{"instance-status.status": pages}}
	_, err := NewStatusChecks(api).Impaired(context.Background())
	require.ErrorContains(t, err, "more than 10 pages of instance-status.status impaired")
	assert.Len(t, api.calls, MaxStatusPages)
}

// Against moto (which answers every running instance as ok, whatever the filter), the calls are accepted
// on the wire and nothing is impaired.
func TestImpairedOnTheWire(t *testing.T) {
	n := newNetwork(t)
	runTagged(t, n, map[string]string{TagCluster: "demo"})
	got, err := NewStatusChecks(n.client).Impaired(context.Background())
	require.NoError(t, err)
	assert.Empty(t, got)
}

package instance

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// StatusAPI is the EC2 call behind StatusChecks; *ec2.Client satisfies it.
type StatusAPI interface {
	DescribeInstanceStatus(ctx context.Context, in *ec2.DescribeInstanceStatusInput, optFns ...func(*ec2.Options)) (*ec2.DescribeInstanceStatusOutput, error)
}

var _ StatusAPI = (*ec2.Client)(nil)

// Status check categories of an Impaired instance, as node repair names them.
const (
	CheckInstanceStatus = "InstanceStatus"
	CheckSystemStatus   = "SystemStatus"
)

// Impaired is one running instance whose EC2 status check of Check (CheckInstanceStatus or
// CheckSystemStatus) is impaired; Since is the earliest ImpairedSince of its failed details (zero when
// EC2 gave none).
type Impaired struct {
	InstanceID string
	Check      string
	Since      time.Time
}

// Bounds of one StatusChecks.Impaired read.
const (
	// statusPageSize is DescribeInstanceStatus's largest page.
	statusPageSize = 1000
	// MaxStatusPages bounds the pages read per check: 10,000 impaired instances in the account and
	// region. A read that would go further fails rather than answer in part.
	MaxStatusPages = 10
)

// StatusChecks reads the EC2 status checks that failed (DescribeInstanceStatus).
type StatusChecks struct {
	api StatusAPI
}

// NewStatusChecks returns a reader of the account's impaired instances.
func NewStatusChecks(api StatusAPI) *StatusChecks { return &StatusChecks{api: api} }

// Impaired lists the running instances of the account and region whose instance or system status check
// is impaired: one call per check, filtered by EC2 on instance-status.status (or system-status.status) =
// impaired, so the answer grows with the impaired instances, not with the fleet (DescribeInstanceStatus
// has no tag filter; the caller keeps its own instances). Each status is checked again here, so an
// endpoint that ignores the filter (moto answers every running instance as ok) yields no false impairment.
func (s *StatusChecks) Impaired(ctx context.Context) ([]Impaired, error) {
	var out []Impaired
	for _, check := range []struct{ name, filter string }{
		{CheckInstanceStatus, "instance-status.status"}, {CheckSystemStatus, "system-status.status"},
	} {
		in := &ec2.DescribeInstanceStatusInput{MaxResults: aws.Int32(statusPageSize), Filters: []ec2types.Filter{
			{Name: aws.String(check.filter), Values: []string{string(ec2types.SummaryStatusImpaired)}}}}
		for page := 0; ; page++ {
			if page == MaxStatusPages {
				return nil, fmt.Errorf("describing impaired instances: more than %d pages of %s impaired", MaxStatusPages, check.filter)
			}
			res, err := s.api.DescribeInstanceStatus(ctx, in)
			if err != nil {
				return nil, fromAPIError("describing impaired instances", err)
			}
			for _, st := range res.InstanceStatuses {
				summary := st.InstanceStatus
				if check.name == CheckSystemStatus {
					summary = st.SystemStatus
				}
				if imp, ok := impaired(st, summary, check.name); ok {
					out = append(out, imp)
				}
			}
			if aws.ToString(res.NextToken) == "" {
				break
			}
			in.NextToken = res.NextToken
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].InstanceID != out[j].InstanceID {
			return out[i].InstanceID < out[j].InstanceID
		}
		return out[i].Check < out[j].Check
	})
	return out, nil
}

// impaired reads one instance's summary of check: impaired, and since the earliest failed detail.
func impaired(st ec2types.InstanceStatus, summary *ec2types.InstanceStatusSummary, check string) (Impaired, bool) {
	if summary == nil || summary.Status != ec2types.SummaryStatusImpaired || aws.ToString(st.InstanceId) == "" {
		return Impaired{}, false
	}
	imp := Impaired{InstanceID: aws.ToString(st.InstanceId), Check: check}
	for _, d := range summary.Details {
		if d.Status != ec2types.StatusTypeFailed || d.ImpairedSince == nil {
			continue
		}
		if imp.Since.IsZero() || d.ImpairedSince.Before(imp.Since) {
			imp.Since = *d.ImpairedSince
		}
	}
	return imp, true
}

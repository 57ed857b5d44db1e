package provisioning

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// refusingEC2 refuses the listed offerings with code (as a fleet's per-override errors), and otherwise
// launches the first override it is offered.
type refusingEC2 struct {
	refuse   map[instance.Offering]string
	requests []instance.Request
}

func (f *refusingEC2) Launch(_ context.Context, req instance.Request) (instance.Instance, error) {
	f.requests = append(f.requests, req)
	oe := &instance.OfferingsError{}
	for _, o := range req.Overrides {
		off := instance.Offering{InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType}
		code, refused := f.refuse[off]
		if !refused {
			return instance.Instance{ID: "i-0456", InstanceType: o.InstanceType, Zone: o.Zone, CapacityType: req.CapacityType}, nil
		}
		kind := instance.KindInvalidRequest
		if code == "InvalidLaunchTemplateName.NotFoundException" {
			kind = instance.KindLaunchTemplateNotFound
		}
		oe.Rejected = append(oe.Rejected, instance.RejectedOffering{Offering: off, Kind: kind, Code: code, Message: "refused"})
	}
	return instance.Instance{}, oe
}

func TestLaunchDropsRefusedOfferingsAndGoesOn(t *testing.T) {
	ctx := context.Background()
	store := newStateStore(t)
	p := plan()
	ec2 := &refusingEC2{refuse: map[instance.Offering]string{
		{InstanceType: "c5.large", Zone: "us-east-1a", CapacityType: "spot"}: "InvalidParameterValue",
		{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"}: "InvalidParameterValue",
		{InstanceType: "m5.large", Zone: "us-east-1b", CapacityType: "spot"}: "InvalidParameterValue",
	}}
	res, err := Launch(ctx, ec2, store, p)
	require.NoError(t, err)
	assert.Equal(t, "on-demand", res.Instance.CapacityType, "every spot offering refused: on to on-demand")
	assert.Len(t, res.Rejected, 3)
	assert.Equal(t, 2, res.Attempts)
	marked, err := store.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.Len(t, marked, 3, "refused offerings are kept out of the next solves for a while")
}

func TestClaimLaunchWithEveryOfferingRefusedDeletesTheClaim(t *testing.T) {
	s := newStateStore(t)
	ec2 := &refusingEC2{refuse: map[instance.Offering]string{
		{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot"}:      "InvalidParameterValue",
		{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "on-demand"}: "InvalidParameterValue",
	}}
	_, err := testLaunch(s, ec2).run(context.Background())
	require.ErrorIs(t, err, ErrOfferingsRejected)
	assert.Contains(t, err.Error(), "InvalidParameterValue for m5.xlarge in us-east-1a")
	var failure *LaunchFailure
	require.ErrorAs(t, err, &failure)
	assert.Equal(t, LaunchFailure{Claim: "default-abcde", NodePool: "default", Reason: "OfferingsRejected"},
		LaunchFailure{Claim: failure.Claim, NodePool: failure.NodePool, Reason: failure.Reason, Pending: failure.Pending})
	c, err := s.GetClaim(context.Background(), "default-abcde")
	require.NoError(t, err)
	assert.Equal(t, state.Deleted, c.Lifecycle, "EC2 answered: nothing started, nothing stands for it")
	d := decisions(t, s, "default-abcde")
	require.Len(t, d, 1)
	assert.Equal(t, "OfferingsRejected", d[0].Reason)
}

// TestClaimLaunchReleasesTheClaimOnAnyAnswer: a transport error, a timeout or a server error leaves a claim
// pending (counted as in-flight capacity until the launch timeout); every refusal EC2 gave releases it at once.
func TestClaimLaunchReleasesTheClaimOnAnyAnswer(t *testing.T) {
	for name, tc := range map[string]struct {
		err           error
		reason        string
		pending       bool
		neverSucceeds bool
	}{
		"unauthorized": {&instance.LaunchError{Kind: instance.KindUnauthorized, Code: "UnauthorizedOperation"}, "Unauthorized", false, true},
		"invalid":      {&instance.LaunchError{Kind: instance.KindInvalidRequest, Code: "InvalidParameterCombination"}, "InvalidRequest", false, true},
		"quota":        {&instance.LaunchError{Kind: instance.KindQuota, Code: "VcpuLimitExceeded"}, "QuotaExceeded", false, false},
		"throttled":    {&instance.LaunchError{Kind: instance.KindThrottled, Code: "RequestLimitExceeded"}, "Throttled", false, false},
		"server error": {&instance.LaunchError{Kind: instance.KindServerError, Code: "InternalError"}, "LaunchOutcomeUnknown", true, false},
		"reset":        {errors.New("read: connection reset by peer"), "LaunchOutcomeUnknown", true, false},
		"timeout":      {context.DeadlineExceeded, "LaunchOutcomeUnknown", true, false},
		"raw api":      {&smithy.GenericAPIError{Code: "Whatever"}, "LaunchOutcomeUnknown", true, false},
	} {
		t.Run(name, func(t *testing.T) {
			s := newStateStore(t)
			_, err := testLaunch(s, &fakeEC2Capacity{err: tc.err}).run(context.Background())
			var failure *LaunchFailure
			require.ErrorAs(t, err, &failure)
			assert.Equal(t, tc.reason, failure.Reason)
			assert.Equal(t, tc.pending, failure.Pending)
			assert.Equal(t, tc.neverSucceeds, failure.NeverSucceeds())
			c, err := s.GetClaim(context.Background(), "default-abcde")
			require.NoError(t, err)
			want := state.Deleted
			if tc.pending {
				want = state.Pending
			}
			assert.Equal(t, want, c.Lifecycle)
			d := decisions(t, s, "default-abcde")
			require.Len(t, d, 1)
			assert.Equal(t, tc.reason, d[0].Reason)
		})
	}
}

// forgettingTemplates is fakeTemplates that records which templates it was told to forget.
type forgettingTemplates struct {
	fakeTemplates
	forgotten []string
}

func (f *forgettingTemplates) Invalidate(name string) { f.forgotten = append(f.forgotten, name) }

func TestClaimLaunchForgetsATemplateEC2NoLongerKnows(t *testing.T) {
	s := newStateStore(t)
	l := testLaunch(s, &fakeEC2Capacity{err: &instance.LaunchError{Kind: instance.KindLaunchTemplateNotFound,
		Code: "InvalidLaunchTemplateName.NotFoundException"}})
	templates := &forgettingTemplates{}
	l.templates = templates
	_, err := l.run(context.Background())
	var failure *LaunchFailure
	require.ErrorAs(t, err, &failure)
	assert.Equal(t, "LaunchTemplateNotFound", failure.Reason)
	assert.NotEmpty(t, templates.forgotten, "the next run makes the template again")
}

package instance

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/crash"
)

func batchClaims(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("default-c%04d", i)
	}
	return out
}

func TestBatchLaunchTagsEveryInstanceWithExactlyOneClaimAndAdoptsOnRetry(t *testing.T) {
	ctx := context.Background()
	n := newNetwork(t)
	const cluster = "batch-e2e"
	l := New(n.client, cluster)
	req := BatchRequest{Request: n.request(""), Batch: "batch-e2e0000001", Claims: batchClaims(7)}
	req.Cluster = cluster

	res, err := l.LaunchBatch(ctx, req)
	require.NoError(t, err)
	require.Empty(t, res.Unassigned)
	require.Empty(t, res.TagErrors)
	assert.False(t, res.Adopted)
	require.Len(t, res.Assigned, 7, "one CreateFleet with TotalTargetCapacity 7 starts 7 instances")

	all, err := l.List(ctx)
	require.NoError(t, err)
	require.Len(t, all, 7)
	claimOf := map[string]string{}
	instanceOf := map[string]string{}
	for _, inst := range all {
		claim := inst.Tags[TagNodeClaim]
		require.NotEmpty(t, claim, "instance %s has a claim tag", inst.ID)
		assert.Empty(t, instanceOf[claim], "claim %s has one instance", claim)
		instanceOf[claim], claimOf[inst.ID] = inst.ID, claim
		assert.Equal(t, "batch-e2e0000001", inst.Tags[TagBatch])
		assert.Equal(t, cluster, inst.Tags[TagCluster])
	}
	for _, a := range res.Assigned {
		assert.Equal(t, a.Claim, claimOf[a.Instance.ID], "the tag on EC2 matches the assignment")
		assert.Equal(t, a.Claim, a.Instance.Tags[TagNodeClaim])
	}

	// A retry with the same token (moto ignores ClientToken) adopts the instances and pairs them alike.
	again, err := l.LaunchBatch(ctx, req)
	require.NoError(t, err)
	assert.True(t, again.Adopted)
	assert.Equal(t, res.Assigned[3].Instance.ID, again.Assigned[3].Instance.ID)
	for i := range res.Assigned {
		assert.Equal(t, res.Assigned[i].Claim, again.Assigned[i].Claim)
		assert.Equal(t, res.Assigned[i].Instance.ID, again.Assigned[i].Instance.ID)
	}
	all, err = l.List(ctx)
	require.NoError(t, err)
	assert.Len(t, all, 7, "the retry launched nothing")
}

func TestBatchAssignmentIsDeterministicAndKeepsTaggedInstances(t *testing.T) {
	inst := func(id, claim string) Instance {
		i := Instance{ID: id, Tags: map[string]string{}}
		if claim != "" {
			i.Tags[TagNodeClaim] = claim
		}
		return i
	}
	claims := []string{"a", "b", "c"}
	cases := map[string]struct {
		instances  []Instance
		want       map[string]string
		unassigned []string
	}{
		"N to N in id order": {instances: []Instance{inst("i-3", ""), inst("i-1", ""), inst("i-2", "")},
			want: map[string]string{"a": "i-1", "b": "i-2", "c": "i-3"}},
		"fewer than N": {instances: []Instance{inst("i-9", ""), inst("i-5", "")},
			want: map[string]string{"a": "i-5", "b": "i-9"}, unassigned: []string{"c"}},
		"none": {unassigned: claims, want: map[string]string{}},
		"already tagged keep their claim": {instances: []Instance{inst("i-1", ""), inst("i-2", "c"), inst("i-3", "")},
			want: map[string]string{"a": "i-1", "b": "i-3", "c": "i-2"}},
		"another claim's instance is never taken": {instances: []Instance{inst("i-1", "zz"), inst("i-2", "")},
			want: map[string]string{"a": "i-2"}, unassigned: []string{"b", "c"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			assigned, unassigned := assign(claims, tc.instances)
			got := map[string]string{}
			for _, a := range assigned {
				got[a.Claim] = a.Instance.ID
			}
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.unassigned, unassigned)
		})
	}
}

func fleetInstance(instanceType, zone string, ids ...string) ec2types.CreateFleetInstance {
	return ec2types.CreateFleetInstance{InstanceIds: ids, InstanceType: ec2types.InstanceType(instanceType),
		LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{Overrides: &ec2types.FleetLaunchTemplateOverrides{
			AvailabilityZone: aws.String(zone)}}}
}

func TestBatchAsksForNInstancesTaggedWithTheBatchAndReportsShortfall(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{
		Instances: []ec2types.CreateFleetInstance{fleetInstance("c5.large", "us-east-1a", "i-2", "i-1")},
		Errors:    []ec2types.CreateFleetError{fleetError("InsufficientInstanceCapacity", "m5.large", "subnet-a")},
	}}
	res, err := New(f, "demo").LaunchBatch(context.Background(), BatchRequest{Request: request(), Batch: "b-1", Claims: []string{"x", "y", "z"}})
	require.NoError(t, err)
	assert.Equal(t, int32(3), aws.ToInt32(f.last.TargetCapacitySpecification.TotalTargetCapacity))
	assert.Equal(t, "b-1", aws.ToString(f.last.ClientToken))
	for _, ts := range f.last.TagSpecifications {
		tags := map[string]string{}
		for _, tg := range ts.Tags {
			tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
		}
		assert.Equal(t, "b-1", tags[TagBatch], "%s carries the batch tag", ts.ResourceType)
		assert.NotContains(t, tags, TagNodeClaim, "one fleet cannot tag its instances with different claims")
	}
	assert.Equal(t, map[string]string{"i-1": "x", "i-2": "y"}, f.tagged, "each instance is tagged with its claim afterwards")
	assert.Equal(t, []string{"z"}, res.Unassigned)
	var ice *InsufficientCapacityError
	require.ErrorAs(t, res.Partial, &ice, "the shortfall says which offerings lacked capacity")
	assert.Equal(t, []Offering{{InstanceType: "m5.large", Zone: "us-east-1a", CapacityType: "spot"}}, ice.Offerings)
	assert.Equal(t, "us-east-1a", res.Assigned[0].Instance.Zone, "what the fleet said stands in for a description")
}

func TestBatchThatLaunchesNothingFailsLikeALaunch(t *testing.T) {
	f := &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{
		fleetError("InsufficientInstanceCapacity", "m5.large", "subnet-a")}}}
	res, err := New(f, "demo").LaunchBatch(context.Background(), BatchRequest{Request: request(), Batch: "b-1", Claims: []string{"x", "y"}})
	assert.True(t, IsInsufficientCapacity(err), "got %v", err)
	assert.Empty(t, res.Assigned)
	assert.Empty(t, f.tagged)
}

func TestBatchRefusesBadBatches(t *testing.T) {
	for name, claims := range map[string][]string{"empty": nil, "duplicate": {"x", "x"}, "unnamed": {""},
		"too many": batchClaims(MaxBatchSize + 1)} {
		t.Run(name, func(t *testing.T) {
			f := &fakeEC2{}
			_, err := New(f, "demo").LaunchBatch(context.Background(), BatchRequest{Request: request(), Batch: "b-1", Claims: claims})
			var le *LaunchError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, "InvalidBatch", le.Code)
			assert.Nil(t, f.last, "nothing was asked of EC2")
		})
	}
}

func TestInBatch(t *testing.T) {
	assert.True(t, InBatch("b-abc", "b-abc"))
	assert.True(t, InBatch("b-abc-2", "b-abc"))
	assert.False(t, InBatch("b-abcd", "b-abc"))
	assert.False(t, InBatch("b-abc", ""))
}

// countingEC2 counts the tag-filtered look-ups for a batch's instances and for a claim's.
type countingEC2 struct {
	*fakeEC2
	batchLookups, claimLookups int
}

func (c *countingEC2) DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error) {
	for _, f := range in.Filters {
		switch aws.ToString(f.Name) {
		case "tag:" + TagBatch:
			c.batchLookups++
		case "tag:" + TagNodeClaim:
			c.claimLookups++
		}
	}
	return c.fakeEC2.DescribeInstances(ctx, in, opts...)
}

// TestAFreshBatchSkipsTheAdoptionLookup: a token never sent cannot be on any instance, so the slowest call
// of a burst is not made; a retried token still looks.
func TestAFreshBatchSkipsTheAdoptionLookup(t *testing.T) {
	f := &countingEC2{fakeEC2: &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{
		fleetError("InsufficientInstanceCapacity", "m5.large", "subnet-a")}}}}
	req := BatchRequest{Request: request(), Batch: "batch-fresh000000001", Claims: batchClaims(3)}
	req.Fresh = true
	_, _ = New(f, "demo").LaunchBatch(context.Background(), req)
	assert.Zero(t, f.batchLookups)
	req.Fresh = false
	_, _ = New(f, "demo").LaunchBatch(context.Background(), req)
	assert.Equal(t, 1, f.batchLookups)
}

// TestAFreshClaimSkipsTheAdoptionLookup: a claim just recorded has a token no call carried, so its
// launch goes straight to CreateFleet; a claim launched again (Fresh unset) still looks for its instance
// first.
func TestAFreshClaimSkipsTheAdoptionLookup(t *testing.T) {
	f := &countingEC2{fakeEC2: &fakeEC2{out: &ec2.CreateFleetOutput{Errors: []ec2types.CreateFleetError{
		fleetError("InsufficientInstanceCapacity", "m5.large", "subnet-a")}}}}
	_, _ = New(f, "demo").Launch(context.Background(), fresh(request()))
	assert.Zero(t, f.claimLookups)
	require.NotNil(t, f.last, "the fleet was asked for")
	_, _ = New(f, "demo").Launch(context.Background(), request())
	assert.Equal(t, 1, f.claimLookups)
}

// slowTags is fakeEC2 whose CreateTags takes a while and counts the calls in flight.
type slowTags struct {
	*fakeEC2
	mu               sync.Mutex
	inFlight, maxFly int
}

func (s *slowTags) CreateTags(ctx context.Context, in *ec2.CreateTagsInput, o ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error) {
	s.mu.Lock()
	s.inFlight++
	s.maxFly = max(s.maxFly, s.inFlight)
	s.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	return s.fakeEC2.CreateTags(ctx, in, o...)
}

func TestBatchTagsItsInstancesConcurrentlyWithABound(t *testing.T) {
	var ids, claims []string
	for i := range 40 {
		ids, claims = append(ids, fmt.Sprintf("i-%02d", i)), append(claims, fmt.Sprintf("c-%02d", i))
	}
	f := &slowTags{fakeEC2: &fakeEC2{out: &ec2.CreateFleetOutput{
		Instances: []ec2types.CreateFleetInstance{fleetInstance("c5.large", "us-east-1a", ids...)}}}}
	res, err := New(f, "demo").LaunchBatch(context.Background(), BatchRequest{Request: request(), Batch: "b-1", Claims: claims})
	require.NoError(t, err)
	require.Len(t, res.Assigned, 40)
	assert.Empty(t, res.TagErrors)
	for _, a := range res.Assigned {
		assert.Equal(t, a.Claim, f.tagged[a.Instance.ID], "instance %s tagged with its own claim", a.Instance.ID)
		assert.Equal(t, a.Claim, a.Instance.Tags[TagNodeClaim])
	}
	assert.LessOrEqual(t, f.maxFly, MaxConcurrentTags)
	assert.Greater(t, f.maxFly, 1, "tags go out concurrently")
}

// failingTag is fakeEC2 whose CreateTags fails for one instance.
type failingTag struct {
	*fakeEC2
	id string
}

func (f failingTag) CreateTags(ctx context.Context, in *ec2.CreateTagsInput, o ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error) {
	if in.Resources[0] == f.id {
		return nil, &smithy.GenericAPIError{Code: "InvalidInstanceID.NotFound", Message: "not yet visible"}
	}
	return f.fakeEC2.CreateTags(ctx, in, o...)
}

func TestBatchReportsTheTagsThatFailedAndKeepsTheAssignments(t *testing.T) {
	f := failingTag{fakeEC2: &fakeEC2{out: &ec2.CreateFleetOutput{
		Instances: []ec2types.CreateFleetInstance{fleetInstance("c5.large", "us-east-1a", "i-1", "i-2", "i-3")}}}, id: "i-2"}
	res, err := New(f, "demo").LaunchBatch(context.Background(), BatchRequest{Request: request(), Batch: "b-1", Claims: []string{"x", "y", "z"}})
	require.NoError(t, err)
	require.Len(t, res.Assigned, 3, "an instance whose tag failed still belongs to its claim")
	require.Len(t, res.TagErrors, 1)
	assert.ErrorContains(t, res.TagErrors[0], "tagging instance i-2")
	for _, a := range res.Assigned {
		if a.Instance.ID == "i-2" {
			assert.Empty(t, a.Instance.Tags[TagNodeClaim])
		} else {
			assert.Equal(t, a.Claim, a.Instance.Tags[TagNodeClaim])
		}
	}
}

// panickingTag is fakeEC2 whose CreateTags panics for one instance, as a bug in a client middleware would.
type panickingTag struct {
	*fakeEC2
	id string
}

func (f panickingTag) CreateTags(ctx context.Context, in *ec2.CreateTagsInput, o ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error) {
	if in.Resources[0] == f.id {
		panic("tag middleware: nil pointer dereference")
	}
	return f.fakeEC2.CreateTags(ctx, in, o...)
}

// TestAPanicWhileTaggingIsThatTagsError: the tag goroutines run beside the run's own; a panic there must
// come back as a failed tag (the instance kept by its claim, adopted later), never end the process with
// the run's lease held.
func TestAPanicWhileTaggingIsThatTagsError(t *testing.T) {
	f := panickingTag{fakeEC2: &fakeEC2{out: &ec2.CreateFleetOutput{
		Instances: []ec2types.CreateFleetInstance{fleetInstance("c5.large", "us-east-1a", "i-1", "i-2", "i-3")}}}, id: "i-3"}
	var res BatchResult
	var err error
	require.NotPanics(t, func() {
		res, err = New(f, "demo").LaunchBatch(context.Background(), BatchRequest{Request: request(), Batch: "b-1", Claims: []string{"x", "y", "z"}})
	})
	require.NoError(t, err)
	require.Len(t, res.Assigned, 3)
	require.Len(t, res.TagErrors, 1)
	var pe *crash.PanicError
	require.ErrorAs(t, res.TagErrors[0], &pe)
	assert.Equal(t, "tag middleware: nil pointer dereference", pe.Value)
}

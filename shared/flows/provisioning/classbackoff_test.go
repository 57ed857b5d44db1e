package provisioning

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// otherPoolAndClass is a second NodePool on its own EC2NodeClass, otherwise like poolAndClass's.
const otherPoolAndClass = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: other}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: other
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: other}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{tags: {team: platform}}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

// TestAClassBackingOffLaunchesNothingUntilItsBackoffEnds: two instances of EC2NodeClass default died
// at launch (a bad kmsKeyID). A run within the back-off launches for the pool of another class, nothing
// for default's, tells the pod that only default's pool takes why (class, failures, last state reason,
// until when) and reports the class; once the back-off has passed the class launches again. Before, the
// class launched on the next offering every run, each launch dying the same way.
func TestAClassBackingOffLaunchesNothingUntilItsBackoffEnds(t *testing.T) {
	ctx := context.Background()
	snap := pendingSnapshot(pod("a", map[string]string{apis.NodePoolLabelKey: "default"}),
		pod("b", map[string]string{apis.NodePoolLabelKey: "other"}))
	w := newTestProvisioner(t, fakeCluster{snap: snap})
	_, err := w.store.ApplyConfig(ctx, storedConfig(t, otherPoolAndClass), false)
	require.NoError(t, err)
	resolver := w.p.deps.NodeClasses.(*fakeResolver)
	resolver.res["other"] = resolver.res["default"]
	cfg, _, err := readConfig(ctx, w.store)
	require.NoError(t, err)

	t0 := time.Now()
	now := t0
	w.p.deps.Now = func() time.Time { return now }
	for i, id := range []string{"i-0dead1", "i-0dead2"} {
		_, err := w.store.RecordLaunchFailure(ctx, "default", stateFailure(id, t0.Add(time.Duration(i)*time.Minute), cfg.classHash["default"]))
		require.NoError(t, err)
	}
	// A failure of the class's earlier spec (fixed since) counts for nothing.
	_, err = w.store.RecordLaunchFailure(ctx, "default", stateFailure("i-0old", t0.Add(time.Minute), "an-earlier-spec"))
	require.NoError(t, err)

	now = t0.Add(2 * time.Minute) // the back-off of 2 failures: 10 minutes after the last, until t0+11m
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1, "the other class launches")
	assert.Equal(t, "other", rep.Claims[0].NodePool)
	require.Len(t, rep.BackingOff, 1)
	assert.Contains(t, rep.BackingOff[0], "EC2NodeClass default is backing off: 2 instance(s) died at launch")
	require.Len(t, rep.Unschedulable, 1)
	assert.Equal(t, "ns/a", rep.Unschedulable[0].Pod)
	for _, want := range []string{"EC2NodeClass default", "2 instance(s)", "i-0dead2", "Client.InvalidKMSKey.InvalidState",
		"The KMS key provided is in an incorrect state", t0.Add(11 * time.Minute).UTC().Format(time.RFC3339)} {
		assert.Contains(t, rep.Unschedulable[0].Reason, want)
	}
	d, err := w.store.Decisions(ctx, "pod/ns/a", 10)
	require.NoError(t, err)
	require.Len(t, d, 1)
	assert.True(t, strings.HasPrefix(d[0].Message, "EC2NodeClass default is backing off"), d[0].Message)

	now = t0.Add(11*time.Minute + time.Second)
	rep, err = w.p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, rep.BackingOff)
	require.Len(t, rep.Claims, 1, "after the back-off the class launches again; b's claim is in flight")
	assert.Equal(t, "default", rep.Claims[0].NodePool)
}

// TestAnUnreadableClassFailureRecordStopsNoLaunch: a malformed record is reported, naming its field, and
// every class launches.
func TestAnUnreadableClassFailureRecordStopsNoLaunch(t *testing.T) {
	ctx := context.Background()
	moto := awstest.Shared(t) // newTestProvisioner resets it and creates the table; the server stays
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	putRaw(t, moto.Config(), "CLASSBACKOFF", "default", map[string]string{"failures": "not a map"})
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Len(t, rep.Claims, 1)
	require.Len(t, rep.Errors, 1)
	assert.Contains(t, rep.Errors[0], `launch failures of EC2NodeClass "default": field failures: not a map`)
}

func stateFailure(id string, at time.Time, hash string) state.LaunchFailure {
	return state.LaunchFailure{InstanceID: id, At: at, SpecHash: hash, Code: "Client.InvalidKMSKey.InvalidState",
		Message: "The KMS key provided is in an incorrect state"}
}

// putRaw writes an item of string attributes to the state table as it is, past the store's encoding.
func putRaw(t *testing.T, cfg aws.Config, pk, sk string, attrs map[string]string) {
	t.Helper()
	item := map[string]types.AttributeValue{state.PartitionKey: &types.AttributeValueMemberS{Value: pk},
		state.SortKey: &types.AttributeValueMemberS{Value: sk}}
	for k, v := range attrs {
		item[k] = &types.AttributeValueMemberS{Value: v}
	}
	_, err := state.NewClient(cfg).PutItem(context.Background(),
		&dynamodb.PutItemInput{TableName: aws.String("state"), Item: item})
	require.NoError(t, err)
}

// TestLaunchesJudgeTheClassBackoffAsARunDoes: the disruption function's replacements go through
// Launches, which reads the class failures with its other inputs and judges them as a provisioning run:
// held while the class backs off, not once a node of the class initialized after the failure.
func TestLaunchesJudgeTheClassBackoffAsARunDoes(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot()})
	cfg, _, err := readConfig(ctx, w.store)
	require.NoError(t, err)
	t0 := time.Now()
	_, err = w.store.RecordLaunchFailure(ctx, "default", stateFailure("i-0dead", t0, cfg.classHash["default"]))
	require.NoError(t, err)

	l, err := w.p.PrepareLaunches(ctx)
	require.NoError(t, err)
	b, held := l.ClassBackoff("default", nil, t0.Add(time.Minute))
	assert.True(t, held)
	assert.Equal(t, 1, b.Failures)
	assert.Equal(t, t0.Add(5*time.Minute).UnixMilli(), b.Until.UnixMilli())

	initialized := t0.Add(30 * time.Second)
	_, held = l.ClassBackoff("default", []state.Claim{{Name: "default-ok", NodePool: "default", NodeClass: "default",
		Lifecycle: state.Initialized, InitializedAt: &initialized}}, t0.Add(time.Minute))
	assert.False(t, held, "a node of the class initialized since the failure")
	_, held = l.ClassBackoff("default", nil, t0.Add(5*time.Minute))
	assert.False(t, held, "the back-off is over")
	_, held = l.ClassBackoff("no-such-pool", nil, t0.Add(time.Minute))
	assert.False(t, held)
}

// TestARunWhoseOnlyClassBacksOffLaunchesNothing: with every class backing off the solve has no pool; the
// run launches nothing, fails nothing, and tells the pods why.
func TestARunWhoseOnlyClassBacksOffLaunchesNothing(t *testing.T) {
	ctx := context.Background()
	w := newTestProvisioner(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))})
	now := time.Now()
	w.p.deps.Now = func() time.Time { return now }
	_, err := w.store.RecordLaunchFailure(ctx, "default", stateFailure("i-0dead", now.Add(-time.Minute), ""))
	require.NoError(t, err)
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims)
	assert.Empty(t, w.ec2.requests)
	require.Len(t, rep.Unschedulable, 1)
	assert.Contains(t, rep.Unschedulable[0].Reason, "EC2NodeClass default is backing off: 1 instance(s) died at launch")
}

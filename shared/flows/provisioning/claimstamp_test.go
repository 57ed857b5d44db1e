package provisioning

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestLifetimeOf(t *testing.T) {
	hour := time.Hour
	cases := []struct {
		name        string
		expireAfter apis.NillableDuration
		tgp         *apis.Duration
		want        poolLifetime
	}{
		{"omitted expireAfter is Karpenter's 720h", "", nil, poolLifetime{expireAfter: "720h0m0s"}},
		{"Never", apis.Never, nil, poolLifetime{expireAfter: state.ExpireNever}},
		{"a duration and a terminationGracePeriod", "2m", durationPtr("60m"), poolLifetime{expireAfter: "2m0s", terminationGracePeriod: &hour}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			np := &apis.NodePool{}
			np.Spec.Template.Spec.ExpireAfter = tc.expireAfter
			np.Spec.Template.Spec.TerminationGracePeriod = tc.tgp
			assert.Equal(t, tc.want, lifetimeOf(np))
		})
	}
}

// TestReadConfigStampsPoolLifetime: a run stamps a pool's claims with its template's expireAfter and
// terminationGracePeriod and the stored drift hashes.
func TestReadConfigStampsPoolLifetime(t *testing.T) {
	yaml := `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      expireAfter: 24h
      terminationGracePeriod: 30m
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
` + nodeClassRef + `---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{tags: {team: platform}}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`
	items := storedConfig(t, yaml)
	cfg, problems, err := readConfig(context.Background(), fakeConfig{items: items})
	require.NoError(t, err)
	require.Empty(t, problems)
	require.Len(t, cfg.pools, 1)
	s := cfg.stamp(cfg.pools[0])
	assert.Equal(t, cfg.poolHash["default"], s.poolHash)
	assert.Equal(t, cfg.classHash["default"], s.classHash)
	assert.NotEmpty(t, s.poolHash)
	assert.NotEmpty(t, s.classHash)
	assert.Equal(t, "24h0m0s", s.lifetime.expireAfter)
	require.NotNil(t, s.lifetime.terminationGracePeriod)
	assert.Equal(t, 30*time.Minute, *s.lifetime.terminationGracePeriod)
}

func TestLaunchedWith(t *testing.T) {
	plan := LaunchPlan{Images: map[string]string{"lt-a": "ami-planned"}}
	chosen := instance.Override{InstanceType: "m5.large", Zone: "us-east-1a", SubnetID: "subnet-planned", LaunchTemplate: "lt-a"}
	described := instance.Instance{ImageID: "ami-described", SubnetID: "subnet-described", SecurityGroupIDs: []string{"sg-default"}}

	image, subnet, sgs := launchedWith(plan, chosen, true, []string{"sg-2", "sg-1", "sg-2"}, described)
	assert.Equal(t, "ami-planned", image, "the image of the chosen override's template")
	assert.Equal(t, "subnet-planned", subnet, "the chosen override's subnet")
	assert.Equal(t, []string{"sg-1", "sg-2"}, sgs, "the node class's groups, as a sorted set")

	image, subnet, sgs = launchedWith(plan, instance.Override{}, false, nil, described)
	assert.Equal(t, "ami-described", image, "no override matched: EC2's description")
	assert.Equal(t, "subnet-described", subnet)
	assert.Equal(t, []string{"sg-default"}, sgs)

	image, subnet, sgs = launchedWith(plan, instance.Override{}, false, nil, instance.Instance{})
	assert.Empty(t, image, "unknown stays empty")
	assert.Empty(t, subnet)
	assert.Empty(t, sgs)
}

func durationPtr(d apis.Duration) *apis.Duration { return &d }

// TestStampCreated: a new claim records the stamp's hashes with this code's hash versions, its
// expireAfter and its own copy of the terminationGracePeriod; what the stamp lacks stays unrecorded.
func TestStampCreated(t *testing.T) {
	tgp := 45 * time.Minute
	s := claimStamp{poolHash: "p1", classHash: "c1", lifetime: poolLifetime{expireAfter: "24h0m0s", terminationGracePeriod: &tgp}}
	var c state.Claim
	s.stampCreated(&c)
	assert.Equal(t, state.Claim{TemplateHash: "p1", TemplateHashVersion: apis.NodePoolHashVersion, NodeClassHash: "c1",
		NodeClassHashVersion: apis.EC2NodeClassHashVersion, ExpireAfter: "24h0m0s", TerminationGracePeriod: &tgp}, c)
	tgp = time.Hour
	assert.Equal(t, 45*time.Minute, *c.TerminationGracePeriod, "the claim holds its own copy")

	c = state.Claim{}
	claimStamp{lifetime: poolLifetime{expireAfter: state.ExpireNever}}.stampCreated(&c)
	assert.Equal(t, state.Claim{ExpireAfter: state.ExpireNever}, c, "no hash, no version; no terminationGracePeriod, none recorded")
}

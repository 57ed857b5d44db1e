package provisioning

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestBuildLaunchPlan(t *testing.T) {
	class := testClass(
		instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b", "us-east-1c"),
		instanceType("c5.xlarge", "amd64", 4, 0.17, "us-east-1a", "us-east-1b"),
		instanceType("m6g.xlarge", "arm64", 4, 0.154, "us-east-1a"),
	)
	target := claimTarget{
		claim: scheduling.ClaimPlan{NodePool: "default", InstanceTypeOptions: []string{"m6g.xlarge", "c5.xlarge", "m5.xlarge", "gone.large"}},
		pool:  scheduling.NodePool{Name: "default", Labels: map[string]string{"team": "a", scheduling.LabelEC2NodeClass: "default"}},
		class: class, unavailable: scheduling.UnavailableOfferings{{InstanceType: "c5.xlarge", Zone: "us-east-1b", CapacityType: "spot"}: true},
		cluster: launchtemplate.Cluster{Name: "demo"},
	}
	templates := &fakeTemplates{}
	plan, err := buildLaunchPlan(context.Background(), templates, target, instance.Request{Claim: "default-abcde"})
	require.NoError(t, err)

	assert.Equal(t, "default-abcde", plan.Request.Claim)
	assert.Equal(t, []instance.Override{
		{InstanceType: "m6g.xlarge", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt-ami-arm64-spot", Price: 0.154 * spotFactor},
		{InstanceType: "c5.xlarge", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt-ami-amd64-spot", Price: 0.17 * spotFactor},
		{InstanceType: "m5.xlarge", Zone: "us-east-1a", SubnetID: "subnet-a", LaunchTemplate: "lt-ami-amd64-spot", Price: 0.192 * spotFactor},
		{InstanceType: "m5.xlarge", Zone: "us-east-1b", SubnetID: "subnet-b", LaunchTemplate: "lt-ami-amd64-spot", Price: 0.192 * spotFactor},
	}, plan.Spot, "cheapest first; no subnet in us-east-1c; c5 spot in 1b is unavailable; each arch its AMI")
	assert.Len(t, plan.OnDemand, 5)
	assert.Equal(t, "m6g.xlarge", plan.OnDemand[0].InstanceType)
	assert.Equal(t, "lt-ami-arm64-on-demand", plan.OnDemand[0].LaunchTemplate)

	require.Len(t, templates.made, 4, "one template per image and capacity type")
	labels := templates.made[0].Options.Labels
	assert.Equal(t, "a", labels["team"])
	assert.Equal(t, "default", labels[apis.NodePoolLabelKey])
	assert.Equal(t, "default", labels[apis.NodeClassLabelKey])
}

func TestBuildLaunchPlanFollowsClaimRequirements(t *testing.T) {
	class := testClass(instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a", "us-east-1b"))
	target := claimTarget{claim: scheduling.ClaimPlan{InstanceTypeOptions: []string{"m5.xlarge"}, Requirements: []scheduling.NodeSelectorRequirement{
		{Key: scheduling.LabelZone, Operator: scheduling.OpIn, Values: []string{"us-east-1b"}},
		{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"on-demand"}},
	}}, class: class}
	plan, err := buildLaunchPlan(context.Background(), &fakeTemplates{}, target, instance.Request{})
	require.NoError(t, err)
	assert.Empty(t, plan.Spot)
	require.Len(t, plan.OnDemand, 1)
	assert.Equal(t, "us-east-1b", plan.OnDemand[0].Zone)
}

func TestBuildLaunchPlanErrors(t *testing.T) {
	class := testClass(instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a"))
	target := claimTarget{claim: scheduling.ClaimPlan{InstanceTypeOptions: []string{"m5.xlarge"}}, class: class}
	_, err := buildLaunchPlan(context.Background(), &fakeTemplates{err: errors.New("boom")}, target, instance.Request{})
	assert.ErrorContains(t, err, "ensuring launch template for ami-amd64: boom")

	class.resolved.Status.AMIs = class.resolved.Status.AMIs[1:] // arm64 only
	plan, err := buildLaunchPlan(context.Background(), &fakeTemplates{}, target, instance.Request{})
	require.NoError(t, err)
	assert.Empty(t, plan.Spot, "no AMI fits an amd64 type")
	assert.Empty(t, plan.OnDemand)
}

func TestAMIRequirementsPreferCurrentImages(t *testing.T) {
	amd := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a")
	amis := testClass().resolved.Status.AMIs
	amis = append([]apis.AMIStatus{{ID: "ami-old", Deprecated: true, Requirements: amis[0].Requirements}}, amis...)
	choices, err := amiRequirements(amis)
	require.NoError(t, err)
	assert.Equal(t, "ami-amd64", pickAMI(choices, amd))

	choices, err = amiRequirements(amis[:1])
	require.NoError(t, err)
	assert.Equal(t, "ami-old", pickAMI(choices, amd), "a deprecated AMI is used when it is all there is")
}

// Pods that request EFA get templates with each instance type's EFA interfaces (one template per count);
// a claim that requests none launches without them.
func TestBuildLaunchPlanAttachesEFAInterfacesWhenRequested(t *testing.T) {
	efaType := func(name string, efa int64) *scheduling.InstanceType {
		it := instanceType(name, "amd64", 96, 30, "us-east-1a")
		it.Capacity.Extended = map[string]int64{scheduling.ResourceEFA: efa}
		it.Allocatable.Extended = map[string]int64{scheduling.ResourceEFA: efa}
		return it
	}
	class := testClass(efaType("p4d.24xlarge", 4), efaType("p5.48xlarge", 32))
	claim := scheduling.ClaimPlan{InstanceTypeOptions: []string{"p4d.24xlarge", "p5.48xlarge"},
		Requirements: []scheduling.NodeSelectorRequirement{{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"on-demand"}}},
		Requests:     scheduling.Resources{CPU: 1000, Extended: map[string]int64{scheduling.ResourceEFA: 1}}}
	templates := &fakeTemplates{}
	_, err := buildLaunchPlan(context.Background(), templates, claimTarget{claim: claim, class: class}, instance.Request{})
	require.NoError(t, err)
	var counts []int32
	for _, tpl := range templates.made {
		counts = append(counts, tpl.Options.EFAInterfaces)
	}
	assert.ElementsMatch(t, []int32{4, 32}, counts)

	claim.Requests.Extended = nil
	templates = &fakeTemplates{}
	_, err = buildLaunchPlan(context.Background(), templates, claimTarget{claim: claim, class: class}, instance.Request{})
	require.NoError(t, err)
	require.Len(t, templates.made, 1)
	assert.Zero(t, templates.made[0].Options.EFAInterfaces)
}

package provisioning

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// aliasAMIs are the AMIs an al2023 alias resolves to on amd64, with the requirements the resolver gives
// each variant (nodeclass.aliasParameters): standard, NVIDIA and Neuron.
func aliasAMIs() []apis.AMIStatus {
	arch := corev1.NodeSelectorRequirement{Key: scheduling.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}
	has := func(key string, yes bool) corev1.NodeSelectorRequirement {
		if yes {
			return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpExists}
		}
		return corev1.NodeSelectorRequirement{Key: key, Operator: corev1.NodeSelectorOpDoesNotExist}
	}
	return []apis.AMIStatus{
		{ID: "ami-standard", Requirements: []corev1.NodeSelectorRequirement{arch, has(scheduling.LabelInstanceGPUCount, false), has(scheduling.LabelInstanceAcceleratorCount, false)}},
		{ID: "ami-nvidia", Requirements: []corev1.NodeSelectorRequirement{arch, has(scheduling.LabelInstanceGPUCount, true)}},
		{ID: "ami-neuron", Requirements: []corev1.NodeSelectorRequirement{arch, has(scheduling.LabelInstanceAcceleratorCount, true)}},
	}
}

// motoCatalog is a catalog of the named instance types as moto describes them (real instance data:
// inf2's Neuron devices, g5's GPU), offered spot and on-demand in us-east-1a.
func motoCatalog(t *testing.T, names ...string) *instancetypes.Catalog {
	t.Helper()
	api := ec2.NewFromConfig(awstest.Shared(t).Config())
	var its []ec2types.InstanceType
	for _, n := range names {
		its = append(its, ec2types.InstanceType(n))
	}
	out, err := api.DescribeInstanceTypes(context.Background(), &ec2.DescribeInstanceTypesInput{InstanceTypes: its})
	require.NoError(t, err)
	require.Len(t, out.InstanceTypes, len(names))
	cat := &instancetypes.Catalog{}
	for _, it := range out.InstanceTypes {
		info, err := instancetypes.Info(it)
		require.NoError(t, err)
		cat.Types = append(cat.Types, instancetypes.Type{Info: info, Zones: []string{"us-east-1a"}, Spot: true, OnDemand: true})
	}
	return cat
}

// exoticWorldRun runs the provisioner once for pods over a catalog of a general-purpose, a metal, a GPU
// and a Neuron type (moto's instance data), the metal and Neuron ones priced below the general-purpose
// one, with a class resolved to the al2023 alias's AMIs, and returns the fleet calls and the run's report.
func exoticWorldRun(t *testing.T, pods ...corev1.Pod) (*fakeEC2Capacity, Report) {
	t.Helper()
	cat := motoCatalog(t, "m5.xlarge", "m5.metal", "inf2.xlarge", "g5.xlarge") // before the store: each moto user starts it afresh
	s := newStateStore(t)
	_, err := s.ApplyConfig(context.Background(), storedConfig(t, poolAndClass), false)
	require.NoError(t, err)
	fleet := &fakeEC2Capacity{capacity: map[instance.Offering]bool{
		{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot"}:   true,
		{InstanceType: "inf2.xlarge", Zone: "us-east-1a", CapacityType: "spot"}: true,
	}}
	resolved := nodeclass.Resolution{Ready: true, Subnets: []nodeclass.Subnet{{ID: "subnet-a", Zone: "us-east-1a"}},
		Status: apis.EC2NodeClassStatus{AMIs: aliasAMIs()}}
	p := New(Config{}, Dependencies{Store: s, Cluster: fakeCluster{snap: pendingSnapshot(pods...)},
		NodeClasses: &fakeResolver{res: map[string]nodeclass.Resolution{"default": resolved}},
		Prices:      flatPrices{"m5.xlarge": 0.192, "m5.metal": 0.1, "inf2.xlarge": 0.15, "g5.xlarge": 1.006}, Templates: &fakeTemplates{},
		Launcher: fleet, Now: time.Now, Rand: rand.New(rand.NewPCG(7, 7))})
	p.catalog = cat
	rep, err := p.Run(context.Background(), "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1, "%+v", rep)
	require.Len(t, fleet.requests, 1)
	if len(pods) > 0 && pods[0].Name == "web" {
		d, err := s.Decisions(context.Background(), "nodeclaim/"+rep.Claims[0].Name, 10)
		require.NoError(t, err)
		require.NotEmpty(t, d)
		assert.Equal(t, "exotic-instance-filter: g5.xlarge, inf2.xlarge, m5.metal", d[0].Details["filtered"],
			"the launch decision says what was left out")
	}
	return fleet, rep
}

func TestNeuronPodsLaunchThroughTheNeuronAMI(t *testing.T) {
	fleet, _ := exoticWorldRun(t, neuronPod("inference"))
	require.NotEmpty(t, fleet.requests[0].Overrides)
	for _, o := range fleet.requests[0].Overrides {
		assert.Equal(t, "inf2.xlarge", o.InstanceType)
		assert.Equal(t, "lt-ami-neuron-spot", o.LaunchTemplate, "the Neuron type goes through the alias's Neuron AMI")
	}
}

func TestFleetOverridesLeaveOutExoticTypesWhileOthersFit(t *testing.T) {
	fleet, _ := exoticWorldRun(t, pod("web", nil))
	var types []string
	for _, o := range fleet.requests[0].Overrides {
		types = append(types, o.InstanceType)
		assert.Equal(t, "lt-ami-standard-spot", o.LaunchTemplate)
	}
	assert.Equal(t, []string{"m5.xlarge"}, types, "metal, GPU and Neuron types are left out, cheaper or not, while a general-purpose type fits")
}

// neuronPod is an unschedulable pod that asks for one Neuron device.
func neuronPod(name string) corev1.Pod {
	p := pod(name, nil)
	one := resource.MustParse("1")
	p.Spec.Containers[0].Resources.Requests[scheduling.ResourceNeuron] = one
	p.Spec.Containers[0].Resources.Limits = corev1.ResourceList{scheduling.ResourceNeuron: one}
	return p
}

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// fullSubnetEC2 is moto's EC2 with one subnet out of addresses: moto's CreateFleet never answers
// InsufficientFreeAddressesInSubnet, so the fault is injected the way EC2 reports it, per override. The
// overrides in the full subnet come back as fleet errors; the others go to moto, which launches the first.
type fullSubnetEC2 struct {
	*ec2.Client
	full string

	mu        sync.Mutex
	intoFull  int // overrides asked for in the full subnet
	fleetRuns int
}

func (f *fullSubnetEC2) CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, optFns ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error) {
	f.mu.Lock()
	f.fleetRuns++
	f.mu.Unlock()
	var errs []ec2types.CreateFleetError
	rest := *in
	rest.LaunchTemplateConfigs = nil
	for _, cfg := range in.LaunchTemplateConfigs {
		kept := cfg
		kept.Overrides = nil
		for _, o := range cfg.Overrides {
			if aws.ToString(o.SubnetId) != f.full {
				kept.Overrides = append(kept.Overrides, o)
				continue
			}
			f.mu.Lock()
			f.intoFull++
			f.mu.Unlock()
			errs = append(errs, ec2types.CreateFleetError{ErrorCode: aws.String(instance.CodeInsufficientFreeAddresses),
				ErrorMessage: aws.String("There are not enough free addresses in subnet '" + f.full + "' to satisfy the requested number of instances."),
				LaunchTemplateAndOverrides: &ec2types.LaunchTemplateAndOverridesResponse{
					LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecification{LaunchTemplateName: cfg.LaunchTemplateSpecification.LaunchTemplateName},
					Overrides: &ec2types.FleetLaunchTemplateOverrides{InstanceType: o.InstanceType, SubnetId: o.SubnetId,
						AvailabilityZone: o.AvailabilityZone}}})
		}
		if len(kept.Overrides) > 0 {
			rest.LaunchTemplateConfigs = append(rest.LaunchTemplateConfigs, kept)
		}
	}
	if len(rest.LaunchTemplateConfigs) == 0 {
		return &ec2.CreateFleetOutput{FleetId: aws.String("fleet-full"), Errors: errs}, nil
	}
	out, err := f.Client.CreateFleet(ctx, &rest, optFns...)
	if err != nil {
		return nil, err
	}
	out.Errors = append(out.Errors, errs...)
	return out, nil
}

// A zone with two subnets keeps launching when the one with the most free addresses is full: the launch
// moves to the zone's other subnet, the full one is marked for every invocation, and the decision record
// names it. The old code treated the full subnet as the zone's offerings lacking capacity: every override
// of a pod pinned to the zone went into the one subnet, every one failed, and the pod waited.
func TestAFullSubnetMovesLaunchesToTheZonesOtherSubnet(t *testing.T) {
	w := newAWSWorld(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	subnets, err := w.ec2.DescribeSubnets(ctx, &ec2.DescribeSubnetsInput{})
	require.NoError(t, err)
	var vpc, big string
	for _, s := range subnets.Subnets {
		if aws.ToString(s.AvailabilityZone) == "us-east-1a" && aws.ToString(s.CidrBlock) == "10.0.0.0/20" {
			vpc, big = aws.ToString(s.VpcId), aws.ToString(s.SubnetId)
		}
	}
	require.NotEmpty(t, big, "the world's us-east-1a subnet")
	small, err := w.ec2.CreateSubnet(ctx, &ec2.CreateSubnetInput{VpcId: aws.String(vpc), CidrBlock: aws.String("10.0.32.0/24"),
		AvailabilityZone: aws.String("us-east-1a"), TagSpecifications: []ec2types.TagSpecification{{ResourceType: ec2types.ResourceTypeSubnet,
			Tags: []ec2types.Tag{{Key: aws.String("karpenter.sh/discovery"), Value: aws.String(cluster)}}}}})
	require.NoError(t, err)
	other := aws.ToString(small.Subnet.SubnetId)

	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	pinned := func(name string) {
		// One per node (anti-affinity), so the second pod needs a launch of its own beside the first's claim.
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "pinned"}},
			Spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelTopologyZone: "us-east-1a"},
				Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "pinned"}}, TopologyKey: corev1.LabelHostname}}}},
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
		_, err := cp.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	pinned("pinned-0")
	awaitUnschedulable(t, cp.Client, ns, 1)

	fault := &fullSubnetEC2{full: big}
	withFault := func(d *provisioning.Dependencies) {
		fault.Client = ec2.NewFromConfig(w.cfg)
		d.Launcher = instance.New(fault, cluster)
	}
	rep, err := newProvisionerDeps(t, w, cp, ns, withFault).Run(ctx, "run-full-subnet")
	require.NoError(t, err)
	assert.Empty(t, rep.LaunchFailures, "the zone's other subnet has addresses")
	require.Len(t, rep.Claims, 1)
	assert.Equal(t, "us-east-1a", rep.Claims[0].Zone)
	assert.Positive(t, fault.intoFull, "the first fleet went into the subnet with the most free addresses")

	out, err := w.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{rep.Claims[0].InstanceID}})
	require.NoError(t, err)
	require.Len(t, out.Reservations, 1)
	assert.Equal(t, other, aws.ToString(out.Reservations[0].Instances[0].SubnetId), "launched into the zone's other subnet")
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	require.Len(t, claims, 1)
	assert.Equal(t, other, claims[0].SubnetID, "the claim records the subnet its instance is in (subnet drift compares it)")

	marked, err := w.store.UnavailableSubnets(ctx)
	require.NoError(t, err)
	require.Len(t, marked, 1)
	assert.Equal(t, big, marked[0].SubnetID)
	assert.Equal(t, "us-east-1a", marked[0].Zone)
	offerings, err := w.store.UnavailableOfferings(ctx)
	require.NoError(t, err)
	assert.Empty(t, offerings, "no offering of the zone is out")

	decisions, err := w.store.Decisions(ctx, "nodeclaim/"+rep.Claims[0].Name, 10)
	require.NoError(t, err)
	require.NotEmpty(t, decisions)
	assert.Equal(t, "Launch", decisions[0].Kind)
	assert.Contains(t, decisions[0].Details["exhaustedSubnets"], fmt.Sprintf("subnet %s (us-east-1a) had no free IP address", big))

	// Another invocation (a new provisioner: nothing in memory) reads the mark and never asks for the full
	// subnet while it lasts.
	pinned("pinned-1")
	awaitUnschedulable(t, cp.Client, ns, 2) // the first pod's node has not joined
	before := fault.intoFull
	rep, err = newProvisionerDeps(t, w, cp, ns, withFault).Run(ctx, "run-full-subnet-2")
	require.NoError(t, err)
	assert.Empty(t, rep.LaunchFailures)
	require.Len(t, rep.Claims, 1)
	assert.Equal(t, "us-east-1a", rep.Claims[0].Zone)
	assert.Equal(t, before, fault.intoFull, "the marked subnet is passed over from the first fleet on")
}

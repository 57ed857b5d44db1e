package e2e

import (
	"context"
	"fmt"
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
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// TestProvisionerLaunchesIdenticalClaimsInOneBatch: pods that must each have a node of their own make
// identical claims; they are launched by one CreateFleet, and every instance ends up tagged with exactly
// one claim and every claim with exactly one instance.
func TestProvisionerLaunchesIdenticalClaimsInOneBatch(t *testing.T) {
	const n = 6
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	labels := map[string]string{"app": "spread"}
	for i := range n {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("spread-%d", i), Namespace: ns, Labels: labels},
			Spec: corev1.PodSpec{
				Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
					LabelSelector: &metav1.LabelSelector{MatchLabels: labels}, TopologyKey: corev1.LabelHostname}}}},
				Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
		_, err := cp.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	awaitUnschedulable(t, cp.Client, ns, n)

	rep, err := newProvisioner(t, w, cp, ns).Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Errors)
	require.Len(t, rep.Claims, n, "one claim per pod")

	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	require.Len(t, claims, n)
	batch := claims[0].Batch
	require.NotEmpty(t, batch, "identical claims are batched")
	for _, c := range claims {
		assert.Equal(t, batch, c.Batch, "one batch")
		assert.Equal(t, state.Launched, c.Lifecycle, c.Name)
	}

	out, err := w.ec2.DescribeInstances(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + instance.TagCluster), Values: []string{cluster}},
		{Name: aws.String("instance-state-name"), Values: []string{"pending", "running"}}}})
	require.NoError(t, err)
	claimOfInstance := map[string]string{}
	for _, r := range out.Reservations {
		for _, inst := range r.Instances {
			var claimTags []string
			for _, tag := range inst.Tags {
				switch aws.ToString(tag.Key) {
				case instance.TagNodeClaim:
					claimTags = append(claimTags, aws.ToString(tag.Value))
				case instance.TagBatch:
					assert.True(t, instance.InBatch(aws.ToString(tag.Value), batch))
				}
			}
			require.Len(t, claimTags, 1, "instance %s has exactly one claim tag", aws.ToString(inst.InstanceId))
			claimOfInstance[aws.ToString(inst.InstanceId)] = claimTags[0]
		}
	}
	require.Len(t, claimOfInstance, n, "one CreateFleet started exactly one instance per claim")
	for _, c := range claims {
		assert.Equal(t, c.Name, claimOfInstance[c.InstanceID], "claim %s and its instance name each other", c.Name)
	}
}

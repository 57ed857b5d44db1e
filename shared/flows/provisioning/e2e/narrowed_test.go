package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// teamsPool lets pods choose their team (Karpenter's documented pattern: a requirement with Exists, and
// workloads that pick a value with a nodeSelector).
const teamsPool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: teams
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
        - key: team
          operator: Exists
        - key: kubernetes.io/arch
          operator: In
          values: ["amd64"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
`

// createSelectingPod creates a pod of 1 CPU selecting labels and waits until kube-scheduler marks it
// Unschedulable.
func createSelectingPod(t *testing.T, c kubernetes.Interface, ns, name string, selector map[string]string) {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{NodeSelector: selector, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	_, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		for _, cond := range p.Status.Conditions {
			if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == corev1.PodReasonUnschedulable {
				return true
			}
		}
		return false
	}, 60*time.Second, 200*time.Millisecond, "kube-scheduler marks the pod Unschedulable")
}

// TestNarrowedLabelLaunchesOnce: a pending pod selecting team=a on a pool with "team Exists" gets one
// instance however many provisioner runs see it waiting, and its claim records the label and the
// instance type's labels, and its launch template's kubelet registers with team=a.
func TestNarrowedLabelLaunchesOnce(t *testing.T) {
	w := newAWSWorld(t)
	w.applyConfig(t, teamsPool)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	createSelectingPod(t, cp.Client, ns, "team-a", map[string]string{"team": "a"})
	p := newProvisioner(t, w, cp, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	const runs = 6
	launched := 0
	for run := 1; run <= runs; run++ {
		rep, err := p.Run(ctx, fmt.Sprintf("run-%d", run))
		require.NoError(t, err)
		assert.True(t, rep.Lease)
		assert.Equal(t, 1, rep.PendingPods, "run %d: the pod waits for its node", run)
		assert.Empty(t, rep.Errors, "run %d", run)
		assert.Empty(t, rep.Unschedulable, "run %d", run)
		launched += len(rep.Claims)
		if run > 1 {
			assert.Equal(t, 1, rep.InFlight, "run %d counts the booting claim", run)
		}
	}
	assert.Equal(t, 1, launched, "one claim over %d runs", runs)
	instances := w.claimedInstances(t)
	require.Len(t, instances, 1, "one instance in EC2 over %d runs", runs)

	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	require.Len(t, claims, 1)
	c := claims[0]
	assert.Equal(t, "teams", c.NodePool)
	assert.Equal(t, state.Launched, c.Lifecycle)
	family, size, _ := strings.Cut(c.InstanceType, ".")
	for k, v := range map[string]string{"team": "a", "karpenter.sh/nodepool": "teams", "karpenter.k8s.aws/ec2nodeclass": "default",
		"node.kubernetes.io/instance-type": c.InstanceType, "topology.kubernetes.io/zone": c.Zone, "karpenter.sh/capacity-type": c.CapacityType,
		"karpenter.k8s.aws/instance-family": family, "karpenter.k8s.aws/instance-size": size,
		"karpenter.k8s.aws/instance-category": family[:1], "kubernetes.io/arch": "amd64"} {
		assert.Equal(t, v, c.Labels[k], k)
	}
	for _, k := range []string{"karpenter.k8s.aws/instance-generation", "karpenter.k8s.aws/instance-cpu",
		"karpenter.k8s.aws/instance-memory", "karpenter.k8s.aws/instance-hypervisor"} {
		assert.NotEmpty(t, c.Labels[k], k)
	}

	// The launch template the instance came from: its user data registers the kubelet with team=a.
	inst := instances[c.Name]
	require.NotNil(t, inst.InstanceId)
	out, err := w.ec2.DescribeLaunchTemplates(ctx, &ec2.DescribeLaunchTemplatesInput{})
	require.NoError(t, err)
	withTeam := 0
	for _, lt := range out.LaunchTemplates {
		versions, err := w.ec2.DescribeLaunchTemplateVersions(ctx, &ec2.DescribeLaunchTemplateVersionsInput{LaunchTemplateId: lt.LaunchTemplateId})
		require.NoError(t, err)
		for _, v := range versions.LaunchTemplateVersions {
			data, err := base64.StdEncoding.DecodeString(aws.ToString(v.LaunchTemplateData.UserData))
			require.NoError(t, err)
			if strings.Contains(string(data), "team=a") {
				withTeam++
			}
		}
	}
	assert.Positive(t, withTeam, "a launch template's kubelet labels carry team=a")
}

package capacitybuffer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestPodTemplateBufferBecomesVirtualPodsOfItsTemplate(t *testing.T) {
	c := &fakeCluster{
		buffers:   []json.RawMessage{bufferJSON(t, "web", Spec{PodTemplateRef: &LocalObjectRef{Name: "web"}, Replicas: int32p(3)})},
		templates: map[string]*corev1.PodTemplate{"team/web": {ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team", Generation: 4}, Template: podTemplate("1", "2Gi")}},
	}
	set, err := Read(context.Background(), c)
	require.NoError(t, err)
	require.Len(t, set.Buffers, 1)
	b := set.Buffers[0]
	assert.True(t, b.Ready)
	assert.Equal(t, ReasonResolved, b.Reason)
	assert.Equal(t, int32(3), b.Replicas)
	assert.Equal(t, int64(4), *b.TemplateGeneration)
	pods := set.Pods()
	require.Len(t, pods, 3)
	for i, p := range pods {
		assert.Equal(t, fmt.Sprintf("capacity-buffer-web-%d", i+1), p.Name)
		assert.Equal(t, "team", p.Namespace)
		assert.Equal(t, fmt.Sprintf("uid-team-web-%d", i+1), string(p.UID), "the same uid every run")
		assert.Equal(t, map[string]string{"karpenter.sh/capacity-buffer-fake-pod": "true", "karpenter.sh/capacity-buffer-name": "web",
			"karpenter.sh/capacity-buffer-namespace": "team"}, p.Annotations, "Karpenter's annotations, not the template's do-not-disrupt")
		assert.Equal(t, map[string]string{"app": "web"}, p.Labels, "spread and affinity count them")
		assert.True(t, scheduling.IsBufferPod(p))
		assert.Equal(t, "team/web", BufferOf(p))
		assert.True(t, scheduling.IsProvisionable(p), "planned for as a pending pod")
		assert.Equal(t, VirtualPodPriority, *p.Spec.Priority)
		assert.Equal(t, map[string]string{"karpenter.sh/capacity-type": "on-demand"}, p.Spec.NodeSelector)
		assert.Len(t, p.Spec.Tolerations, 1)
		assert.Len(t, p.Spec.TopologySpreadConstraints, 1)
		require.Len(t, p.Spec.Volumes, 1, "the claim to a volume is dropped")
		assert.Equal(t, "config", p.Spec.Volumes[0].Name)
		assert.Equal(t, []corev1.VolumeMount{{Name: "config", MountPath: "/etc/web"}}, p.Spec.Containers[0].VolumeMounts)
		assert.Equal(t, int64(1000), scheduling.PodRequests(p).CPU)
	}
	assert.NotSame(t, &pods[0].Spec.Containers[0], &pods[1].Spec.Containers[0], "each pod has its own spec")
}

func TestBufferChunksFollowReplicasPercentageAndLimits(t *testing.T) {
	tmpl := podTemplate("1", "1Gi")
	for name, tc := range map[string]struct {
		spec     Spec
		scalable int32
		want     int32
	}{
		"replicas":                                    {Spec{Replicas: int32p(4)}, 10, 4},
		"percentage of the workload, rounded up":      {Spec{Percentage: int32p(25)}, 10, 3},
		"a small percentage is at least one":          {Spec{Percentage: int32p(1)}, 10, 1},
		"the larger of replicas and percentage":       {Spec{Replicas: int32p(2), Percentage: int32p(50)}, 10, 5},
		"limits cap replicas":                         {Spec{Replicas: int32p(10), Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m")}}, 0, 3},
		"limits alone fill up to them":                {Spec{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("5Gi")}}, 0, 5},
		"the tightest limit":                          {Spec{Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("2Gi")}}, 0, 2},
		"a limit on nothing requested limits nothing": {Spec{Replicas: int32p(4), Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("1")}}, 0, 4},
		"nothing asked keeps no room":                 {Spec{}, 10, 0},
		"percentage of a workload at zero":            {Spec{Percentage: int32p(50)}, 0, 0},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, tc.want, chunks(tc.spec, tc.scalable, &tmpl))
		})
	}
}

func TestScalableRefBufferTakesTheWorkloadsTemplateAndReplicas(t *testing.T) {
	for _, kind := range []string{KindDeployment, KindStatefulSet, KindReplicaSet} {
		t.Run(kind, func(t *testing.T) {
			c := &fakeCluster{
				buffers:   []json.RawMessage{bufferJSON(t, "web", Spec{ScalableRef: &ScalableRef{APIGroup: "apps", Kind: kind, Name: "web"}, Percentage: int32p(20)})},
				workloads: map[string]fakeWorkload{"team/web": {kind: kind, template: podTemplate("500m", "1Gi"), replicas: 12}},
			}
			set, err := Read(context.Background(), c)
			require.NoError(t, err)
			b := set.Buffers[0]
			require.True(t, b.Ready, b.Message)
			assert.Equal(t, int32(3), b.Replicas, "20% of 12, rounded up")
			assert.Nil(t, b.TemplateGeneration)
			require.Len(t, set.Pods(), 3)
			assert.Equal(t, int64(500), scheduling.PodRequests(set.Pods()[0]).CPU)
		})
	}
}

func TestBuffersThatCannotBeResolvedSayWhy(t *testing.T) {
	c := &fakeCluster{
		buffers: []json.RawMessage{
			bufferJSON(t, "a-no-template", Spec{PodTemplateRef: &LocalObjectRef{Name: "gone"}, Replicas: int32p(1)}),
			bufferJSON(t, "b-no-workload", Spec{ScalableRef: &ScalableRef{Kind: KindDeployment, Name: "gone"}, Replicas: int32p(1)}),
			bufferJSON(t, "c-both", Spec{PodTemplateRef: &LocalObjectRef{Name: "x"}, ScalableRef: &ScalableRef{Kind: KindDeployment, Name: "x"}}),
			bufferJSON(t, "d-neither", Spec{Replicas: int32p(1)}),
			bufferJSON(t, "e-kind", Spec{ScalableRef: &ScalableRef{Kind: "Job", Name: "x"}, Replicas: int32p(1)}),
			bufferJSON(t, "f-group", Spec{ScalableRef: &ScalableRef{APIGroup: "argoproj.io", Kind: "Rollout", Name: "x"}, Replicas: int32p(1)}),
			bufferJSON(t, "g-other-strategy", Spec{ProvisioningStrategy: strp("buffer.x-k8s.io/other"), Replicas: int32p(1)}),
		},
	}
	set, err := Read(context.Background(), c)
	require.NoError(t, err)
	got := map[string][2]string{}
	for _, b := range set.Buffers {
		assert.False(t, b.Ready, b.Object.Name)
		assert.Empty(t, b.Pods)
		got[b.Object.Name] = [2]string{b.Reason, b.Message}
	}
	assert.NotContains(t, got, "g-other-strategy", "another strategy is not Nodewright's to act on")
	assert.Equal(t, ReasonPodTemplateNotFound, got["a-no-template"][0])
	assert.Equal(t, ReasonScalableRefNotFound, got["b-no-workload"][0])
	assert.Contains(t, got["c-both"][1], "podTemplateRef and scalableRef are both set")
	assert.Contains(t, got["d-neither"][1], "Neither podTemplateRef nor scalableRef")
	assert.Contains(t, got["e-kind"][1], `spec.scalableRef.kind: "Job" is not supported`)
	assert.Contains(t, got["f-group"][1], `spec.scalableRef.apiGroup: "argoproj.io" is not supported`)
	assert.Empty(t, set.Unresolved, "an absent template is known: no room")
}

func TestReadIsBounded(t *testing.T) {
	c := &fakeCluster{templates: map[string]*corev1.PodTemplate{"team/web": {Template: podTemplate("1", "1Gi")}}}
	for i := range MaxBuffers + 5 {
		c.buffers = append(c.buffers, bufferJSON(t, fmt.Sprintf("web-%03d", i), Spec{PodTemplateRef: &LocalObjectRef{Name: "web"}, Replicas: int32p(20)}))
	}
	set, err := Read(context.Background(), c)
	require.NoError(t, err)
	assert.Len(t, set.Buffers, MaxBuffers, "one page of MaxBuffers")
	assert.Equal(t, 1, c.gets, "buffers naming one template read it once")
	assert.Len(t, set.Pods(), MaxVirtualPods)
	require.Len(t, set.Problems, 2)
	assert.Contains(t, set.Problems[0], "more than 100 CapacityBuffers")
	assert.Contains(t, set.Problems[1], "50 CapacityBuffers keep room for fewer chunks than they ask, the first team/web-050 (0 of 20)")
}

func TestReadErrors(t *testing.T) {
	_, err := Read(context.Background(), &fakeCluster{listErr: fmt.Errorf("listing: %w", kube.ErrUnavailable)})
	assert.True(t, kube.IsUnavailable(err), "a list that fails is the read's error")

	set, err := Read(context.Background(), &fakeCluster{listErr: fmt.Errorf("listing: %w", kube.ErrNotFound)})
	require.NoError(t, err, "a cluster without the CapacityBuffer API has no buffers")
	assert.Empty(t, set.Buffers)

	c := &fakeCluster{buffers: []json.RawMessage{bufferJSON(t, "web", Spec{PodTemplateRef: &LocalObjectRef{Name: "web"}, Replicas: int32p(1)})},
		readErr: errors.New("throttled")}
	set, err = Read(context.Background(), c)
	require.NoError(t, err)
	assert.Equal(t, []string{"team/web"}, set.Unresolved, "room unknown")
	assert.Equal(t, ReasonResolutionFailed, set.Buffers[0].Reason)
}

func strp(s string) *string { return &s }

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// installBufferCRD creates the CapacityBuffer CRD Nodewright prints (capacitybuffer.CRD), once per API
// server, and waits until namespace ns serves CapacityBuffers.
func installBufferCRD(t *testing.T, c kubernetes.Interface, ns string) {
	t.Helper()
	ctx := context.Background()
	body, err := yaml.YAMLToJSON(capacitybuffer.CRD)
	require.NoError(t, err)
	err = c.CoreV1().RESTClient().Post().AbsPath("/apis/apiextensions.k8s.io/v1/customresourcedefinitions").
		SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
	if err != nil && !kube.IsConflict(err) {
		require.Contains(t, err.Error(), "already exists")
	}
	require.Eventually(t, func() bool {
		_, _, err := kube.NewBuffers(c, ns).ListCapacityBuffers(ctx, 1)
		return err == nil
	}, 30*time.Second, 200*time.Millisecond, "CapacityBuffers served")
}

// bufferStatus reads the status of CapacityBuffer ns/name.
func bufferStatus(t *testing.T, c kubernetes.Interface, ns, name string) capacitybuffer.Status {
	t.Helper()
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/apis/autoscaling.x-k8s.io/v1beta1/namespaces", ns, "capacitybuffers", name).
		SetHeader("Accept", "application/json").Do(context.Background()).Raw()
	require.NoError(t, err)
	var b capacitybuffer.CapacityBuffer
	require.NoError(t, json.Unmarshal(raw, &b))
	return b.Status
}

func provisioningCondition(st capacitybuffer.Status) string {
	for _, c := range st.Conditions {
		if c.Type == capacitybuffer.ConditionProvisioning {
			return string(c.Status) + "/" + c.Reason
		}
	}
	return ""
}

// chunk is the buffer's pod shape, the same as createPendingPods' pods: 1 CPU and 1.5Gi.
var chunk = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("1536Mi")}

// TestCapacityBufferLaunchesRoomThatAScaleUpTakesWithoutALaunch: with the CapacityBuffer gate on, a
// buffer of two chunks in a cluster without room makes the provisioner launch one claim for its
// virtual pods (and say RequiresNewCapacity); once that node joins the buffer fits
// (FitsExistingCapacity) and nothing more is launched; a scale-up of the buffer's size is bound by
// kube-scheduler to that node with no launch; the next run launches room for the buffer again.
func TestCapacityBufferLaunchesRoomThatAScaleUpTakesWithoutALaunch(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)
	installBufferCRD(t, client, ns)

	s := settings.Default()
	s.FeatureGates.CapacityBuffer = true
	item, err := state.SettingsItem(s)
	require.NoError(t, err)
	_, err = w.store.PutConfig(ctx, item)
	require.NoError(t, err)

	_, err = client.CoreV1().PodTemplates(ns).Create(ctx, &corev1.PodTemplate{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: chunk}}}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	buffer := fmt.Sprintf(`{"apiVersion":"autoscaling.x-k8s.io/v1beta1","kind":"CapacityBuffer","metadata":{"name":"web","namespace":%q},
		"spec":{"podTemplateRef":{"name":"web"},"replicas":2}}`, ns)
	require.NoError(t, client.CoreV1().RESTClient().Post().AbsPath("/apis/autoscaling.x-k8s.io/v1beta1/namespaces", ns, "capacitybuffers").
		SetHeader("Content-Type", "application/json").Body([]byte(buffer)).Do(ctx).Error())

	p := newProvisionerDeps(t, w, cp, ns, func(d *provisioning.Dependencies) { d.Buffers = kube.NewBuffers(client, ns) })

	// 1. No room: one claim for the buffer's two virtual pods.
	rep, err := p.Run(ctx, "run-1")
	require.NoError(t, err)
	t.Logf("first run: %+v", rep)
	assert.Empty(t, rep.Errors)
	assert.Equal(t, 0, rep.PendingPods)
	assert.Equal(t, 2, rep.BufferPods)
	require.Len(t, rep.Claims, 1)
	launched := rep.Claims[0]
	assert.Equal(t, 2, launched.BufferPods)
	assert.Empty(t, launched.PodUIDs)
	require.Len(t, w.claimedInstances(t), 1)
	st := bufferStatus(t, client, ns, "web")
	assert.Equal(t, "False/RequiresNewCapacity", provisioningCondition(st))
	require.NotNil(t, st.Replicas)
	assert.Equal(t, int32(2), *st.Replicas)
	assert.Equal(t, "web", st.PodTemplateRef.Name)

	// 2. The claim's Node joins with room for exactly the buffer: it fits, nothing is launched.
	claim, err := w.store.GetClaim(ctx, launched.Name)
	require.NoError(t, err)
	node := "buffer-node-" + ns
	kubetest.ReadyNode(t, client, node, corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"),
		corev1.ResourceMemory: resource.MustParse("3Gi"), corev1.ResourcePods: resource.MustParse("110")})
	patch, err := json.Marshal(map[string]any{
		"metadata": map[string]any{"labels": map[string]string{scheduling.LabelNodePool: "default", scheduling.LabelNodeInitalized: "true",
			corev1.LabelArchStable: "amd64", corev1.LabelOSStable: "linux"}},
		"spec": map[string]any{"providerID": claim.ProviderID}})
	require.NoError(t, err)
	_, err = client.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
	rep, err = p.Run(ctx, "run-2")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims, "the buffer's room is on the joined node")
	assert.Equal(t, "True/FitsExistingCapacity", provisioningCondition(bufferStatus(t, client, ns, "web")))

	// 3. A scale-up of the buffer's size binds to that room with no launch.
	for i := range 2 {
		_, err := client.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("scale-up-%d", i)},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: chunk}}}}}, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		bound := 0
		for _, p := range pods.Items {
			if p.Spec.NodeName == node {
				bound++
			}
		}
		return bound == 2
	}, time.Minute, 200*time.Millisecond, "kube-scheduler binds the scale-up to the buffer's room")
	require.Len(t, w.claimedInstances(t), 1, "bound without a launch")

	// 4. The room is taken: the next run launches room for the buffer again.
	rep, err = p.Run(ctx, "run-3")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.PendingPods, "the scale-up is bound, nothing of it is pending")
	require.Len(t, rep.Claims, 1, "the buffer is refilled")
	assert.Equal(t, 2, rep.Claims[0].BufferPods)
	assert.Equal(t, "False/RequiresNewCapacity", provisioningCondition(bufferStatus(t, client, ns, "web")))
}

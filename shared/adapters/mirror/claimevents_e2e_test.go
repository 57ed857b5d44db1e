package mirror_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/mirror/mirrortest"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// described lists the Events `kubectl describe nodeclaims.nodewright.sh name` shows: those whose
// involvedObject has the mirror's kind, name and UID.
func described(t *testing.T, kc kubernetes.Interface, name string, uid types.UID) []corev1.Event {
	t.Helper()
	list, err := kc.CoreV1().Events("").List(context.Background(), metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.kind": mirror.NodeClaims.Kind, "involvedObject.name": name, "involvedObject.uid": string(uid)}.String()})
	require.NoError(t, err)
	return list.Items
}

// TestNodeClaimEventsShowInKubectlDescribe publishes NodeClaim Events as the functions do, against the
// real API server: as the disruption function (its own role, which may only `get` a NodeClaim mirror),
// whose publisher learns the mirror's UID with a metadata GET, and as the lifecycle function, whose
// publisher takes it from its own writer's memory. `kubectl describe`'s lookup (involvedObject kind, name
// and UID) finds both. An Event about a claim whose mirror does not exist yet is published all the same,
// without UID, and fails nothing.
func TestNodeClaimEventsShowInKubectlDescribe(t *testing.T) {
	ctx := context.Background()
	cp := kubetest.Shared(t, kubetest.Options{})
	mirrortest.Install(t, cp)
	kc, err := kubernetes.NewForConfig(cp.Config)
	require.NoError(t, err)

	// A claim's mirror, written by the lifecycle function.
	writer := mirrortest.Writer(t, cp)
	name := fmt.Sprintf("default-ev%d", time.Now().UnixNano()%1_000_000)
	claim := state.Claim{Name: name, NodePool: "default", NodeClass: "default", InstanceType: "m5.large", Zone: "us-east-1a",
		CapacityType: "on-demand", Lifecycle: state.Launched, InstanceID: "i-0123456789abcdef0",
		ProviderID: "aws:///us-east-1a/i-0123456789abcdef0", CreatedAt: time.Now().UTC()}
	rep, err := writer.Sync(ctx, []mirror.Object{mirror.NodeClaim(mirror.Claim{Record: claim})}, false)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Written, "%v", rep.Errors)
	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	obj, err := admin.Resource(mirror.NodeClaims.Resource()).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	uid := obj.GetUID()

	// The disruption function: its role and its publisher, as functions/disruption wires them.
	user := "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-disruption/test"
	require.NoError(t, footprint.Grant(ctx, kc, footprint.Disruption, user))
	cfg := cp.As(user, footprint.Disruption.Group())
	fn, err := kube.NewClientset(cfg)
	require.NoError(t, err)
	events, err := mirror.NewConfigClaimEvents(cfg, kube.NewRecorder(fn, kube.RecorderOptions{Instance: "disruption"}), nil)
	require.NoError(t, err)
	wrote, err := events.Publish(ctx, kube.Event{Object: mirror.NodeClaimObject(name, ""), Reason: kube.ReasonDisruptionTerminating,
		Message: "disrupting node via Underutilized: test"})
	require.NoError(t, err)
	require.True(t, wrote)
	require.Eventually(t, func() bool { return len(described(t, kc, name, uid)) == 1 }, 10*time.Second, 100*time.Millisecond,
		"kubectl describe nodeclaims.nodewright.sh finds the disruption function's Event")
	got := described(t, kc, name, uid)[0]
	assert.Equal(t, mirror.APIVersion, got.InvolvedObject.APIVersion)
	assert.Equal(t, string(kube.ReasonDisruptionTerminating), got.Reason)

	// A claim with no mirror yet: the Event goes out without UID.
	missing := name + "x"
	wrote, err = events.Publish(ctx, kube.Event{Object: mirror.NodeClaimObject(missing, ""), Type: corev1.EventTypeWarning,
		Reason: kube.ReasonInsufficientCapacityError, Message: "no capacity"})
	require.NoError(t, err, "an Event whose mirror does not exist is still published")
	assert.True(t, wrote)
	require.Eventually(t, func() bool {
		list, err := kc.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + missing})
		return err == nil && len(list.Items) == 1 && list.Items[0].InvolvedObject.UID == ""
	}, 10*time.Second, 100*time.Millisecond, "kubectl get events lists it")

	// The lifecycle function: the UID from its writer's memory (the next sweep's catch-up learns it).
	_, err = writer.Sync(ctx, []mirror.Object{mirror.NodeClaim(mirror.Claim{Record: claim})}, true)
	require.NoError(t, err)
	require.Equal(t, uid, writer.UID(name), "the writer knows its mirror's UID")
	lc, err := kube.NewClientset(mirrortest.LifecycleConfig(cp))
	require.NoError(t, err)
	lifecycleEvents := mirror.NewClaimEvents(kube.NewRecorder(lc, kube.RecorderOptions{Instance: "lifecycle"}), writer, nil)
	_, err = lifecycleEvents.Publish(ctx, kube.Event{Object: mirror.NodeClaimObject(name, ""), Type: corev1.EventTypeWarning,
		Reason: kube.ReasonFailedConsistencyCheck, Message: "NodeClaim: expected 8Gi of memory, found 4Gi"})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return len(described(t, kc, name, uid)) == 2 }, 10*time.Second, 100*time.Millisecond,
		"kubectl describe finds the lifecycle function's Event too")
}

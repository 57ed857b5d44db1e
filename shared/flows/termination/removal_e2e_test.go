package termination

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// patchNode merge-patches the world's Node.
func (w *world) patchNode(patch map[string]any) {
	w.t.Helper()
	body, err := json.Marshal(patch)
	require.NoError(w.t, err)
	_, err = w.kube.CoreV1().Nodes().Patch(w.ctx, w.node, types.MergePatchType, body, metav1.PatchOptions{})
	require.NoError(w.t, err)
}

// podsOnNode names the pods bound to the world's Node.
func (w *world) podsOnNode() []string {
	list, err := w.kube.CoreV1().Pods(w.ns).List(w.ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", w.node).String()})
	require.NoError(w.t, err)
	var out []string
	for _, p := range list.Items {
		out = append(out, p.Name)
	}
	return out
}

// decisionAt is when the claim's first decision of kind was recorded.
func (w *world) decisionAt(kind string) time.Time {
	ds, err := w.store.Decisions(w.ctx, "nodeclaim/"+w.claim, 100)
	require.NoError(w.t, err)
	var at time.Time
	for _, d := range ds {
		if d.Kind == kind && (at.IsZero() || d.At.Before(at)) {
			at = d.At
		}
	}
	require.False(w.t, at.IsZero(), "a %s decision for claim %s", kind, w.claim)
	return at
}

// A claim disrupted before registration recorded its Node: the Node is found by its provider id and
// drained before the instance is terminated, and deleted after.
func TestNodeFoundByProviderIDIsDrainedBeforeTermination(t *testing.T) {
	cases := []struct {
		name  string
		claim func(*state.Claim)
	}{
		{"launched claim with a provider id", func(c *state.Claim) { c.Lifecycle, c.NodeName = state.Launched, "" }},
		{"draining claim with only zone and instance", func(c *state.Claim) {
			c.Lifecycle, c.NodeName, c.ProviderID = state.Draining, "", ""
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, worldOptions{claim: tc.claim})
			w.patchNode(map[string]any{"spec": map[string]any{"providerID": "aws:///us-east-1a/" + w.instance}})
			w.replicaSet("web", 2, 1)
			w.waitReady(2)

			w.request("Drifted", nil)
			w.pumpUntil(90*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })

			c, err := w.store.GetClaim(w.ctx, w.claim)
			require.NoError(t, err)
			assert.Equal(t, w.node, c.NodeName, "the Node's name is recorded on the claim")
			order, at := w.kubelet.left()
			require.Len(t, order, 2, "every pod is evicted: %v", order)
			terminating := w.decisionAt("Terminating")
			for _, name := range order {
				assert.True(t, at[name].Before(terminating), "%s left at %s, before the instance was terminated at %s", name, at[name], terminating)
			}
			assert.Contains(t, w.decisionKinds(), "Drained")
			assert.Equal(t, "terminated", w.instanceState())
			assert.True(t, w.nodeGone(), "the Node is deleted after the instance")
		})
	}
}

// An eviction refused by something other than a budget — here a fail-closed admission webhook that
// cannot be reached — blocks the drain like a budget would: the request is re-driven, never a batch
// failure on its way to the dead-letter queue, and the drain finishes once evictions go through.
func TestFailClosedEvictionWebhookBlocksAndRedrives(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.replicaSet("web", 1, 1)
	w.waitReady(1)
	pod := w.podsOnNode()[0]

	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(2)
	url := "https://127.0.0.1:1/deny" // nothing listens there: every call fails, and so does the eviction
	hook, err := w.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(w.ctx,
		&admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "deny-evictions-" + w.ns},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name:         "deny-evictions.nodewright.test",
				ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url},
				Rules: []admissionregistrationv1.RuleWithOperations{{
					Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
					Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
						Resources: []string{"pods/eviction"}},
				}},
				FailurePolicy:           &fail,
				SideEffects:             &none,
				TimeoutSeconds:          &timeout,
				AdmissionReviewVersions: []string{"v1"},
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
					corev1.LabelMetadataName: w.ns}},
			}},
		}, metav1.CreateOptions{})
	require.NoError(t, err)
	removeHook := func() {
		_ = w.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(w.ctx, hook.Name, metav1.DeleteOptions{})
	}
	t.Cleanup(removeHook)
	require.Eventually(t, func() bool {
		err := w.kube.PolicyV1().Evictions(w.ns).Evict(w.ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: w.ns},
			DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}})
		return err != nil && strings.Contains(err.Error(), "deny-evictions")
	}, 30*time.Second, 100*time.Millisecond, "the API server calls the webhook on evictions")

	w.request("Drifted", nil)
	handled, failures := 0, 0
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); {
		ev, resp := w.pumpOnce()
		handled += len(ev.Records)
		failures += len(resp.BatchItemFailures)
	}
	assert.Zero(t, failures, "a refused eviction is no batch failure")
	assert.GreaterOrEqual(t, handled, 2, "the blocked request is re-driven")
	assert.Positive(t, w.stats.Redriven)
	assert.True(t, w.claimIs(state.Draining))
	assert.Equal(t, []string{pod}, w.podsOnNode(), "the pod stays")
	assert.Positive(t, w.stats.Evictions["error"], "the refusals are counted: %v", w.stats.Evictions)
	assert.Contains(t, w.decisionKinds(), "DrainBlocked")
	ds, err := w.store.Decisions(w.ctx, "nodeclaim/"+w.claim, 100)
	require.NoError(t, err)
	for _, d := range ds {
		if d.Kind == "DrainBlocked" {
			assert.Contains(t, d.Message, "could not be evicted")
			assert.Contains(t, d.Details["errors"], "deny-evictions")
		}
	}
	events, err := w.kube.CoreV1().Events("default").List(w.ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", w.node).String()})
	require.NoError(t, err)
	found := false
	for _, e := range events.Items {
		found = found || (e.Reason == string(kube.ReasonFailedDraining) && strings.Contains(e.Message, "deny-evictions"))
	}
	assert.True(t, found, "a FailedDraining Event on the Node carries the webhook's error")
	assert.Equal(t, "running", w.instanceState())

	removeHook()
	w.pumpUntil(90*time.Second, "the claim to be deleted once evictions go through", func() bool { return w.claimIs(state.Deleted) })
	assert.Equal(t, "terminated", w.instanceState())
	assert.True(t, w.nodeGone())
}

// kubectl delete node on a Node carrying Nodewright's finalizer: the Node stays while it drains and the
// instance terminates, then the finalizer comes off and the Node is gone.
func TestDeletedNodeWithFinalizerIsGoneAfterTermination(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.patchNode(map[string]any{"metadata": map[string]any{"finalizers": []string{kube.TerminationFinalizer}}})
	t.Cleanup(func() { // a failed test must not leave a Node behind that nothing releases
		_, _ = w.kube.CoreV1().Nodes().Patch(w.ctx, w.node, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	})
	w.replicaSet("web", 2, 1)
	w.waitReady(2)
	require.NoError(t, w.kube.CoreV1().Nodes().Delete(w.ctx, w.node, metav1.DeleteOptions{}), "kubectl delete node")
	n, err := w.kube.CoreV1().Nodes().Get(w.ctx, w.node, metav1.GetOptions{})
	require.NoError(t, err, "the finalizer holds the Node")
	require.NotNil(t, n.DeletionTimestamp)

	w.request("NodeDeleted", nil)
	w.pumpUntil(90*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })
	order, _ := w.kubelet.left()
	assert.Len(t, order, 2, "the deleting Node is drained first: %v", order)
	assert.Equal(t, "terminated", w.instanceState())
	require.Eventually(t, w.nodeGone, 10*time.Second, 100*time.Millisecond, "the Node is gone once the finalizer is off")
}

// The instance is terminated while the drain is blocked: nothing runs the pods any more, so the drain is
// over; the pods are forgotten and the Node deleted.
func TestTerminatedInstanceEndsABlockedDrain(t *testing.T) {
	w := newWorld(t, worldOptions{})
	w.replicaSet("web", 2, 1)
	w.waitReady(2)
	w.pdb("web", intstr.FromInt32(0))
	// Once the instance is gone its pods are force-deleted. The API server writes a force delete in two
	// steps (deletionTimestamp with a zero grace period, then the removal); a finalizer holds one pod
	// between them, as a slow API server may for a moment, so the test sees a forgotten pod terminating
	// and must not take it for an eviction.
	held := w.podsOnNode()[0]
	w.holdWithFinalizer(held)

	w.request("Underutilized", nil)
	w.pumpFor(4 * time.Second)
	require.True(t, w.claimIs(state.Draining), "the budget blocks the drain")
	require.Len(t, w.podsOnNode(), 2)

	_, err := w.ec2.TerminateInstances(w.ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{w.instance}})
	require.NoError(t, err, "EC2 terminates the instance (a spot reclaim, a retirement)")
	w.pumpUntil(60*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })

	assert.True(t, w.nodeGone())
	kinds := w.decisionKinds()
	assert.Contains(t, kinds, "InstanceGone")
	assert.NotContains(t, kinds, "Drained")
	assert.Empty(t, w.kubelet.drained(), "no pod was evicted: the budget held until the instance was gone")
	assert.Zero(t, w.stats.Evictions["200"], "no eviction was granted")
	require.Eventually(t, func() bool {
		for _, name := range w.podsOnNode() {
			if strings.HasPrefix(name, "web-") {
				p, err := w.kube.CoreV1().Pods(w.ns).Get(w.ctx, name, metav1.GetOptions{})
				if err == nil && p.DeletionTimestamp == nil {
					return false
				}
			}
		}
		return true
	}, 10*time.Second, 100*time.Millisecond, "the pods of the terminated instance are forgotten")
}

// holdFinalizer keeps a deleted pod listed (terminating) until the test ends.
const holdFinalizer = "nodewright.sh/test-hold"

// holdWithFinalizer adds holdFinalizer to the pod and takes it off when the test ends.
func (w *world) holdWithFinalizer(pod string) {
	w.t.Helper()
	patch := func(finalizers []string) error {
		body, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": finalizers}})
		if err != nil {
			return err
		}
		_, err = w.kube.CoreV1().Pods(w.ns).Patch(context.Background(), pod, types.MergePatchType, body, metav1.PatchOptions{})
		return err
	}
	require.NoError(w.t, patch([]string{holdFinalizer}))
	w.t.Cleanup(func() {
		if err := patch(nil); err != nil && !apierrors.IsNotFound(err) {
			w.t.Errorf("taking the test finalizer off pod %s: %v", pod, err)
		}
	})
}

// A claim whose launch never recorded an instance: the instance tagged with its name is terminated, and
// with nothing else to wait for the claim is deleted; the Node of another instance is not touched.
func TestClaimWithoutInstanceIDIsDeleted(t *testing.T) {
	w := newWorld(t, worldOptions{claim: func(c *state.Claim) {
		c.Lifecycle, c.InstanceID, c.NodeName, c.ProviderID, c.Zone = state.Pending, "", "", "", ""
	}})
	w.request("Drifted", nil)
	w.pumpUntil(30*time.Second, "the claim to be deleted", func() bool { return w.claimIs(state.Deleted) })
	assert.Equal(t, "terminated", w.instanceState(), "the instance the claim's record did not name")
	assert.False(t, w.nodeGone())
}

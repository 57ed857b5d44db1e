package sandbox

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

// mirrorObject is a mirror as the API server returns it: kind, name, UID and status conditions.
func mirrorObject(k mirror.Kind, name string, uid types.UID, conds ...map[string]any) *unstructured.Unstructured {
	list := make([]any, len(conds))
	for i, c := range conds {
		list[i] = c
	}
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mirror.APIVersion, "kind": k.Kind,
		"metadata": map[string]any{"name": name, "uid": string(uid)}, "status": map[string]any{"conditions": list}}}
	return o
}

func event(kind, name string, uid types.UID, reason, message string) corev1.Event {
	return corev1.Event{InvolvedObject: corev1.ObjectReference{APIVersion: mirror.APIVersion, Kind: kind, Name: name, UID: uid},
		Type: corev1.EventTypeWarning, Reason: reason, Message: message}
}

// The report's brokenNodeClass and its target: met only when the class mirror's Ready is False with a
// reason, `kubectl describe` of the NodePool mirror finds a NodeClassNotReady Event (kind, name and UID
// all matching) and the NodePool mirror's NodeClassReady is False.
func TestBrokenNodeClassReportAndTarget(t *testing.T) {
	const name = BrokenClassName
	class := mirrorObject(mirror.EC2NodeClasses, name, "class-uid",
		map[string]any{"type": "SubnetsReady", "status": "False", "reason": "SubnetsNotFound"},
		map[string]any{"type": "Ready", "status": "False", "reason": "SubnetsNotFound", "message": "subnetSelectorTerms match no subnet"})
	pool := mirrorObject(mirror.NodePools, name, "pool-uid",
		map[string]any{"type": "NodeClassReady", "status": "False", "reason": "SubnetsNotFound"},
		map[string]any{"type": "Ready", "status": "False", "reason": "SubnetsNotFound"})
	notReady := event("NodePool", name, "pool-uid", string(kube.ReasonNodeClassNotReady), "NodePool missing-subnet launches nothing")
	classWarning := event("EC2NodeClass", name, "class-uid", "SubnetsNotFound", "EC2NodeClass missing-subnet is not ready")

	b := brokenNodeClassOf(name, class, pool, []corev1.Event{classWarning}, []corev1.Event{notReady})
	assert.Equal(t, BrokenNodeClass{Name: name, ReadyStatus: "False", ReadyReason: "SubnetsNotFound", NodeClassNotReadyEvent: true,
		ClassEvent: true, NodePoolNodeClassReady: "False", EventMessage: notReady.Message}, b)
	assert.True(t, b.Met())

	cases := map[string]struct {
		class, pool             *unstructured.Unstructured
		classEvents, poolEvents []corev1.Event
	}{
		"no mirrors yet": {},
		"no Event yet (the pass that created the mirrors)": {class: class, pool: pool},
		"the Event names the karpenter.sh NodePool, without UID": {class: class, pool: pool,
			poolEvents: []corev1.Event{event("NodePool", name, "", string(kube.ReasonNodeClassNotReady), "")}},
		"the Event names an earlier mirror of the same name": {class: class, pool: pool,
			poolEvents: []corev1.Event{event("NodePool", name, "old-uid", string(kube.ReasonNodeClassNotReady), "")}},
		"the Event is another reason": {class: class, pool: pool,
			poolEvents: []corev1.Event{event("NodePool", name, "pool-uid", string(kube.ReasonNoCompatibleInstanceTypes), "")}},
		"the class is ready": {class: mirrorObject(mirror.EC2NodeClasses, name, "class-uid", map[string]any{"type": "Ready", "status": "True", "reason": "Ready"}),
			pool: pool, poolEvents: []corev1.Event{notReady}},
		"the class's Ready is Unknown": {class: mirrorObject(mirror.EC2NodeClasses, name, "class-uid", map[string]any{"type": "Ready", "status": "Unknown", "reason": "AwaitingReconciliation"}),
			pool: pool, poolEvents: []corev1.Event{notReady}},
		"the pool's NodeClassReady is not False": {class: class, pool: mirrorObject(mirror.NodePools, name, "pool-uid",
			map[string]any{"type": "NodeClassReady", "status": "Unknown", "reason": "NodeClassReadinessUnknown"}), poolEvents: []corev1.Event{notReady}},
	}
	for what, c := range cases {
		b := brokenNodeClassOf(name, c.class, c.pool, c.classEvents, c.poolEvents)
		assert.False(t, b.Met(), "%s: %+v", what, b)
	}
	// The class's own Warning is reported but not required: the issue asks for the NodePool's Event.
	b = brokenNodeClassOf(name, class, pool, nil, []corev1.Event{notReady})
	assert.False(t, b.ClassEvent)
	assert.True(t, b.Met())
}

// The provisioner's report that the scenario's broken NodePool cannot launch is expected; other
// problems are errors.
func TestOnlyTheBrokenPoolsOwnProblemIsExpected(t *testing.T) {
	assert.True(t, isBrokenClassProblem(errors.New("provisioner: NodePool missing-subnet cannot launch: EC2NodeClass missing-subnet is not ready: SubnetsNotFound")))
	assert.True(t, isBrokenClassProblem(errors.New("provisioner: EC2NodeClass missing-subnet is not ready: not ready: [SubnetsReady]")))
	assert.False(t, isBrokenClassProblem(errors.New("provisioner: NodePool default cannot launch: EC2NodeClass default is not ready: SubnetsNotFound")))
	assert.False(t, isBrokenClassProblem(errors.New("provisioner: EC2NodeClass default is not ready: not ready: [SubnetsReady]")))
	assert.False(t, isBrokenClassProblem(errors.New("disruption (mirrors): EC2NodeClass mirrors: forbidden")))
}

package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNewPodFailure(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	f := newPodFailure(pod, "dropped the 1 heaviest preferred node affinity term(s)", []Rejection{
		{Constraint: ConstraintResources, Detail: "2 existing node(s) rejected it"},
		{NodePool: "default", Constraint: ConstraintTaint, Detail: "did not tolerate taint x:NoSchedule"},
	})
	assert.Equal(t, "ns/p", f.PodName)
	assert.Equal(t, "2 existing node(s) rejected it; nodepool default: did not tolerate taint x:NoSchedule (after relaxing: dropped the 1 heaviest preferred node affinity term(s))", f.Reason)
}

func TestNodeRejections(t *testing.T) {
	var n nodeRejections
	_, ok := n.rejection()
	assert.False(t, ok)
	n.add(ConstraintResources, "node a: not enough [cpu]")
	n.add(ConstraintTaint, "node b: did not tolerate taint x")
	n.add(ConstraintTaint, "node c: did not tolerate taint y")
	r, ok := n.rejection()
	assert.True(t, ok)
	assert.Equal(t, ConstraintTaint, r.Constraint, "the most common cause is reported")
	assert.Equal(t, "3 existing node(s) rejected it: 2 taint (e.g. node b: did not tolerate taint x), 1 resources (e.g. node a: not enough [cpu])", r.Detail)
}

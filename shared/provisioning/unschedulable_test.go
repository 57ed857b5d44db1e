package provisioning

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/scheduling"
)

func TestFailureMemoRecordsNewVerdictsOnly(t *testing.T) {
	var m failureMemo
	t0 := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	pod := func(uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: k8stypes.UID("uid-" + uid)}}
	}
	a := scheduling.PodFailure{PodName: "ns/a", Pod: pod("a"), Reason: "nodepool default: limit cpu reached"}
	b := scheduling.PodFailure{PodName: "ns/b", Pod: pod("b"), Reason: "no instance type has 64 CPU"}

	assert.Len(t, m.due([]scheduling.PodFailure{a, b}, t0), 2, "first sight: both recorded")
	assert.Empty(t, m.due([]scheduling.PodFailure{a, b}, t0.Add(time.Minute)), "same verdicts a minute later: nothing")

	changed := a
	changed.Reason = "nodepool default: limit memory reached"
	assert.Equal(t, []scheduling.PodFailure{changed}, m.due([]scheduling.PodFailure{changed, b}, t0.Add(2*time.Minute)),
		"a changed reason is recorded at once")

	recreated := b
	recreated.Pod = pod("b2")
	assert.Equal(t, []scheduling.PodFailure{recreated}, m.due([]scheduling.PodFailure{recreated}, t0.Add(3*time.Minute)),
		"a new pod with the same name is a new pod")

	later := t0.Add(2*time.Minute + FailedSchedulingInterval)
	assert.Len(t, m.due([]scheduling.PodFailure{changed, recreated}, later), 1, "after the interval the verdict is recorded again")

	m.forget([]scheduling.PodFailure{recreated})
	assert.Len(t, m.due([]scheduling.PodFailure{recreated}, later), 1, "a write that failed is tried again next run")

	m.due(nil, later.Add(3*FailedSchedulingInterval))
	assert.Empty(t, m.seen, "pods not seen for long are forgotten")
}

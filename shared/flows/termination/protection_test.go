package termination

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/drain"
)

// A pod held by a do-not-disrupt duration is told until when; one whose duration ended, that it is
// evicted now. Both messages stay the same between looks, so the Recorder drops the repeats.
func TestProtectionEvent(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u",
		Annotations: map[string]string{drain.DoNotDisruptAnnotation: "30m"}}}
	until := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)

	held := protectionEvent(node, drain.TimedProtection{Pod: pod, Held: true, Until: until})
	assert.Equal(t, kube.ReasonDoNotDisruptUntil, held.Reason)
	assert.Equal(t, kube.PodObject(pod), held.Object)
	assert.Contains(t, held.Message, "until 2026-01-01T00:30:00Z")
	assert.Contains(t, held.Message, "draining node n1")

	ended := protectionEvent(node, drain.TimedProtection{Pod: pod, Until: until})
	assert.Equal(t, kube.ReasonDoNotDisruptGracePeriodElapsed, ended.Reason)
	assert.Contains(t, ended.Message, "ended at 2026-01-01T00:30:00Z")
}

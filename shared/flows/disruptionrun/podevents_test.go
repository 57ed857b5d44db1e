package disruptionrun

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A node's pod set is the same set whatever the order the pods come in, and another set as soon as one
// pod is replaced (another UID under the same name included); a set seen again dates nothing.
func TestPodSetIsDatedWhateverItsOrder(t *testing.T) {
	pod := func(name, uid string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid)}}
	}
	a, b, c := pod("a", "1"), pod("b", "2"), pod("c", "3")
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "n"}}
	e := podEvents{seen: map[string]podMemo{}}
	t0 := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * time.Minute) }

	assert.Equal(t, at(0), e.lastEvent(n, []*corev1.Pod{a, b, c}, at(0)), "first sight")
	assert.Equal(t, at(0), e.lastEvent(n, []*corev1.Pod{c, a, b}, at(1)), "the same set in another order")
	assert.Equal(t, at(2), e.lastEvent(n, []*corev1.Pod{a, b, pod("c", "4")}, at(2)), "c was replaced")
	assert.Equal(t, at(3), e.lastEvent(n, []*corev1.Pod{a, b}, at(3)), "a pod left")
	assert.Equal(t, at(3), e.lastEvent(n, []*corev1.Pod{b, a}, at(4)))
}

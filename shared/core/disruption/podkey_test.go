package disruption

import (
	"cmp"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestComparePodKeysOrdersAsTheKeys: comparePodKeys orders pods exactly as their podKey strings,
// also where a namespace is a prefix of another ("a/x" sorts after "a-b/x").
func TestComparePodKeysOrdersAsTheKeys(t *testing.T) {
	names := []string{"", "a", "a-b", "a/", "ab", "b", "x", "x-1", "x/1"}
	for _, ns1 := range names {
		for _, n1 := range names {
			for _, ns2 := range names {
				for _, n2 := range names {
					a := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns1, Name: n1}}
					b := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns2, Name: n2}}
					require.Equal(t, cmp.Compare(podKey(a), podKey(b)), comparePodKeys(a, b), "%q/%q vs %q/%q", ns1, n1, ns2, n2)
				}
			}
		}
	}
}

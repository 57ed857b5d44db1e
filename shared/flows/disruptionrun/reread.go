package disruptionrun

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

// A run reads the cluster whole once; its later reads (a command's validation 15 s after the decision,
// the next command's decision) bring the Snapshotter's views forward, so only the objects that changed
// are read from the API server, and fill carries over from the previous read the entries of the nodes
// whose Node and pods did not change. Whether an object changed is told by its UID and
// resourceVersion: the API server gives an object a new resourceVersion with every write, and the
// views replace an object that changed (kube.Snapshot's objects are never modified). An object
// without a resourceVersion is always taken as changed.
//
// What a carried-over entry keeps is only what its Node and pods alone decide (the pods, the last pod
// event); its claim, its NodePool, drift, expiry and whether a command holds it are judged afresh from
// this read's state, and the PodDisruptionBudgets, pending pods, in-flight claims and the rest of the
// input are this read's. disruption.Validate then re-checks the command on that input whole: a
// candidate whose Node or pods changed, a destination that filled up, a pod that arrived, a budget or
// a PodDisruptionBudget that changed all count as they would on a second whole read.

// sameNode reports whether the previous read's entry old holds Node n with exactly pods.
func sameNode(old *disruption.Node, n *corev1.Node, pods []*corev1.Pod) bool {
	if !sameObject(&old.Node.ObjectMeta, &n.ObjectMeta) || len(old.Pods) != len(pods) {
		return false
	}
	for i, p := range pods {
		if q := old.Pods[i]; q != p && !sameObject(&q.ObjectMeta, &p.ObjectMeta) {
			return false
		}
	}
	return true
}

// sameObject reports whether a and b are the same version of one object.
func sameObject(a, b *metav1.ObjectMeta) bool {
	return a.ResourceVersion != "" && a.UID == b.UID && a.ResourceVersion == b.ResourceVersion &&
		a.Name == b.Name && a.Namespace == b.Namespace
}

// podsByNode groups bound pods by node name, keeping their order, in one backing array.
func podsByNode(bound []*corev1.Pod) map[string][]*corev1.Pod {
	count := map[string]int{}
	for _, p := range bound {
		count[p.Spec.NodeName]++
	}
	all := make([]*corev1.Pod, len(bound))
	out := make(map[string][]*corev1.Pod, len(count))
	at := 0
	for _, p := range bound {
		name := p.Spec.NodeName
		s, ok := out[name]
		if !ok {
			s = all[at : at : at+count[name]]
			at += count[name]
		}
		out[name] = append(s, p)
	}
	return out
}

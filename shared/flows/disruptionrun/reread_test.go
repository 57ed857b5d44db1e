package disruptionrun

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/nodewright/nodewright/shared/core/disruption"
)

// The validation's read brings the previous read forward instead of reading the cluster whole again
// (reread.go); decision 6 still holds: whatever the command depends on that changed between the
// decision and the validation (the candidate, a destination node, a pod that arrived, a
// PodDisruptionBudget) fails the validation, and nothing is done. With nothing changed the command is
// executed.
//
// The cluster: "cand", a medium node with one pod of 1 CPU under a PodDisruptionBudget that allows one
// disruption, and "dest", a large node with 1 CPU used that no claim manages (a destination, never a
// candidate). The decision deletes cand: its pod fits on dest.
func TestValidationRereadStillRejectsWhatChanged(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(c *fakeCluster)
		// rejected is what the rejection says; "" when the command is executed.
		rejected string
	}{
		"nothing changed": {change: func(*fakeCluster) {}},
		"the candidate changed": {change: func(c *fakeCluster) {
			n := node(c, "cand")
			n.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
			touch(&n.ObjectMeta)
		}, rejected: "node cand is no longer a candidate: the node has the karpenter.sh/do-not-disrupt annotation"},
		"a pod arrived on the candidate": {change: func(c *fakeCluster) {
			p := arrived(c, "late", "cand", "100m")
			p.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
			c.pods = append(c.pods, *p)
		}, rejected: "node cand is no longer a candidate: pod default/late has the karpenter.sh/do-not-disrupt annotation"},
		"the destination changed": {change: func(c *fakeCluster) {
			n := node(c, "dest")
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule})
			touch(&n.ObjectMeta)
		}, rejected: "scheduling: the nodes would now be replaced, not deleted"},
		"a pod arrived on the destination": {change: func(c *fakeCluster) {
			c.pods = append(c.pods, *arrived(c, "big", "dest", "6500m"))
		}, rejected: "scheduling: the nodes would now be replaced, not deleted"},
		"the PodDisruptionBudget changed": {change: func(c *fakeCluster) {
			p := c.pdbs[0].DeepCopy() // the snapshots share the objects, as the Snapshotter's do
			p.Status.DisruptionsAllowed = 0
			touch(&p.ObjectMeta)
			c.pdbs[0] = p
		}, rejected: "PodDisruptionBudget default/cand-app allows no disruption of pod default/cand-p0 now"},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "100%")
			f.node("cand", "medium", "1")
			f.node("dest", "large", "1")
			f.store.mu.Lock()
			delete(f.store.claims, "claim-dest")
			f.store.mu.Unlock()
			one := intstr.FromInt32(1)
			f.cluster.pdbs = []*policyv1.PodDisruptionBudget{{
				ObjectMeta: metav1.ObjectMeta{Name: "cand-app", Namespace: "default", ResourceVersion: "1"},
				Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &one,
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cand-p0"}}},
				Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1},
			}}
			f.runner.cfg.MaxCommands = 1
			f.cluster.onRead = func(c *fakeCluster, read int) {
				if read == 2 { // the run's read (advance and the decision), then the validation's
					tc.change(c)
				}
			}
			rep := f.run()
			require.Equal(t, 2, f.cluster.reads)
			if tc.rejected == "" {
				require.Len(t, rep.Commands, 1)
				assert.Equal(t, "cand", rep.Commands[0].Nodes[0].Name)
				assert.Equal(t, disruption.ActionDelete, rep.Commands[0].Action)
				assert.True(t, f.cluster.tainted("cand"))
				assert.Equal(t, map[string]string{"claim-cand": "Underutilized"}, f.terms.claims())
				return
			}
			assert.Empty(t, rep.Commands)
			assert.Equal(t, 1, rep.FailedValidations, "rejected: %v", rep.Rejected)
			require.Len(t, rep.Rejected, 1)
			assert.Contains(t, rep.Rejected[0], tc.rejected)
			assert.False(t, f.cluster.tainted("cand"))
			assert.Empty(t, f.terms.claims())
			assert.Zero(t, f.store.inFlight("default"))
		})
	}
}

// A read that brings the previous one forward carries over the entries of the nodes whose Node and
// pods did not change, and builds afresh the others: a Node written since (a new resourceVersion), a
// node whose pods changed, a node new to the cluster. What it carries over is what a whole read gives.
func TestRereadRebuildsOnlyWhatChanged(t *testing.T) {
	f := newFixture(t, "100%")
	for _, n := range []string{"a", "b", "c", "d"} {
		f.node(n, "medium", "1")
	}
	ctx := context.Background()
	first := f.runner.read(ctx, nil, nil)
	require.Empty(t, first.input.Incomplete)
	assert.Zero(t, first.reused, "nothing to carry over")

	same := f.runner.read(ctx, nil, first)
	assert.Equal(t, 4, same.reused)
	assert.Equal(t, f.runner.read(ctx, nil, nil).input.Nodes, same.input.Nodes, "the same input as a whole read")

	n := node(f.cluster, "a")
	n.Labels["example.com/team"] = "x"
	touch(&n.ObjectMeta)
	f.cluster.pods = append(f.cluster.pods, *arrived(f.cluster, "late", "b", "100m"))
	f.cluster.pods[2].Labels = map[string]string{"app": "changed"} // c-p0
	touch(&f.cluster.pods[2].ObjectMeta)
	f.node("e", "medium")
	changed := f.runner.read(ctx, nil, same)
	assert.Equal(t, 1, changed.reused, "only d is as it was")
	whole := f.runner.read(ctx, nil, nil)
	assert.Equal(t, whole.input.Nodes, changed.input.Nodes, "the same input as a whole read")
	for _, nd := range changed.input.Nodes {
		switch nd.Name() {
		case "a":
			assert.Equal(t, "x", nd.Node.Labels["example.com/team"])
		case "b":
			assert.Len(t, nd.Pods, 2)
		case "c":
			assert.Equal(t, "changed", nd.Pods[0].Labels["app"])
		}
	}
}

// node returns the fake cluster's Node name.
func node(c *fakeCluster, name string) *corev1.Node {
	for i := range c.nodes {
		if c.nodes[i].Name == name {
			return &c.nodes[i]
		}
	}
	panic("no node " + name)
}

// arrived is a new running pod of cpu bound to node.
func arrived(c *fakeCluster, name, node, cpu string) *corev1.Pod {
	p := c.pods[0].DeepCopy()
	p.Name, p.UID, p.Spec.NodeName = name, types.UID("uid-"+name), node
	p.Labels = map[string]string{"app": name}
	p.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu),
		corev1.ResourceMemory: resource.MustParse("256Mi")}
	return p
}

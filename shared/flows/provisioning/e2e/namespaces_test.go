package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// TestProvisionerHonoursNamespaceSelectors: a pending pod must run in the zone of a database pod, which
// it finds through a pod affinity term whose namespaceSelector matches a label of the database's
// namespace. The provisioner reads the namespaces' labels from the cluster, as nodewright plan does from
// --namespaces, so it launches a node in that zone; without them the term selects no namespace and the
// pod looks unschedulable.
func TestProvisionerHonoursNamespaceSelectors(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	core := cp.Client.CoreV1()
	_, err := core.Namespaces().Patch(ctx, ns, "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"nodewright.test/team":"`+ns+`"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)

	// The database runs on a full node in us-east-1b.
	node := kubetest.ReadyNode(t, cp.Client, "db-"+ns, nil)
	_, err = core.Nodes().Patch(ctx, node, "application/merge-patch+json",
		[]byte(`{"metadata":{"labels":{"topology.kubernetes.io/zone":"us-east-1b"}}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	cpu := func(q string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
	}
	_, err = core.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "db", Labels: map[string]string{"app": "db"}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "db", Image: "registry.k8s.io/pause:3.10", Resources: cpu("3")}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)

	affinity := &corev1.Affinity{PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"nodewright.test/team": ns}},
		TopologyKey:       corev1.LabelTopologyZone,
	}}}}
	_, err = core.Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: corev1.PodSpec{Affinity: affinity, Containers: []corev1.Container{{Name: "web", Image: "registry.k8s.io/pause:3.10", Resources: cpu("2")}}}},
		metav1.CreateOptions{})
	require.NoError(t, err)
	awaitUnschedulable(t, cp.Client, ns, 1) // no room next to the database

	rep, err := newProvisioner(t, w, cp, ns).Run(ctx, "run-namespace-selector")
	require.NoError(t, err)
	assert.Equal(t, 1, rep.PendingPods)
	assert.Empty(t, rep.Unschedulable, "the namespaceSelector finds the database through its namespace's labels")
	require.Len(t, rep.Claims, 1)
	assert.Equal(t, "us-east-1b", rep.Claims[0].Zone, "the new node is in the database's zone")
	assert.Equal(t, 1, rep.Claims[0].Pods)
}

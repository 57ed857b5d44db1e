package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/flows/disruptionrun"
	"github.com/nodewright/nodewright/shared/flows/termination"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// brokenClass is a NodePool whose EC2NodeClass selects a subnet that does not exist.
const brokenClass = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: %[1]s}
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: %[1]s}
      requirements: [{key: kubernetes.io/arch, operator: In, values: ["amd64"]}]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: %[1]s}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  amiSelectorTerms: [{tags: {team: platform}}]
  subnetSelectorTerms: [{id: subnet-0000000000000dead}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// TestDisruptionRunMirrorsPoolsAndClassesAndTellsOfAMissingSubnet runs the disruption function's runner,
// as its own identity (only its ClusterRole's rights, the read-only policy in force), over a NodePool
// with two nodes and one whose EC2NodeClass selects a subnet that does not exist: the class's mirror
// shows SubnetsReady and Ready False, its NodePool NodeClassReady False and a NodeClassNotReady Event that
// `kubectl describe` finds (by the mirror's UID); the healthy pool's status.nodes equals its claims. A run
// with nothing changed writes nothing, and a cluster admin cannot change a mirror.
func TestDisruptionRunMirrorsPoolsAndClassesAndTellsOfAMissingSubnet(t *testing.T) {
	w := newWorld(t, "0")
	cp := kubetest.Shared(t, kubetest.Options{})
	// The nodes first: their price is read with the configuration, which must be whole for it.
	w.node("a", "m5.large", "2", nil, "1500m")
	w.node("b", "m5.large", "2", nil, "1500m")
	broken := "broken-" + w.ns[len(w.ns)-5:]
	objs, err := apis.Decode("broken.yaml", []byte(fmt.Sprintf(brokenClass, broken)))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	items, err := state.ConfigItemsFrom(objs)
	require.NoError(t, err)
	_, err = w.store.ApplyConfig(w.ctx, items, false)
	require.NoError(t, err)
	installMirrorCRDs(t, cp)

	user := "arn:aws:sts::" + awstest.AccountID + ":assumed-role/nodewright-disruption/test"
	require.NoError(t, footprint.Grant(w.ctx, w.client, footprint.Disruption, user))
	fnConfig := cp.As(user, footprint.Disruption.Group())
	fn, err := kube.NewClientset(fnConfig)
	require.NoError(t, err)
	pools, err := mirror.NewClient(fnConfig, mirror.NodePools, "nodewright-disruption")
	require.NoError(t, err)
	classes, err := mirror.NewClient(fnConfig, mirror.EC2NodeClasses, "nodewright-disruption")
	require.NoError(t, err)
	status := mirror.NewStatusWriter(mirror.NewWriter(mirror.NodePools, pools, mirror.Options{}),
		mirror.NewWriter(mirror.EC2NodeClasses, classes, mirror.Options{}), kube.NewRecorder(fn, kube.RecorderOptions{Instance: "disruption"}))
	r := disruptionrun.New(disruptionrun.Config{ValidationDelay: 200 * time.Millisecond, MaxCommands: 1}, disruptionrun.Deps{
		Store:        w.store,
		Cluster:      kube.NewSnapshotter(w.client, kube.SnapshotOptions{Namespace: w.ns, NodeSelector: "e2e=" + w.ns}),
		Launcher:     disruptionrun.ProvisionerLauncher{P: w.prov},
		Nodes:        kube.NewActions(w.client),
		Terminations: termination.NewSender(w.sqs, w.queueURL),
		Events:       kube.NewRecorder(w.client, kube.RecorderOptions{Instance: "disruption-e2e"}),
		Mirrors:      status,
		Now:          time.Now,
	})

	rep, err := r.Run(w.ctx, "run-1")
	require.NoError(t, err)
	require.True(t, rep.Lease)
	assert.Equal(t, 4, rep.MirrorsWritten, "two pools and two classes: %v", rep.Errors)

	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	get := func(k mirror.Kind, name string) *unstructured.Unstructured {
		o, err := admin.Resource(k.Resource()).Get(w.ctx, name, metav1.GetOptions{})
		require.NoError(t, err)
		return o
	}
	cond := func(o *unstructured.Unstructured, typ string) map[string]any {
		conds, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
		for _, c := range conds {
			if m := c.(map[string]any); m["type"] == typ {
				return m
			}
		}
		return nil
	}
	class := get(mirror.EC2NodeClasses, broken)
	assert.Equal(t, "False", cond(class, "SubnetsReady")["status"])
	assert.Equal(t, "SubnetsNotFound", cond(class, "SubnetsReady")["reason"])
	assert.Equal(t, "False", cond(class, "Ready")["status"])
	good := get(mirror.EC2NodeClasses, "default")
	assert.Equal(t, "True", cond(good, "Ready")["status"])
	subnets, _, _ := unstructured.NestedSlice(good.Object, "status", "subnets")
	assert.Len(t, subnets, 2, "the resolved subnets, each with its zone")
	profile, _, _ := unstructured.NestedString(good.Object, "status", "instanceProfile")
	assert.NotEmpty(t, profile)

	claims, err := w.store.ListClaims(w.ctx)
	require.NoError(t, err)
	pool := get(mirror.NodePools, "default")
	nodes, _, _ := unstructured.NestedInt64(pool.Object, "status", "nodes")
	assert.Equal(t, int64(len(claims)), nodes, "status.nodes equals the pool's claims")
	cpu, _, _ := unstructured.NestedString(pool.Object, "status", "resources", "cpu")
	assert.Equal(t, "4", cpu, "the sum of its Nodes' capacity")
	assert.Equal(t, "True", cond(pool, "Ready")["status"])
	brokenPool := get(mirror.NodePools, broken)
	assert.Equal(t, "False", cond(brokenPool, "NodeClassReady")["status"])
	assert.Equal(t, "SubnetsNotFound", cond(brokenPool, "NodeClassReady")["reason"])

	// The Events go out once the writer knows the mirrors' UIDs: from the next run on.
	rep, err = r.Run(w.ctx, "run-2")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.MirrorsWritten, "nothing changed: nothing written")
	assert.Equal(t, 2, rep.MirrorEvents, "one on the class, one on its pool: %v", rep.Errors)
	described := func(o *unstructured.Unstructured, reason string) int {
		list, err := w.client.CoreV1().Events("").List(w.ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": o.GetKind(), "involvedObject.name": o.GetName(), "involvedObject.uid": string(o.GetUID()),
			"reason": reason}.String()})
		require.NoError(t, err)
		return len(list.Items)
	}
	assert.Equal(t, 1, described(brokenPool, string(kube.ReasonNodeClassNotReady)), "kubectl describe nodepools.nodewright.sh shows it")
	assert.Equal(t, 1, described(class, "SubnetsNotFound"), "kubectl describe ec2nodeclasses.nodewright.sh shows it")

	rep, err = r.Run(w.ctx, "run-3")
	require.NoError(t, err)
	assert.Equal(t, 0, rep.MirrorsWritten+rep.MirrorsDeleted+rep.MirrorEvents, "a steady state writes and tells nothing")

	_, err = admin.Resource(mirror.NodePools.Resource()).Patch(w.ctx, "default", types.MergePatchType,
		[]byte(`{"spec":{"weight":50}}`), metav1.PatchOptions{})
	require.True(t, apierrors.IsForbidden(err), "a cluster admin outside the functions' groups cannot change a mirror: %v", err)
}

// installMirrorCRDs applies the mirror CRDs, the read-only policy and its binding as `nodewright
// manifests` prints them (leaving them be when the shared control plane has them) and waits until the
// CRDs are served and the policy refuses the admin.
func installMirrorCRDs(t *testing.T, cp *kubetest.ControlPlane) {
	t.Helper()
	ctx := t.Context()
	admin, err := dynamic.NewForConfig(cp.Config)
	require.NoError(t, err)
	client, err := kube.NewClientset(cp.Config)
	require.NoError(t, err)
	for _, crd := range mirror.CRDs() {
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
		require.NoError(t, err)
		_, err = admin.Resource(crds).Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
	}
	_, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(ctx, footprint.MirrorPolicy(), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	_, err = client.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Create(ctx, footprint.MirrorPolicyBinding(), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	probe := &unstructured.Unstructured{Object: map[string]any{"apiVersion": mirror.APIVersion, "kind": "NodePool",
		"metadata": map[string]any{"name": "mirror-policy-probe"}}}
	require.Eventually(t, func() bool {
		_, err := admin.Resource(mirror.NodePools.Resource()).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err)
	}, 30*time.Second, 200*time.Millisecond, "the CRDs are served and the read-only policy is in force")
}

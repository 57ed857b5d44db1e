package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestReadPods(t *testing.T) {
	cases := []struct {
		name     string
		content  string
		names    []string
		warnings []string
		wantErr  string
	}{
		{
			name:    "multi-document YAML with an empty document",
			content: "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\n---\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\n",
			names:   []string{"a", "b"},
		},
		{
			name:    "PodList whose items have no kind",
			content: `{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]}`,
			names:   []string{"a", "b"},
		},
		{
			name:    "stream of JSON objects",
			content: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"}}`,
			names:   []string{"a", "b"},
		},
		{
			name:     "unknown fields are warnings",
			content:  "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  futureField: true\n",
			names:    []string{"a"},
			warnings: []string{`pods.yaml: document 1: unknown field "spec.futureField" (ignored)`},
		},
		{name: "another kind", content: "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n", wantErr: `pods.yaml: document 1: kind "Service", want Pod`},
		{name: "List with a Node", content: "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: n}}\n", wantErr: `pods.yaml: document 1, items[0]: kind "Node", want Pod`},
		{name: "bad YAML", content: "kind: Pod\nmetadata: [\n", wantErr: "pods.yaml: document 1"},
		{name: "bad JSON", content: `{"kind":"Pod"} {"kind":`, wantErr: "pods.yaml: document 2: invalid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "pods.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			var warnings []string
			pods, err := readPods(path, func(s string) { warnings = append(warnings, s) })
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, p := range pods {
				names = append(names, p.Name)
			}
			assert.Equal(t, tc.names, names)
			for i, w := range tc.warnings {
				require.Greater(t, len(warnings), i)
				assert.Contains(t, warnings[i], w)
			}
		})
	}
}

func TestReadSampleInputs(t *testing.T) {
	pods, err := readPods(planFile("pods.yaml"), func(s string) { t.Error(s) })
	require.NoError(t, err)
	assert.Len(t, pods, 34)
	nodes, err := readNodes(planFile("nodes.yaml"), func(s string) { t.Error(s) })
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	assert.Equal(t, "3920m", nodes[0].Status.Allocatable.Cpu().String())
	ds, err := readDaemonSets(planFile("daemonsets.yaml"), func(s string) { t.Error(s) })
	require.NoError(t, err)
	assert.Len(t, ds, 2)
	u, err := readUnavailable(planFile("unavailable.json"))
	require.NoError(t, err)
	assert.Equal(t, scheduling.UnavailableOfferings{{InstanceType: "c6g.8xlarge", Zone: "us-east-1a", CapacityType: "spot"}: true}, u)
}

func TestSplitPods(t *testing.T) {
	node := func(name string, labels map[string]string) *corev1.Node {
		return schedulingtest.Node(schedulingtest.NodeOptions{Name: name, Labels: labels, CPU: "4", Memory: "16Gi", Pods: 58})
	}
	managed := node("managed", map[string]string{scheduling.LabelNodePool: "default", scheduling.LabelNodeInitalized: "true"})
	booting := node("booting", map[string]string{scheduling.LabelNodePool: "default"})
	unmanaged := node("unmanaged", nil)

	pending := schedulingtest.Pod(schedulingtest.PodOptions{Name: "pending"})
	bound := schedulingtest.Pod(schedulingtest.PodOptions{Name: "bound", NodeName: "managed"})
	elsewhere := schedulingtest.Pod(schedulingtest.PodOptions{Name: "elsewhere", NodeName: "gone"})
	done := schedulingtest.Pod(schedulingtest.PodOptions{Name: "done"})
	done.Status.Phase = corev1.PodSucceeded
	daemon := schedulingtest.Pod(schedulingtest.PodOptions{Name: "daemon"})
	daemon.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds"}}
	mirror := schedulingtest.Pod(schedulingtest.PodOptions{Name: "mirror"})
	mirror.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}

	var warnings []string
	got, existing := splitPods([]*corev1.Pod{pending, bound, elsewhere, done, daemon, mirror},
		[]*corev1.Node{managed, booting, unmanaged}, func(s string) { warnings = append(warnings, s) })
	assert.Equal(t, []*corev1.Pod{pending}, got)
	require.Len(t, existing, 3)
	cases := []struct {
		name        string
		node        scheduling.ExistingNode
		pool        string
		initialized bool
		pods        int
	}{
		{name: "managed and initialized", node: existing[0], pool: "default", initialized: true, pods: 1},
		{name: "managed and booting", node: existing[1], pool: "default", initialized: false},
		{name: "not managed", node: existing[2], pool: "", initialized: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.pool, tc.node.NodePool)
			assert.Equal(t, tc.initialized, tc.node.Initialized)
			assert.Len(t, tc.node.Pods, tc.pods)
		})
	}
	assert.Equal(t, []string{"1 pod(s) bound to node gone, which is not in --nodes: ignored"}, warnings)
}

func TestReadVolumes(t *testing.T) {
	content := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: PersistentVolumeClaim
  metadata: {name: data, namespace: default, annotations: {pv.kubernetes.io/bind-completed: "yes"}}
  spec: {volumeName: pv-1}
- apiVersion: v1
  kind: PersistentVolume
  metadata: {name: pv-1}
  spec:
    nodeAffinity:
      required:
        nodeSelectorTerms:
        - matchExpressions: [{key: topology.ebs.csi.aws.com/zone, operator: In, values: [us-west-2b]}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: gp3}
provisioner: ebs.csi.aws.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-1}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: i-1, allocatable: {count: 25}}
`
	path := filepath.Join(t.TempDir(), "volumes.yaml")
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	var in scheduling.Input
	require.NoError(t, readVolumes(path, &in, func(s string) { t.Error(s) }))
	require.Len(t, in.PersistentVolumeClaims, 1)
	require.Len(t, in.PersistentVolumes, 1)
	require.Len(t, in.StorageClasses, 1)
	require.Len(t, in.CSINodes, 1)
	assert.Equal(t, int32(25), *in.CSINodes[0].Spec.Drivers[0].Allocatable.Count)
	assert.Equal(t, "pv-1", in.PersistentVolumeClaims[0].Spec.VolumeName)

	pod := schedulingtest.WithClaims(schedulingtest.Pod(schedulingtest.PodOptions{Name: "p", CPU: "1"}), "data")
	in.Pods = []*corev1.Pod{pod}
	in.NodePools = []scheduling.NodePool{schedulingtest.NodePool("default")}
	in.InstanceTypes = schedulingtest.InstanceTypes(4)
	plan, err := scheduling.Solve(in)
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 1)
	assert.Equal(t, "us-west-2b", plan.NewClaims[0].Zone, "the offering follows the volume's zone")

	require.NoError(t, os.WriteFile(path, []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"), 0o644))
	assert.ErrorContains(t, readVolumes(path, &in, func(string) {}), `kind "Pod", want PersistentVolumeClaim, PersistentVolume, StorageClass or CSINode`)
}

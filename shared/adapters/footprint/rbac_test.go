package footprint

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// absent names objects that do not exist: an allowed request on them answers NotFound, a denied one
// Forbidden (the API server authorizes before it looks the object up).
const absent = "nodewright-rbac-probe-absent"

// requests are the API requests the test makes as each function: every request any function makes, and
// the ones none may make. Writes that would take effect are dry runs or aim at absent objects.
var requests = map[string]func(context.Context, kubernetes.Interface) error{
	"list nodes": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.CoreV1().Nodes().List(ctx, metav1.ListOptions{}))
	},
	"get node": func(ctx context.Context, c kubernetes.Interface) error {
		return getErr(c.CoreV1().Nodes().Get(ctx, absent, metav1.GetOptions{}))
	},
	"watch nodes": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.CoreV1().Nodes().Watch(ctx, metav1.ListOptions{}))
	},
	"watch pods": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{}))
	},
	"watch namespaces": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.CoreV1().Namespaces().Watch(ctx, metav1.ListOptions{}))
	},
	"watch persistentvolumeclaims": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.CoreV1().PersistentVolumeClaims("").Watch(ctx, metav1.ListOptions{}))
	},
	"watch persistentvolumes": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.CoreV1().PersistentVolumes().Watch(ctx, metav1.ListOptions{}))
	},
	"watch daemonsets": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.AppsV1().DaemonSets("").Watch(ctx, metav1.ListOptions{}))
	},
	"watch poddisruptionbudgets": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.PolicyV1().PodDisruptionBudgets("").Watch(ctx, metav1.ListOptions{}))
	},
	"watch storageclasses": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.StorageV1().StorageClasses().Watch(ctx, metav1.ListOptions{}))
	},
	"watch csinodes": func(ctx context.Context, c kubernetes.Interface) error {
		return watchErr(c.StorageV1().CSINodes().Watch(ctx, metav1.ListOptions{}))
	},
	"patch node": func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Nodes().Patch(ctx, absent, types.MergePatchType, []byte(`{"spec":{"unschedulable":true}}`), metav1.PatchOptions{})
		return err
	},
	"update node": func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Nodes().Update(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: absent}}, metav1.UpdateOptions{})
		return err
	},
	"create node": func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: absent}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	},
	"delete node": func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().Nodes().Delete(ctx, absent, metav1.DeleteOptions{})
	},
	"list pods": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.CoreV1().Pods("").List(ctx, metav1.ListOptions{}))
	},
	"get pod": func(ctx context.Context, c kubernetes.Interface) error {
		return getErr(c.CoreV1().Pods("default").Get(ctx, absent, metav1.GetOptions{}))
	},
	"create pod": func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: absent},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	},
	"delete pod": func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().Pods("default").Delete(ctx, absent, metav1.DeleteOptions{})
	},
	"evict pod": func(ctx context.Context, c kubernetes.Interface) error {
		return c.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: absent, Namespace: "default"}})
	},
	"list namespaces": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}))
	},
	"list persistentvolumeclaims": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{}))
	},
	"list persistentvolumes": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{}))
	},
	"list daemonsets": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.AppsV1().DaemonSets("").List(ctx, metav1.ListOptions{}))
	},
	"list poddisruptionbudgets": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.PolicyV1().PodDisruptionBudgets("").List(ctx, metav1.ListOptions{}))
	},
	"list storageclasses": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.StorageV1().StorageClasses().List(ctx, metav1.ListOptions{}))
	},
	"list csinodes": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.StorageV1().CSINodes().List(ctx, metav1.ListOptions{}))
	},
	"list volumeattachments": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{}))
	},
	"create event": func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Events("default").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: absent},
			InvolvedObject: corev1.ObjectReference{Kind: "Node", Name: absent}, Reason: "Probe"}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	},
	"patch event": func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Events("default").Patch(ctx, absent, types.MergePatchType, []byte(`{"count":2}`), metav1.PatchOptions{})
		return err
	},
	"list capacitybuffers": func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().RESTClient().Get().AbsPath("/apis/autoscaling.x-k8s.io/v1beta1/capacitybuffers").Do(ctx).Error()
	},
	"get capacitybuffer": func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().RESTClient().Get().AbsPath("/apis/autoscaling.x-k8s.io/v1beta1/namespaces/default/capacitybuffers", absent).Do(ctx).Error()
	},
	"update capacitybuffer status": func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().RESTClient().Put().AbsPath("/apis/autoscaling.x-k8s.io/v1beta1/namespaces/default/capacitybuffers", absent, "status").
			SetHeader("Content-Type", "application/json").Body([]byte(`{"apiVersion":"autoscaling.x-k8s.io/v1beta1","kind":"CapacityBuffer","metadata":{"name":"` + absent + `","namespace":"default"},"spec":{}}`)).
			Do(ctx).Error()
	},
	"update capacitybuffer": func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().RESTClient().Put().AbsPath("/apis/autoscaling.x-k8s.io/v1beta1/namespaces/default/capacitybuffers", absent).
			SetHeader("Content-Type", "application/json").Body([]byte(`{"apiVersion":"autoscaling.x-k8s.io/v1beta1","kind":"CapacityBuffer","metadata":{"name":"` + absent + `","namespace":"default"},"spec":{}}`)).
			Do(ctx).Error()
	},
	"get podtemplate": func(ctx context.Context, c kubernetes.Interface) error {
		return getErr(c.CoreV1().PodTemplates("default").Get(ctx, absent, metav1.GetOptions{}))
	},
	"get deployment": func(ctx context.Context, c kubernetes.Interface) error {
		return getErr(c.AppsV1().Deployments("default").Get(ctx, absent, metav1.GetOptions{}))
	},
	"get statefulset": func(ctx context.Context, c kubernetes.Interface) error {
		return getErr(c.AppsV1().StatefulSets("default").Get(ctx, absent, metav1.GetOptions{}))
	},
	"get replicaset": func(ctx context.Context, c kubernetes.Interface) error {
		return getErr(c.AppsV1().ReplicaSets("default").Get(ctx, absent, metav1.GetOptions{}))
	},
	"get secret": func(ctx context.Context, c kubernetes.Interface) error {
		return getErr(c.CoreV1().Secrets("default").Get(ctx, absent, metav1.GetOptions{}))
	},
	"list configmaps": func(ctx context.Context, c kubernetes.Interface) error {
		return listErr(c.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{}))
	},
	"update deployment": func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AppsV1().Deployments("default").Update(ctx, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: absent}}, metav1.UpdateOptions{})
		return err
	},
	"delete namespace": func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().Namespaces().Delete(ctx, absent, metav1.DeleteOptions{})
	},
	"list nodeclaims":            mirrorRequest("nodeclaims", "list", ""),
	"watch nodeclaims":           mirrorRequest("nodeclaims", "watch", ""),
	"create nodeclaim":           mirrorRequest("nodeclaims", "create", ""),
	"patch nodeclaim":            mirrorRequest("nodeclaims", "patch", ""),
	"patch nodeclaim status":     mirrorRequest("nodeclaims", "patch", "status"),
	"update nodeclaim":           mirrorRequest("nodeclaims", "update", ""),
	"update nodeclaim status":    mirrorRequest("nodeclaims", "update", "status"),
	"delete nodeclaim":           mirrorRequest("nodeclaims", "delete", ""),
	"list nodepools":             mirrorRequest("nodepools", "list", ""),
	"watch nodepools":            mirrorRequest("nodepools", "watch", ""),
	"create nodepool":            mirrorRequest("nodepools", "create", ""),
	"patch nodepool":             mirrorRequest("nodepools", "patch", ""),
	"patch nodepool status":      mirrorRequest("nodepools", "patch", "status"),
	"update nodepool":            mirrorRequest("nodepools", "update", ""),
	"update nodepool status":     mirrorRequest("nodepools", "update", "status"),
	"delete nodepool":            mirrorRequest("nodepools", "delete", ""),
	"list ec2nodeclasses":        mirrorRequest("ec2nodeclasses", "list", ""),
	"watch ec2nodeclasses":       mirrorRequest("ec2nodeclasses", "watch", ""),
	"create ec2nodeclass":        mirrorRequest("ec2nodeclasses", "create", ""),
	"patch ec2nodeclass":         mirrorRequest("ec2nodeclasses", "patch", ""),
	"patch ec2nodeclass status":  mirrorRequest("ec2nodeclasses", "patch", "status"),
	"update ec2nodeclass":        mirrorRequest("ec2nodeclasses", "update", ""),
	"update ec2nodeclass status": mirrorRequest("ec2nodeclasses", "update", "status"),
	"delete ec2nodeclass":        mirrorRequest("ec2nodeclasses", "delete", ""),
	"get nodeclaim":              mirrorRequest("nodeclaims", "get", ""),
	"get nodepool":               mirrorRequest("nodepools", "get", ""),
	"get ec2nodeclass":           mirrorRequest("ec2nodeclasses", "get", ""),
	"create clusterrole": func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: absent}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	},
}

// snapshotRequests are a kube.Snapshotter's: it lists and then watches each kind it reads.
var snapshotRequests = []string{"list nodes", "watch nodes", "list pods", "watch pods", "list namespaces", "watch namespaces",
	"list persistentvolumeclaims", "watch persistentvolumeclaims", "list persistentvolumes", "watch persistentvolumes",
	"list daemonsets", "watch daemonsets", "list poddisruptionbudgets", "watch poddisruptionbudgets",
	"list storageclasses", "watch storageclasses", "list csinodes", "watch csinodes"}

// allowed is what each function's code does (found by reading every client call in its packages); every
// other request of requests must be refused.
// bufferRequests are capacitybuffer.Read's: one list of buffers, a get of what each names.
var bufferRequests = []string{"list capacitybuffers", "get podtemplate", "get deployment", "get statefulset", "get replicaset"}

// followRequests are a mirror.Follower's: a GET of the claim's mirror, an update of its status and of
// the object over the revision read, or, when it is missing, a server-side apply (a PATCH that creates)
// of the object and its status. Never a list, a watch or a delete.
var followRequests = []string{"get nodeclaim", "create nodeclaim", "patch nodeclaim", "patch nodeclaim status", "update nodeclaim",
	"update nodeclaim status"}

var allowed = map[Function][]string{
	Provisioner: append(append([]string{"get pod", "create event", "update capacitybuffer status",
		// The mirror of each claim it launches: learned with a LIST, server-side applied with its status,
		// replaced (GET, PUT) when its content is unknown; never watched or deleted.
		"list nodeclaims", "get nodeclaim", "create nodeclaim", "patch nodeclaim", "patch nodeclaim status",
		"update nodeclaim", "update nodeclaim status"}, snapshotRequests...),
		bufferRequests...),
	Disruption: append(append(append([]string{"get node", "patch node", "create event"}, snapshotRequests...), bufferRequests...),
		// The NodePool and EC2NodeClass mirrors, written as the lifecycle writes the NodeClaim mirrors.
		append(append(mirrorRequests("nodepool", "nodepools"), mirrorRequests("ec2nodeclass", "ec2nodeclasses")...), followRequests...)...),
	Interruption: append([]string{"get node", "patch node", "create event"}, followRequests...),
	Lifecycle: append([]string{"list nodes", "watch nodes", "get node", "patch node", "create event"},
		// The NodeClaim mirrors: learned with a LIST, followed with a watch, server-side applied (a PATCH
		// that creates), their status applied, replaced (PUT) when someone else changed them, deleted when
		// their claim is gone.
		mirrorRequests("nodeclaim", "nodeclaims")...),
	Termination: append([]string{"list nodes", "get node", "patch node", "delete node", "list pods", "delete pod", "evict pod",
		"list volumeattachments", "create event"}, followRequests...),
}

// TestEachFunctionMayDoWhatItsCodeDoesAndNothingElse applies the footprint's roles and bindings to the
// real API server and makes every request of requests as each function's identity (its group, as its
// EKS access entry gives it): what the function's code does is served, the rest is Forbidden. Only
// termination deletes Nodes and pods or evicts (DESIGN.md decision 10).
func TestEachFunctionMayDoWhatItsCodeDoesAndNothingElse(t *testing.T) {
	ctx := context.Background()
	cp := kubetest.Shared(t, kubetest.Options{})
	applyRBAC(t, cp)

	for _, f := range Functions() {
		t.Run(string(f), func(t *testing.T) {
			c := functionClient(t, cp, f)
			may := map[string]bool{}
			for _, r := range allowed[f] {
				require.Contains(t, requests, r)
				may[r] = true
			}
			for _, name := range sortedNames(requests) {
				err := requests[name](ctx, c)
				if may[name] {
					// Served: done, or refused for the absent object or the probe's content, never for who asks.
					assert.True(t, err == nil || apierrors.IsNotFound(err) || apierrors.IsInvalid(err), "%s may %s: %v", f, name, err)
				} else {
					assert.True(t, apierrors.IsForbidden(err), "%s must not %s, got %v", f, name, err)
				}
			}
		})
	}

	t.Run("only termination deletes Nodes and pods or evicts", func(t *testing.T) {
		for _, f := range Functions() {
			for _, a := range Grants(f) {
				destructive := a.Verb == "delete" && (a.Resource == "nodes" || a.Resource == "pods") || a.Subresource == "eviction"
				assert.False(t, destructive && f != Termination, "%s is granted %s %s/%s", f, a.Verb, a.Resource, a.Subresource)
			}
		}
	})
}

// TestFunctionsRunTheirOwnCodeUnderTheirOwnRole runs the kube adapters each function is wired with as
// that function: the snapshot of a solve and of a disruption decision, the interruption's taint, the
// disruption's untaint and relabel, the lifecycle's finalizer, termination's delete; and shows a Node
// delete refused to all but termination.
func TestFunctionsRunTheirOwnCodeUnderTheirOwnRole(t *testing.T) {
	ctx := context.Background()
	cp := kubetest.Shared(t, kubetest.Options{})
	applyRBAC(t, cp)
	node := kubetest.ReadyNode(t, cp.Client, "rbac-own-code-node", nil)

	for _, f := range []Function{Provisioner, Disruption} {
		s := kube.NewSnapshotter(functionClient(t, cp, f), kube.SnapshotOptions{WatchAfter: -1})
		snap, err := s.Snapshot(ctx)
		require.NoError(t, err, "%s reads its snapshot", f)
		assert.NotEmpty(t, snap.Namespaces, "namespaces are read for namespaceSelectors")
		kubetest.ReadyNode(t, cp.Client, "rbac-own-code-"+string(f), nil)
		snap, err = s.Snapshot(ctx)
		require.NoError(t, err, "%s catches its snapshot up", f)
		assert.Equal(t, kube.ReadWatched, snap.NodesRead, "%s watches Nodes", f)
		// Its CapacityBuffer reads (gate CapacityBuffer): the list, and a template's GET; this API server
		// serves no CapacityBuffer API, so the list answers NotFound, not Forbidden.
		buffers := kube.NewBuffers(functionClient(t, cp, f), "")
		_, _, err = buffers.ListCapacityBuffers(ctx, 10)
		assert.True(t, err == nil || kube.IsNotFound(err), "%s lists CapacityBuffers: %v", f, err)
		_, err = buffers.PodTemplate(ctx, "default", "absent")
		assert.True(t, kube.IsNotFound(err), "%s reads a buffer's PodTemplate: %v", f, err)
		require.Len(t, snap.KindsRead, 7)
		for k, mode := range snap.KindsRead {
			assert.NotEqual(t, kube.ReadListed, mode, "%s watches %s", f, k)
		}
	}
	nodes := kube.NewNodeView(functionClient(t, cp, Lifecycle), kube.SnapshotOptions{WatchAfter: -1})
	for range 2 {
		_, err := nodes.List(ctx, metav1.ListOptions{})
		require.NoError(t, err, "the lifecycle lists and then watches Nodes")
	}
	assert.NotEqual(t, kube.ReadListed, nodes.LastRead())
	taint := corev1.Taint{Key: "nodewright.sh/probe", Effect: corev1.TaintEffectNoSchedule}
	require.NoError(t, kube.NewActions(functionClient(t, cp, Interruption)).Taint(ctx, node, taint), "interruption taints")
	require.NoError(t, kube.NewActions(functionClient(t, cp, Disruption)).Untaint(ctx, node, taint), "disruption untaints")
	onDemand := "on-demand"
	require.NoError(t, kube.NewActions(functionClient(t, cp, Disruption)).Label(ctx, node, map[string]*string{
		"karpenter.sh/capacity-type": &onDemand, "karpenter.k8s.aws/capacity-reservation-id": nil}),
		"disruption relabels a Node whose capacity reservation ended")
	require.NoError(t, kube.NewActions(functionClient(t, cp, Lifecycle)).AddFinalizer(ctx, node, kube.TerminationFinalizer), "lifecycle adds the finalizer")
	for _, f := range []Function{Provisioner, Disruption, Interruption, Lifecycle} {
		err := kube.NewActions(functionClient(t, cp, f)).DeleteNode(ctx, node)
		assert.True(t, kube.IsForbidden(err), "%s must not delete a Node: %v", f, err)
	}
	term := kube.NewActions(functionClient(t, cp, Termination))
	require.NoError(t, term.RemoveFinalizer(ctx, node, kube.TerminationFinalizer), "termination takes the finalizer off")
	require.NoError(t, term.DeleteNode(ctx, node), "termination deletes the Node")
}

// applyRBAC creates every function's role and binding, as `nodewright manifests` prints them, and waits
// until the authorizer has them.
func applyRBAC(t *testing.T, cp *kubetest.ControlPlane) {
	t.Helper()
	ctx := context.Background()
	rbac := cp.Client.RbacV1()
	for _, f := range Functions() {
		_, err := rbac.ClusterRoles().Create(ctx, ClusterRole(f), metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
		_, err = rbac.ClusterRoleBindings().Create(ctx, ClusterRoleBinding(f), metav1.CreateOptions{})
		if !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err)
		}
		require.NoError(t, AwaitGranted(ctx, cp.Client, f, user(f), 30*time.Second))
	}
}

func user(f Function) string {
	return "arn:aws:sts::123456789012:assumed-role/nodewright-" + string(f) + "/session"
}

func functionClient(t *testing.T, cp *kubetest.ControlPlane, f Function) kubernetes.Interface {
	t.Helper()
	c, err := kube.NewClientset(cp.As(user(f), f.Group()))
	require.NoError(t, err)
	return c
}

// mirrorRequests are the requests of a mirror writer on one kind (singular, plural).
func mirrorRequests(singular, plural string) []string {
	out := []string{"get " + singular, "list " + plural, "watch " + plural}
	for _, v := range []string{"create", "patch", "patch %s status", "update", "update %s status", "delete"} {
		if strings.Contains(v, "%s") {
			out = append(out, fmt.Sprintf(v, singular))
		} else {
			out = append(out, v+" "+singular)
		}
	}
	return out
}

// mirrorRequest makes a request on one kind of mirror (the CRD need not be installed: RBAC answers
// first, and a served request on a resource the server does not have is NotFound).
func mirrorRequest(plural, verb, sub string) func(context.Context, kubernetes.Interface) error {
	return func(ctx context.Context, c kubernetes.Interface) error {
		rc := c.Discovery().RESTClient()
		path := "/apis/nodewright.sh/v1/" + plural
		item := []string{path, absent}
		if sub != "" {
			item = append(item, sub)
		}
		kind := map[string]string{"nodeclaims": "NodeClaim", "nodepools": "NodePool", "ec2nodeclasses": "EC2NodeClass"}[plural]
		body := []byte(`{"apiVersion":"nodewright.sh/v1","kind":"` + kind + `","metadata":{"name":"` + absent + `"}}`)
		switch verb {
		case "get":
			return rc.Get().AbsPath(item...).Do(ctx).Error()
		case "list":
			return rc.Get().AbsPath(path).Param("limit", "1").Do(ctx).Error()
		case "watch":
			return rc.Get().AbsPath(path).Param("watch", "true").Param("timeoutSeconds", "1").Do(ctx).Error()
		case "create":
			return rc.Post().AbsPath(path).Param("dryRun", "All").SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
		case "patch":
			return rc.Patch(types.MergePatchType).AbsPath(item...).SetHeader("Content-Type", string(types.MergePatchType)).
				Body([]byte(`{}`)).Do(ctx).Error()
		case "update":
			return rc.Put().AbsPath(item...).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
		default:
			return rc.Delete().AbsPath(item...).Do(ctx).Error()
		}
	}
}

func listErr[T any](_ T, err error) error { return err }
func getErr[T any](_ T, err error) error  { return err }

func watchErr[T interface{ Stop() }](w T, err error) error {
	if err == nil {
		w.Stop()
	}
	return err
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

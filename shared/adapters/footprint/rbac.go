package footprint

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
)

// Function names one of the functions that call the API server. Each has its own Kubernetes group (its
// EKS access entry puts the function's IAM role in it), its own ClusterRole and its own binding, so a
// function can do only what its own code does (DESIGN.md decisions 3 and 10). The webhook function does
// not call the API server and has none.
type Function string

// The functions that call the API server.
const (
	Provisioner  Function = "provisioner"
	Disruption   Function = "disruption"
	Interruption Function = "interruption"
	Lifecycle    Function = "lifecycle"
	Termination  Function = "termination"
)

// Functions lists every function with a Kubernetes identity, in a fixed order.
func Functions() []Function {
	return []Function{Provisioner, Disruption, Interruption, Lifecycle, Termination}
}

// Group is the Kubernetes group f's EKS access entry puts its IAM role in.
func (f Function) Group() string { return "nodewright:" + string(f) }

// ClusterRoleName names f's ClusterRole and its binding.
func (f Function) ClusterRoleName() string { return "nodewright-" + string(f) }

var labels = map[string]string{"app.kubernetes.io/name": "nodewright", "app.kubernetes.io/managed-by": "nodewright"}

var (
	list  = []string{"list"}
	patch = []string{"get", "patch"} // kube.Actions reads a Node before each merge patch
	// watched kinds are listed once by a warm function and then caught up with watches (kube's views).
	watched = []string{"list", "watch"}
)

// snapshot is what kube.Snapshotter lists: the whole cluster a solve or a disruption decision reads
// (namespaces included: pod affinity namespaceSelectors match their labels). Every kind of it is watched
// too: a warm function reads only the changes.
var snapshot = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"nodes", "pods"}, Verbs: watched},
	{APIGroups: []string{""}, Resources: []string{"namespaces", "persistentvolumeclaims", "persistentvolumes"}, Verbs: watched},
	{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, Verbs: watched},
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: watched},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses", "csinodes"}, Verbs: watched},
}

// buffers is what reading CapacityBuffers does (shared/adapters/capacitybuffer, gate CapacityBuffer; granted
// whether or not the gate is on, so turning it on needs no new role): one LIST of the buffers (never a
// GET or a watch) and a GET of the PodTemplate or the Deployment, StatefulSet or ReplicaSet each one
// names (their pod template and replicas; no scale subresource is read).
var buffers = []rbacv1.PolicyRule{
	{APIGroups: []string{"autoscaling.x-k8s.io"}, Resources: []string{"capacitybuffers"}, Verbs: list},
	{APIGroups: []string{""}, Resources: []string{"podtemplates"}, Verbs: []string{"get"}},
	{APIGroups: []string{"apps"}, Resources: []string{"deployments", "statefulsets", "replicasets"}, Verbs: []string{"get"}},
}

// events is kube.Recorder's one write: it creates core/v1 Events and never updates them.
var events = rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}}

// Rules is what f's code does in the cluster and nothing more. No function reads secrets or configmaps or
// writes workloads; only termination deletes Nodes and pods or evicts.
func Rules(f Function) []rbacv1.PolicyRule {
	var rules []rbacv1.PolicyRule
	switch f {
	case Provisioner:
		// A solve reads the snapshot and the CapacityBuffers, and writes back the buffers' status; a
		// wake-up re-reads its pod by name.
		rules = append(rules, snapshot...)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}})
		rules = append(rules, buffers...)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{"autoscaling.x-k8s.io"}, Resources: []string{"capacitybuffers/status"},
			Verbs: []string{"update"}})
	case Disruption:
		// Decisions read the snapshot; a decision taints its candidates and a rollback untaints them; a
		// Node whose capacity reservation ended is relabelled on-demand (the same patch of Nodes). The
		// CapacityBuffers are read so their room is kept (their status is the provisioner's to write).
		rules = append(rules, snapshot...)
		rules = append(rules, buffers...)
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: patch})
	case Interruption:
		// A notice taints the claim's Node; the drain is termination's.
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: patch})
	case Lifecycle:
		// Registration and initialization list (and then watch) Nodes and label, annotate, taint and add or
		// take off the termination finalizer.
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch", "patch"}})
	case Termination:
		// The drain: find the Node, taint and label it, list its pods, evict them (delete them at the
		// deadline), wait for volumes to detach, and, once the instance is gone, force-delete what is left,
		// take the finalizer off and delete the Node.
		rules = append(rules,
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "patch", "delete"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list", "delete"}},
			rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/eviction"}, Verbs: []string{"create"}},
			rbacv1.PolicyRule{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"volumeattachments"}, Verbs: list},
		)
	default:
		return nil
	}
	if slices.Contains(MirrorWriters(), f) {
		// The mirrors it writes (mirrors.go); the policy keeps everyone else from writing them.
		for _, r := range mirrorWrites(f) {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{mirror.Group}, Resources: r.resources, Verbs: r.verbs})
		}
	}
	return append(rules, events)
}

// ClusterRole is f's role, holding Rules(f).
func ClusterRole(f Function) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: f.ClusterRoleName(), Labels: labels},
		Rules:      Rules(f),
	}
}

// ClusterRoleBinding binds f's role to f's group, and to nothing else.
func ClusterRoleBinding(f Function) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: f.ClusterRoleName(), Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: f.ClusterRoleName()},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: "rbac.authorization.k8s.io", Name: f.Group()}},
	}
}

// RBAC is every function's ClusterRole and ClusterRoleBinding, role before binding, in Functions' order:
// what `nodewright manifests` prints.
func RBAC() []any {
	var out []any
	for _, f := range Functions() {
		out = append(out, ClusterRole(f), ClusterRoleBinding(f))
	}
	return out
}

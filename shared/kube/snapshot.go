package kube

import (
	"context"
	"fmt"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/crash"
)

// DefaultPageSize is how many objects one list request asks for. Large pages keep the number of round
// trips small (six for 30,000 pods) while bounding the size of one response.
const DefaultPageSize = 5000

// nonTerminalPods selects pods that still hold (or will hold) node resources: terminal pods (Succeeded,
// Failed) are filtered out by the API server, never transferred.
const nonTerminalPods = "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)

// Snapshot is one read of the cluster. Objects are as the API server returned them, except that
// metadata.managedFields is dropped unless SnapshotOptions.KeepManagedFields is set (it is often a third
// of an object's size and no scheduling decision reads it).
type Snapshot struct {
	Nodes []corev1.Node
	// Pods are the non-terminal pods (phase neither Succeeded nor Failed), bound or not, in listed order.
	Pods []corev1.Pod
	// Bound points at the Pods bound to a node (spec.nodeName set), in listed order.
	Bound []*corev1.Pod
	// Pending points at the Pods not bound to a node yet (spec.nodeName empty), in listed order. Whether
	// one is provisionable (unschedulable, not a daemon, not being deleted) is the caller's decision.
	Pending        []*corev1.Pod
	DaemonSets     []appsv1.DaemonSet
	PDBs           []policyv1.PodDisruptionBudget
	PVCs           []corev1.PersistentVolumeClaim
	PVs            []corev1.PersistentVolume
	StorageClasses []storagev1.StorageClass
	CSINodes       []storagev1.CSINode
	// Namespaces are every namespace of the cluster, whatever SnapshotOptions.Namespace says: their labels
	// are what pod (anti-)affinity namespaceSelectors match.
	Namespaces []corev1.Namespace
	// NodesResourceVersion and PodsResourceVersion are the revisions the two lists were read at; the
	// pods' is never older than the nodes'.
	NodesResourceVersion, PodsResourceVersion string
}

// SnapshotOptions narrows and tunes a snapshot. The zero value reads the whole cluster.
type SnapshotOptions struct {
	// PageSize is the list page size; 0 means DefaultPageSize.
	PageSize int64
	// Namespace limits pods, DaemonSets, PDBs and PVCs to one namespace; empty means all.
	Namespace string
	// NodeSelector and PodSelector are label selectors (kubectl syntax) on Nodes and pods.
	NodeSelector, PodSelector string
	// KeepManagedFields keeps metadata.managedFields on Nodes and pods.
	KeepManagedFields bool
}

// Snapshotter reads Snapshots. The clientset should be built with NewClientset (protobuf); it works with
// any kubernetes.Interface.
type Snapshotter struct {
	client kubernetes.Interface
	opts   SnapshotOptions
	// lastNodes and lastPods size the next snapshot's slices, so a warm function allocates them once.
	lastNodes, lastPods atomic.Int64
}

// NewSnapshotter returns a Snapshotter that reads through client.
func NewSnapshotter(client kubernetes.Interface, opts SnapshotOptions) *Snapshotter {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	return &Snapshotter{client: client, opts: opts}
}

// Snapshot reads the cluster: Nodes first, then, in parallel, pods and the other kinds. It returns either
// every list whole or an error wrapping ErrIncomplete and no data.
//
// Consistency. Every list is a paginated consistent read (ResourceVersion unset, Limit and Continue):
// the first page is served at the latest revision (from the watch cache on Kubernetes 1.31+, once the
// cache has caught up with etcd; from etcd before), and each continuation returns the rest of that same
// revision, so a list is one point in time even across pages. ResourceVersion "0" is deliberately not
// used: it means "any revision", may be served by an API server whose cache lags (EKS runs several behind
// one endpoint), and older servers ignore Limit with it; a stale pod list could miss pods bound to a node
// and make that node look empty. Listing Nodes to completion before the first pod page makes the pod
// revision at least the node revision, so every listed Node has all its pods in the snapshot (a pod may
// name a Node created after the node list; callers treat it as bound to an unknown node). Pods are one
// list at one revision, split into bound and pending on the client, so a pod binding while the snapshot
// is read is seen exactly once. A continuation that expires (410, the revision was compacted) restarts
// that list with one unpaginated read.
func (s *Snapshotter) Snapshot(ctx context.Context) (*Snapshot, error) {
	snap, err := s.read(ctx)
	if err != nil {
		return nil, &domainError{kind: ErrIncomplete, cause: fmt.Errorf("reading cluster snapshot: %w", err)}
	}
	return snap, nil
}

func (s *Snapshotter) read(ctx context.Context) (*Snapshot, error) {
	core, o := s.client.CoreV1(), s.opts
	snap := &Snapshot{}
	var err error
	if snap.Nodes, snap.NodesResourceVersion, err = s.listNodes(ctx); err != nil {
		return nil, err
	}

	g, ctx := crash.WithContext(ctx) // a list goroutine's panic comes back as the snapshot's error
	ns := o.Namespace
	g.Go(func() (err error) {
		if snap.Pods, snap.PodsResourceVersion, err = s.listPods(ctx); err != nil {
			return err
		}
		snap.Bound, snap.Pending = splitPods(snap.Pods)
		return nil
	})
	g.Go(func() (err error) {
		snap.DaemonSets, err = listFlat(ctx, "daemonsets", o.PageSize,
			func(ctx context.Context, opts metav1.ListOptions) ([]appsv1.DaemonSet, metav1.ListMeta, error) {
				l, err := s.client.AppsV1().DaemonSets(ns).List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				return l.Items, l.ListMeta, nil
			})
		return err
	})
	g.Go(func() (err error) {
		snap.PDBs, err = listFlat(ctx, "poddisruptionbudgets", o.PageSize,
			func(ctx context.Context, opts metav1.ListOptions) ([]policyv1.PodDisruptionBudget, metav1.ListMeta, error) {
				l, err := s.client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				return l.Items, l.ListMeta, nil
			})
		return err
	})
	g.Go(func() (err error) {
		snap.PVCs, err = listFlat(ctx, "persistentvolumeclaims", o.PageSize,
			func(ctx context.Context, opts metav1.ListOptions) ([]corev1.PersistentVolumeClaim, metav1.ListMeta, error) {
				l, err := core.PersistentVolumeClaims(ns).List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				return l.Items, l.ListMeta, nil
			})
		return err
	})
	g.Go(func() (err error) {
		snap.PVs, err = listFlat(ctx, "persistentvolumes", o.PageSize,
			func(ctx context.Context, opts metav1.ListOptions) ([]corev1.PersistentVolume, metav1.ListMeta, error) {
				l, err := core.PersistentVolumes().List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				return l.Items, l.ListMeta, nil
			})
		return err
	})
	g.Go(func() (err error) {
		snap.StorageClasses, err = listFlat(ctx, "storageclasses", o.PageSize,
			func(ctx context.Context, opts metav1.ListOptions) ([]storagev1.StorageClass, metav1.ListMeta, error) {
				l, err := s.client.StorageV1().StorageClasses().List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				return l.Items, l.ListMeta, nil
			})
		return err
	})
	g.Go(func() (err error) {
		snap.CSINodes, err = listFlat(ctx, "csinodes", o.PageSize,
			func(ctx context.Context, opts metav1.ListOptions) ([]storagev1.CSINode, metav1.ListMeta, error) {
				l, err := s.client.StorageV1().CSINodes().List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				return l.Items, l.ListMeta, nil
			})
		return err
	})
	g.Go(func() (err error) {
		snap.Namespaces, err = listFlat(ctx, "namespaces", o.PageSize,
			func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Namespace, metav1.ListMeta, error) {
				l, err := core.Namespaces().List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				return l.Items, l.ListMeta, nil
			})
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return snap, nil
}

// listNodes lists the selected Nodes, streamed over the REST client when there is one.
func (s *Snapshotter) listNodes(ctx context.Context) ([]corev1.Node, string, error) {
	o, core := s.opts, s.client.CoreV1()
	opts := metav1.ListOptions{LabelSelector: o.NodeSelector}
	var (
		nodes []corev1.Node
		rv    string
		err   error
	)
	if rc := restClient(core.RESTClient()); rc != nil {
		nodes, rv, err = streamList[corev1.Node](ctx, listRequest{client: rc, resource: "nodes", what: "nodes",
			pageSize: o.PageSize, base: opts, capacity: capacityHint(&s.lastNodes)}, s.trimNodes)
	} else {
		var pages [][]corev1.Node
		pages, rv, err = listAll(ctx, "nodes", o.PageSize, opts,
			func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Node, metav1.ListMeta, error) {
				l, err := core.Nodes().List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				s.trimNodes(l.Items)
				return l.Items, l.ListMeta, nil
			})
		nodes = flatten(pages)
	}
	if err != nil {
		return nil, "", err
	}
	s.lastNodes.Store(int64(len(nodes)))
	return nodes, rv, nil
}

// listPods lists the selected non-terminal pods, streamed over the REST client when there is one.
func (s *Snapshotter) listPods(ctx context.Context) ([]corev1.Pod, string, error) {
	o, core := s.opts, s.client.CoreV1()
	opts := metav1.ListOptions{FieldSelector: nonTerminalPods, LabelSelector: o.PodSelector}
	var (
		pods []corev1.Pod
		rv   string
		err  error
	)
	if rc := restClient(core.RESTClient()); rc != nil {
		pods, rv, err = streamList[corev1.Pod](ctx, listRequest{client: rc, resource: "pods", namespace: o.Namespace,
			what: "pods", pageSize: o.PageSize, base: opts, capacity: capacityHint(&s.lastPods)}, s.trimPods)
	} else {
		var pages [][]corev1.Pod
		pages, rv, err = listAll(ctx, "pods", o.PageSize, opts,
			func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Pod, metav1.ListMeta, error) {
				l, err := core.Pods(o.Namespace).List(ctx, opts)
				if err != nil {
					return nil, metav1.ListMeta{}, err
				}
				s.trimPods(l.Items)
				return l.Items, l.ListMeta, nil
			})
		pods = flatten(pages)
	}
	if err != nil {
		return nil, "", err
	}
	s.lastPods.Store(int64(len(pods)))
	return pods, rv, nil
}

func (s *Snapshotter) trimNodes(nodes []corev1.Node) {
	if !s.opts.KeepManagedFields {
		for i := range nodes {
			nodes[i].ManagedFields = nil
		}
	}
}

func (s *Snapshotter) trimPods(pods []corev1.Pod) {
	if !s.opts.KeepManagedFields {
		for i := range pods {
			pods[i].ManagedFields = nil
		}
	}
}

// capacityHint is the previous count plus a tenth, so a cluster that grew a little still fits at once.
func capacityHint(last *atomic.Int64) int {
	n := last.Load()
	return int(n + n/10)
}

// listFlat lists a kind whole, without selectors, as one slice.
func listFlat[T any](ctx context.Context, what string, pageSize int64, list pageLister[T]) ([]T, error) {
	pages, _, err := listAll(ctx, what, pageSize, metav1.ListOptions{}, list)
	if err != nil {
		return nil, err
	}
	return flatten(pages), nil
}

// splitPods points at the bound and the pending pods, keeping their order.
func splitPods(pods []corev1.Pod) (bound, pending []*corev1.Pod) {
	bound = make([]*corev1.Pod, 0, len(pods))
	for i := range pods {
		if pods[i].Spec.NodeName != "" {
			bound = append(bound, &pods[i])
		} else {
			pending = append(pending, &pods[i])
		}
	}
	return bound, pending
}

// Pod reads one pod as the API server has it now (a quorum read).
func (s *Snapshotter) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return s.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

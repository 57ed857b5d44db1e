package kube

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/nodewright/nodewright/shared/adapters/crash"
)

// DefaultPageSize is how many objects one list request asks for: 15 round trips for 30,000 pods (the next
// page is fetched while one is decoded), and responses of about 17 MB for pods of 8.4 KB, of which two
// are held at once. Pages of 5,000 held two 42 MB responses, each read into buffers of 64 MB: an eighth of
// the provisioner's 1 GB at 30,000 pods.
const DefaultPageSize = 2000

// nonTerminalPods selects pods that still hold (or will hold) node resources: terminal pods (Succeeded,
// Failed) are filtered out by the API server, never transferred.
const nonTerminalPods = "status.phase!=" + string(corev1.PodSucceeded) + ",status.phase!=" + string(corev1.PodFailed)

// Snapshot is one read of the cluster. Nodes and pods are trimmed (TrimNode, TrimPod: what no decision
// reads is dropped) unless SnapshotOptions.Untrimmed is set. Snapshots share their objects with the
// Snapshotter's view and with each other: callers must not modify them.
type Snapshot struct {
	Nodes []corev1.Node
	// Bound points at the non-terminal pods (phase neither Succeeded nor Failed) bound to a node
	// (spec.nodeName set), in namespace/name order.
	Bound []*corev1.Pod
	// Pending points at the non-terminal pods not bound to a node yet (spec.nodeName empty), in
	// namespace/name order. Whether one is provisionable (unschedulable, not a daemon, not being deleted) is
	// the caller's decision.
	Pending []*corev1.Pod
	// The other kinds, each in namespace/name order and trimmed (see the Trim functions) unless
	// SnapshotOptions.Untrimmed is set.
	DaemonSets     []*appsv1.DaemonSet
	PDBs           []*policyv1.PodDisruptionBudget
	PVCs           []*corev1.PersistentVolumeClaim
	PVs            []*corev1.PersistentVolume
	StorageClasses []*storagev1.StorageClass
	CSINodes       []*storagev1.CSINode
	// Namespaces are every namespace of the cluster, whatever SnapshotOptions.Namespace says: their labels
	// are what pod (anti-)affinity namespaceSelectors match.
	Namespaces []*corev1.Namespace
	// NodesResourceVersion and PodsResourceVersion are the revisions the two lists were read at; the
	// pods' is never older than the nodes' (with FromCache, each is its own kind's latest revision in the
	// watch cache, the pods' read after the Nodes', and the two are not ordered).
	NodesResourceVersion, PodsResourceVersion string
	// NodesRead and PodsRead say how the Nodes and the pods were brought up to date: listed whole, caught
	// up with a watch, or unchanged since the previous snapshot.
	NodesRead, PodsRead ReadMode
	// KindsRead says the same of each other kind, by its resource name ("persistentvolumeclaims").
	KindsRead map[string]ReadMode
}

// SnapshotOptions narrows and tunes a snapshot. The zero value reads the whole cluster.
type SnapshotOptions struct {
	// PageSize is the list page size; 0 means DefaultPageSize.
	PageSize int64
	// Namespace limits pods, DaemonSets, PDBs and PVCs to one namespace; empty means all.
	Namespace string
	// NodeSelector and PodSelector are label selectors (kubectl syntax) on Nodes and pods.
	NodeSelector, PodSelector string
	// WatchAfter: a warm Snapshotter catches a kind up with a watch when listing it whole took at least
	// this long, and lists it again otherwise; 0 means DefaultWatchAfter, negative always watches.
	WatchAfter time.Duration
	// Untrimmed keeps Nodes and pods as the API server sends them (TrimNode and TrimPod are not applied).
	Untrimmed bool
	// FromCache: a warm view asks for its kind's own latest revision in the API server's watch cache (a
	// one-item list served from the cache) rather than for the cluster's current revision (a consistent
	// one). The view is then as current as the watch cache, which follows etcd within milliseconds, and a
	// kind whose watch cache has not moved past the view's revision is known unchanged at once. With the
	// cluster's revision, a busy cluster (Leases, Events) always has moved on, and a kind that did not change
	// was known current only by its watch's bookmark, 1 to 2.25 s in: at 1,000 Nodes and 30,000 pods a
	// provisioner run with nothing changed read for 2.3-2.8 s, waiting for the Nodes' bookmark and then the
	// pods'. A watch cache moved on by a progress notification alone (someone's consistent list) still
	// ends its catch-up at the bookmark.
	FromCache bool
}

// catchUp is the rule a warm view of each kind is read by: WatchAfter, and any kind whose whole list is
// tiny (RelistBelowBytes) is listed again unless WatchAfter is negative.
func (o SnapshotOptions) catchUp() catchUpRule {
	r := catchUpRule{watchAfter: o.WatchAfter, fromCache: o.FromCache}
	if o.WatchAfter >= 0 {
		r.relistBelow = RelistBelowBytes
	}
	return r
}

// Snapshotter reads Snapshots. The clientset should be built with NewClientset (protobuf); it works with
// any kubernetes.Interface. Over a real REST client it keeps the Nodes and pods it read as a view, so a
// warm function reads only what changed since its previous snapshot (see view.refresh); over a fake
// clientset every snapshot lists everything.
type Snapshotter struct {
	client kubernetes.Interface
	opts   SnapshotOptions
	// mu serializes snapshots: each brings the views forward.
	mu    sync.Mutex
	nodes view[corev1.Node, *corev1.Node]
	pods  view[corev1.Pod, *corev1.Pod]
	// The views of the other kinds (see kind).
	daemonSets     view[appsv1.DaemonSet, *appsv1.DaemonSet]
	pdbs           view[policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudget]
	pvcs           view[corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaim]
	pvs            view[corev1.PersistentVolume, *corev1.PersistentVolume]
	storageClasses view[storagev1.StorageClass, *storagev1.StorageClass]
	csiNodes       view[storagev1.CSINode, *storagev1.CSINode]
	namespaces     view[corev1.Namespace, *corev1.Namespace]
	// intern shares equal maps and strings between the pods of the view; a whole list starts a new one.
	intern *interner
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
// and make that node look empty. A warm Snapshotter brings its views of Nodes and pods forward instead of
// listing them again (view.refresh says how it knows a view is current: a consistent one-item read gives
// the revision to reach, and a watch from the view's revision delivers every change up to it). Nodes are
// brought up to date before the pods' revision is read, so the pod revision is at least the node
// revision and every Node in the snapshot has all its pods in it (a pod may name a Node created after
// the Nodes were read; callers treat it as bound to an unknown node). Pods are one view at one revision,
// split into bound and pending on the client, so a pod binding while the snapshot is read is seen exactly
// once. A continuation that expires (410, the revision was compacted) restarts that list with one
// unpaginated read.
func (s *Snapshotter) Snapshot(ctx context.Context) (*Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	if err = s.readNodes(ctx, snap); err != nil {
		return nil, err
	}

	g, ctx := crash.WithContext(ctx) // a list goroutine's panic comes back as the snapshot's error
	g.Go(func() error { return s.readPods(ctx, snap) })
	// The other kinds are read while the pods are. When the pods are caught up with a watch, so is each of
	// them however fast it lists, unless its whole list is tiny (RelistBelowBytes): a warm snapshot then
	// reads none of the sizeable ones whole (at 1,000 nodes the PVCs and PVs of StatefulSet pods alone are
	// megabytes).
	catchUp := o.catchUp()
	if s.pods.watches(defaultWatchAfter(o.WatchAfter), catchUp.relistBelow) {
		catchUp.watchAfter = -1
	}
	snap.KindsRead = make(map[string]ReadMode, 7)
	var modes sync.Mutex
	read := func(what string, r func() (ReadMode, error)) {
		g.Go(func() error {
			mode, err := r()
			modes.Lock()
			snap.KindsRead[what] = mode
			modes.Unlock()
			return err
		})
	}
	apps, policy, storage, ns := s.client.AppsV1(), s.client.PolicyV1(), s.client.StorageV1(), o.Namespace
	read("daemonsets", func() (mode ReadMode, err error) {
		snap.DaemonSets, mode, err = kind[appsv1.DaemonSet, *appsv1.DaemonSet]{resource: "daemonsets", namespace: ns, rest: apps.RESTClient(),
			list:  typedList(apps.DaemonSets(ns).List, func(l *appsv1.DaemonSetList) ([]appsv1.DaemonSet, metav1.ListMeta) { return l.Items, l.ListMeta }),
			watch: apps.DaemonSets(ns).Watch, trim: s.trimDaemonSet}.read(ctx, catchUp, &s.daemonSets, o.PageSize)
		return mode, err
	})
	read("poddisruptionbudgets", func() (mode ReadMode, err error) {
		snap.PDBs, mode, err = kind[policyv1.PodDisruptionBudget, *policyv1.PodDisruptionBudget]{resource: "poddisruptionbudgets", namespace: ns,
			rest: policy.RESTClient(), list: typedList(policy.PodDisruptionBudgets(ns).List,
				func(l *policyv1.PodDisruptionBudgetList) ([]policyv1.PodDisruptionBudget, metav1.ListMeta) {
					return l.Items, l.ListMeta
				}),
			watch: policy.PodDisruptionBudgets(ns).Watch, trim: trimMeta[*policyv1.PodDisruptionBudget](s.opts)}.read(ctx, catchUp, &s.pdbs, o.PageSize)
		return mode, err
	})
	read("persistentvolumeclaims", func() (mode ReadMode, err error) {
		snap.PVCs, mode, err = kind[corev1.PersistentVolumeClaim, *corev1.PersistentVolumeClaim]{resource: "persistentvolumeclaims", namespace: ns,
			rest: core.RESTClient(), list: typedList(core.PersistentVolumeClaims(ns).List,
				func(l *corev1.PersistentVolumeClaimList) ([]corev1.PersistentVolumeClaim, metav1.ListMeta) {
					return l.Items, l.ListMeta
				}),
			watch: core.PersistentVolumeClaims(ns).Watch, trim: trimMeta[*corev1.PersistentVolumeClaim](s.opts)}.read(ctx, catchUp, &s.pvcs, o.PageSize)
		return mode, err
	})
	read("persistentvolumes", func() (mode ReadMode, err error) {
		snap.PVs, mode, err = kind[corev1.PersistentVolume, *corev1.PersistentVolume]{resource: "persistentvolumes", rest: core.RESTClient(),
			list: typedList(core.PersistentVolumes().List,
				func(l *corev1.PersistentVolumeList) ([]corev1.PersistentVolume, metav1.ListMeta) {
					return l.Items, l.ListMeta
				}),
			watch: core.PersistentVolumes().Watch, trim: trimMeta[*corev1.PersistentVolume](s.opts)}.read(ctx, catchUp, &s.pvs, o.PageSize)
		return mode, err
	})
	read("storageclasses", func() (mode ReadMode, err error) {
		snap.StorageClasses, mode, err = kind[storagev1.StorageClass, *storagev1.StorageClass]{resource: "storageclasses", rest: storage.RESTClient(),
			list: typedList(storage.StorageClasses().List,
				func(l *storagev1.StorageClassList) ([]storagev1.StorageClass, metav1.ListMeta) {
					return l.Items, l.ListMeta
				}),
			watch: storage.StorageClasses().Watch, trim: trimMeta[*storagev1.StorageClass](s.opts)}.read(ctx, catchUp, &s.storageClasses, o.PageSize)
		return mode, err
	})
	read("csinodes", func() (mode ReadMode, err error) {
		snap.CSINodes, mode, err = kind[storagev1.CSINode, *storagev1.CSINode]{resource: "csinodes", rest: storage.RESTClient(),
			list:  typedList(storage.CSINodes().List, func(l *storagev1.CSINodeList) ([]storagev1.CSINode, metav1.ListMeta) { return l.Items, l.ListMeta }),
			watch: storage.CSINodes().Watch, trim: trimMeta[*storagev1.CSINode](s.opts)}.read(ctx, catchUp, &s.csiNodes, o.PageSize)
		return mode, err
	})
	read("namespaces", func() (mode ReadMode, err error) {
		snap.Namespaces, mode, err = kind[corev1.Namespace, *corev1.Namespace]{resource: "namespaces", rest: core.RESTClient(),
			list:  typedList(core.Namespaces().List, func(l *corev1.NamespaceList) ([]corev1.Namespace, metav1.ListMeta) { return l.Items, l.ListMeta }),
			watch: core.Namespaces().Watch, trim: trimMeta[*corev1.Namespace](s.opts)}.read(ctx, catchUp, &s.namespaces, o.PageSize)
		return mode, err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return snap, nil
}

// readNodes brings the selected Nodes up to date.
func (s *Snapshotter) readNodes(ctx context.Context, snap *Snapshot) (err error) {
	snap.Nodes, snap.NodesResourceVersion, snap.NodesRead, err = readNodes(ctx, s.client, &s.nodes, s.opts, s.trimNode)
	return err
}

// readNodes brings the Nodes selected by o up to date: through the view v over a REST client, listed
// whole otherwise. The Nodes are copies of the view's (their maps and slices are shared).
func readNodes(ctx context.Context, client kubernetes.Interface, v *view[corev1.Node, *corev1.Node], o SnapshotOptions,
	trim func(*corev1.Node)) ([]corev1.Node, string, ReadMode, error) {
	core := client.CoreV1()
	base := metav1.ListOptions{LabelSelector: o.NodeSelector}
	if rc := restClient(core.RESTClient()); rc != nil {
		mode, err := v.refresh(ctx, restSource(rc, "nodes", "", o.PageSize, o.catchUp(), base,
			func(ctx context.Context, opts metav1.ListOptions) (string, error) {
				l, err := core.Nodes().List(ctx, opts)
				if err != nil {
					return "", err
				}
				return l.ResourceVersion, nil
			}, core.Nodes().Watch, trim))
		if err != nil {
			return nil, "", "", err
		}
		list := v.list()
		nodes := make([]corev1.Node, len(list))
		for i, n := range list {
			nodes[i] = *n
		}
		return nodes, v.rv, mode, nil
	}
	pages, rv, err := listAll(ctx, "nodes", o.PageSize, base,
		func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Node, metav1.ListMeta, error) {
			l, err := core.Nodes().List(ctx, opts)
			if err != nil {
				return nil, metav1.ListMeta{}, err
			}
			for i := range l.Items {
				trim(&l.Items[i])
			}
			return l.Items, l.ListMeta, nil
		})
	if err != nil {
		return nil, "", "", err
	}
	return flatten(pages), rv, ReadListed, nil
}

// readPods brings the selected non-terminal pods up to date, as readNodes does the Nodes.
func (s *Snapshotter) readPods(ctx context.Context, snap *Snapshot) error {
	o, core := s.opts, s.client.CoreV1()
	base := metav1.ListOptions{FieldSelector: nonTerminalPods, LabelSelector: o.PodSelector}
	if rc := restClient(core.RESTClient()); rc != nil {
		pods := core.Pods(o.Namespace)
		src := restSource(rc, "pods", o.Namespace, o.PageSize, o.catchUp(), base,
			func(ctx context.Context, opts metav1.ListOptions) (string, error) {
				l, err := pods.List(ctx, opts)
				if err != nil {
					return "", err
				}
				return l.ResourceVersion, nil
			}, pods.Watch, func(p *corev1.Pod) {
				s.trimPod(p)
				if !o.Untrimmed {
					s.intern.pod(p)
				}
			})
		src.relisting = func() { s.intern = newInterner() }
		mode, err := s.pods.refresh(ctx, src)
		if err != nil {
			return err
		}
		snap.Bound, snap.Pending = splitPods(s.pods.list())
		snap.PodsResourceVersion, snap.PodsRead = s.pods.rv, mode
		return nil
	}
	pages, rv, err := listAll(ctx, "pods", o.PageSize, base,
		func(ctx context.Context, opts metav1.ListOptions) ([]corev1.Pod, metav1.ListMeta, error) {
			l, err := core.Pods(o.Namespace).List(ctx, opts)
			if err != nil {
				return nil, metav1.ListMeta{}, err
			}
			for i := range l.Items {
				s.trimPod(&l.Items[i])
			}
			return l.Items, l.ListMeta, nil
		})
	if err != nil {
		return err
	}
	all := flatten(pages)
	ptrs := make([]*corev1.Pod, len(all))
	for i := range all {
		ptrs[i] = &all[i]
	}
	snap.Bound, snap.Pending = splitPods(ptrs)
	snap.PodsResourceVersion, snap.PodsRead = rv, ReadListed
	return nil
}

func (s *Snapshotter) trimNode(n *corev1.Node) {
	if !s.opts.Untrimmed {
		TrimNode(n)
	}
}

func (s *Snapshotter) trimPod(p *corev1.Pod) {
	if !s.opts.Untrimmed {
		TrimPod(p)
	}
}

func (s *Snapshotter) trimDaemonSet(ds *appsv1.DaemonSet) {
	if !s.opts.Untrimmed {
		TrimDaemonSet(ds)
	}
}

// trimMeta trims an object of the other kinds (TrimMeta) unless o keeps them untrimmed.
func trimMeta[PT metav1.Object](o SnapshotOptions) func(PT) {
	return func(obj PT) {
		if !o.Untrimmed {
			TrimMeta(obj)
		}
	}
}

// splitPods sorts the pods into bound and pending, keeping their order.
func splitPods(pods []*corev1.Pod) (bound, pending []*corev1.Pod) {
	bound = make([]*corev1.Pod, 0, len(pods))
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		} else {
			pending = append(pending, p)
		}
	}
	return bound, pending
}

// Pod reads one pod as the API server has it now (a quorum read).
func (s *Snapshotter) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	return s.client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
}

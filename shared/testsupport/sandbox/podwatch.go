package sandbox

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// podTimes is when the watcher first saw a pod in each state.
type podTimes struct {
	Name          string
	UID           types.UID
	Unschedulable time.Time // PodScheduled=False/Unschedulable
	Bound         time.Time // spec.nodeName set
	Running       time.Time
	Deleted       time.Time
	Node          string
}

// podWatch follows the pods matching a label selector in one namespace and stamps their transitions
// with this process's clock (status conditions carry whole seconds only).
type podWatch struct {
	mu   sync.Mutex
	pods map[types.UID]*podTimes
	stop chan struct{}
}

func watchPods(ctx context.Context, c kubernetes.Interface, namespace, selector string) (*podWatch, error) {
	w := &podWatch{pods: map[types.UID]*podTimes{}, stop: make(chan struct{})}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { w.observe(obj, false) },
		UpdateFunc: func(_, obj any) { w.observe(obj, false) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			w.observe(obj, true)
		},
	}); err != nil {
		return nil, err
	}
	f.Start(w.stop)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		close(w.stop)
		return nil, ctx.Err()
	}
	return w, nil
}

func (w *podWatch) observe(obj any, deleted bool) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	t := w.pods[p.UID]
	if t == nil {
		t = &podTimes{Name: p.Name, UID: p.UID}
		w.pods[p.UID] = t
	}
	if deleted && t.Deleted.IsZero() {
		t.Deleted = now
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable && t.Unschedulable.IsZero() {
			t.Unschedulable = now
		}
	}
	if p.Spec.NodeName != "" && t.Bound.IsZero() {
		t.Bound, t.Node = now, p.Spec.NodeName
	}
	if p.Status.Phase == corev1.PodRunning && t.Running.IsZero() {
		t.Running = now
	}
}

// snapshot copies the times of every pod seen.
func (w *podWatch) snapshot() []podTimes {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]podTimes, 0, len(w.pods))
	for _, t := range w.pods {
		out = append(out, *t)
	}
	return out
}

func (w *podWatch) close() { close(w.stop) }

package sandbox

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// mirrorWatch follows the NodeClaim mirrors (the administrator's watch, as kubectl's) and stamps, with
// this process's clock, when each mirror first showed each step of its claim.
type mirrorWatch struct {
	mu   sync.Mutex
	seen map[string]map[string]time.Time // mirror name → step (see mirrorSteps) → first seen
	// firstReady is how each mirror's Ready condition read when its status was first written
	// ("False NodeNotFound: Registered is not true: ...").
	firstReady map[string]string
	// unregistered is how each mirror's Ready condition read when it first showed its claim launched and
	// not registered (Launched True, Registered not True).
	unregistered map[string]string
	// shown is, for each mirror and disruption-state condition type (disruptionConditions), when the
	// mirror first showed it True with each lastTransitionTime (the condition's time → first seen).
	shown map[string]map[string]map[time.Time]time.Time
	tl    *Timeline
	stop  chan struct{}
}

// Steps of a claim and of its mirror: the claim's record stamps each step; the mirror shows it once it
// exists (created) or has the condition True.
const (
	stepCreated = "Created"
)

var mirrorSteps = []string{stepCreated, apis.ConditionTypeLaunched, apis.ConditionTypeRegistered, apis.ConditionTypeInitialized}

func (s *Sandbox) watchMirrors(ctx context.Context) (*mirrorWatch, error) {
	dyn, err := dynamic.NewForConfig(s.CP.Config)
	if err != nil {
		return nil, err
	}
	w := &mirrorWatch{seen: map[string]map[string]time.Time{}, firstReady: map[string]string{}, unregistered: map[string]string{},
		shown: map[string]map[string]map[time.Time]time.Time{}, tl: s.Timeline, stop: make(chan struct{})}
	f := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0)
	inf := f.ForResource(mirror.NodeClaims.Resource()).Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    w.observe,
		UpdateFunc: func(_, obj any) { w.observe(obj) },
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

func (w *mirrorWatch) observe(obj any) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	name := u.GetName()
	node, _, _ := unstructured.NestedString(u.Object, "status", "nodeName")
	if node == "" {
		node = "<none>"
	}
	ready := readyOf(u)
	steps := w.seen[name]
	if steps == nil {
		steps = map[string]time.Time{stepCreated: now}
		w.seen[name] = steps
	}
	if _, shown := w.firstReady[name]; !shown && ready != "" {
		// A new mirror is created first and its status written next: this is its first status.
		w.firstReady[name] = ready
		w.tl.Printf("mirrors", "nodeclaims.nodewright.sh/%s: NODE %s, READY %s", name, node, ready)
	}
	conds := mirrorConditions(u)
	if _, seen := w.unregistered[name]; !seen && conds[apis.ConditionTypeLaunched].status == metav1.ConditionTrue &&
		conds[apis.ConditionTypeRegistered].status != metav1.ConditionTrue {
		w.unregistered[name] = ready
		w.tl.Printf("mirrors", "nodeclaims.nodewright.sh/%s launched, not registered: NODE %s, READY %s", name, node, ready)
	}
	for _, typ := range mirrorSteps[1:] {
		if _, done := steps[typ]; !done && conds[typ].status == metav1.ConditionTrue {
			steps[typ] = now
		}
	}
	w.noteDisruptionState(name, conds, now)
	if _, done := steps[mirror.ConditionReady]; !done && conds[mirror.ConditionReady].status == metav1.ConditionTrue {
		steps[mirror.ConditionReady] = now
		w.tl.Printf("mirrors", "nodeclaims.nodewright.sh/%s: NODE %s, READY True", name, node)
	}
}

// readyOf is the mirror's Ready condition as "<status> <reason>: <message>" ("" when it has none).
func readyOf(u *unstructured.Unstructured) string {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == mirror.ConditionReady {
			return strings.TrimSuffix(fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"]), ": <nil>")
		}
	}
	return ""
}

func (w *mirrorWatch) firstSeen(name, step string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, ok := w.seen[name][step]
	return t, ok
}

// readyWhileUnregistered is how the mirror's Ready condition read when it first showed its claim launched
// and not registered; ok is false when it never did.
func (w *mirrorWatch) readyWhileUnregistered(name string) (ready string, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ready, ok = w.unregistered[name]
	return ready, ok
}

func (w *mirrorWatch) close() { close(w.stop) }

// condition is what the checks compare of a mirror's condition.
type condition struct {
	status metav1.ConditionStatus
	reason string
	// since is its lastTransitionTime (zero when unreadable).
	since time.Time
}

// mirrorConditions are the mirror's conditions by type.
func mirrorConditions(u *unstructured.Unstructured) map[string]condition {
	out := map[string]condition{}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		typ, _ := m["type"].(string)
		st, _ := m["status"].(string)
		reason, _ := m["reason"].(string)
		ltt, _ := m["lastTransitionTime"].(string)
		since, _ := time.Parse(time.RFC3339, ltt)
		out[typ] = condition{status: metav1.ConditionStatus(st), reason: reason, since: since}
	}
	return out
}

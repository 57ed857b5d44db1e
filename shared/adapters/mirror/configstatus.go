package mirror

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// Bounds of the Events a StatusWriter publishes (on top of the Recorder's own rate limit).
const (
	// maxStatusEvents bounds the Events of one Write.
	maxStatusEvents = 20
	// statusEventEvery is how often an Event about a state that lasts is published again (the same
	// object, reason and message); a new reason or message is published at once.
	statusEventEvery = 10 * time.Minute
)

// Configuration is one run's view of the configured NodePools and EC2NodeClasses: what their mirrors
// are built from.
type Configuration struct {
	// Pools are the stored NodePools (Class is filled in by Write, from Classes).
	Pools []Pool
	// Classes are the stored EC2NodeClasses this run resolved.
	Classes []Class
	// Unresolved names the stored EC2NodeClasses whose resolution failed this run (an AWS read past its
	// retries): their mirrors are left as they are, and their pools' NodeClassReady as last written.
	Unresolved []string
}

// Syncer keeps one kind's mirrors equal to what it is given; *Writer satisfies it.
type Syncer interface {
	Sync(ctx context.Context, objs []Object, whole bool) (Report, error)
	UID(name string) types.UID
}

// EventPublisher publishes Kubernetes Events, best effort; *kube.Recorder satisfies it.
type EventPublisher interface {
	Publish(ctx context.Context, e kube.Event) (bool, error)
}

var (
	_ Syncer         = (*Writer)(nil)
	_ EventPublisher = (*kube.Recorder)(nil)
)

// StatusWriter writes the NodePool and EC2NodeClass mirrors of the configuration, on change only and
// within each Writer's bound, and publishes the Events Karpenter puts on those objects: NodeClassNotReady
// on a NodePool whose EC2NodeClass is not ready, and the class's not-ready reason on the EC2NodeClass. It
// remembers between runs, in the process, each mirror's conditions (so an unchanged condition keeps its
// transition time) and the Events it published. Safe for concurrent use.
type StatusWriter struct {
	pools, classes Syncer
	events         EventPublisher

	mu sync.Mutex
	// conditions are the conditions last built, by "<kind>/<name>".
	conditions map[string][]metav1.Condition
	// published are the Events last published, by object key and reason: the message and when.
	published map[string]publishedEvent
}

type publishedEvent struct {
	message string
	at      time.Time
}

// NewStatusWriter writes pools' and classes' mirrors through the two writers and publishes through events
// (nil: no Events).
func NewStatusWriter(pools, classes Syncer, events EventPublisher) *StatusWriter {
	return &StatusWriter{pools: pools, classes: classes, events: events, conditions: map[string][]metav1.Condition{},
		published: map[string]publishedEvent{}}
}

// StatusReport is what a Write did.
type StatusReport struct {
	// Pools and Classes are the two writers' reports.
	Pools, Classes Report
	// Events counts the Events published.
	Events int
	// Errors are what failed (a writer that could not learn the cluster's mirrors, Events that could not
	// be published); the next run tries again.
	Errors []string
}

// Write builds the mirrors of cfg at now and writes what changed. The classes are written whole (mirrors
// of classes no longer configured are deleted) unless a class could not be resolved; the pools always.
func (s *StatusWriter) Write(ctx context.Context, cfg Configuration, now time.Time) StatusReport {
	var rep StatusReport
	classObjs := make([]Object, 0, len(cfg.Classes))
	ready := map[string]*metav1.Condition{}
	configured := map[string]bool{}
	for _, c := range cfg.Classes {
		obj := EC2NodeClass(c, now)
		st := obj.Status.(apis.EC2NodeClassStatus)
		s.keepTimes(EC2NodeClasses, obj.Name, st.Conditions)
		obj.Status = st
		classObjs = append(classObjs, obj)
		ready[obj.Name] = readyOf(st.Conditions)
		configured[obj.Name] = true
	}
	for _, name := range cfg.Unresolved {
		configured[name] = true
		if prev := readyOf(s.lastConditions(EC2NodeClasses, name)); prev != nil {
			ready[name] = prev
		} else {
			ready[name] = &metav1.Condition{Type: apis.ConditionTypeReady, Status: metav1.ConditionUnknown}
		}
	}
	poolObjs := make([]Object, 0, len(cfg.Pools))
	for _, p := range cfg.Pools {
		if ref := p.NodePool.Spec.Template.Spec.NodeClassRef; ref != nil && configured[ref.Name] {
			p.Class = ready[ref.Name]
		}
		obj := NodePool(p, now)
		st := obj.Status.(NodePoolStatus)
		s.keepTimes(NodePools, obj.Name, st.Conditions)
		obj.Status = st
		poolObjs = append(poolObjs, obj)
	}
	sortedByName(classObjs)
	sortedByName(poolObjs)

	var wg sync.WaitGroup
	var poolErr, classErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		rep.Classes, classErr = s.classes.Sync(ctx, classObjs, len(cfg.Unresolved) == 0)
	}()
	go func() {
		defer wg.Done()
		rep.Pools, poolErr = s.pools.Sync(ctx, poolObjs, true)
	}()
	wg.Wait()
	for _, e := range []struct {
		kind Kind
		err  error
		rep  Report
	}{{EC2NodeClasses, classErr, rep.Classes}, {NodePools, poolErr, rep.Pools}} {
		if e.err != nil {
			rep.Errors = append(rep.Errors, e.kind.Singular+" mirrors: "+e.err.Error())
		}
		rep.Errors = append(rep.Errors, e.rep.Errors...)
	}
	s.publish(ctx, classObjs, poolObjs, now, &rep)
	return rep
}

// keepTimes gives conds the transition times last built for the same object where their status did not
// change, and remembers them.
func (s *StatusWriter) keepTimes(k Kind, name string, conds []metav1.Condition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := k.Plural + "/" + name
	KeepTransitionTimes(conds, s.conditions[key])
	s.conditions[key] = append([]metav1.Condition(nil), conds...)
}

func (s *StatusWriter) lastConditions(k Kind, name string) []metav1.Condition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conditions[k.Plural+"/"+name]
}

// publish tells of the classes that are not ready, on the class and on each pool using it. An Event waits
// until the writer knows its mirror's UID (a mirror created this run is learned at the next), so that
// `kubectl describe` shows it.
func (s *StatusWriter) publish(ctx context.Context, classes, pools []Object, now time.Time, rep *StatusReport) {
	if s.events == nil {
		return
	}
	var out []kube.Event
	for _, o := range classes {
		r := readyOf(o.Status.(apis.EC2NodeClassStatus).Conditions)
		if r == nil || r.Status != metav1.ConditionFalse {
			continue
		}
		if uid := s.classes.UID(o.Name); uid != "" {
			out = append(out, kube.Event{Object: ObjectRef(EC2NodeClasses, o.Name, uid), Type: corev1.EventTypeWarning,
				Reason: kube.Reason(r.Reason), Message: fmt.Sprintf("EC2NodeClass %s is not ready: %s", o.Name, r.Message)})
		}
	}
	for _, o := range pools {
		st := o.Status.(NodePoolStatus)
		var c *metav1.Condition
		for i := range st.Conditions {
			if st.Conditions[i].Type == apis.ConditionTypeNodeClassReady {
				c = &st.Conditions[i]
			}
		}
		if c == nil || c.Status == metav1.ConditionTrue {
			continue
		}
		if uid := s.pools.UID(o.Name); uid != "" {
			out = append(out, kube.Event{Object: ObjectRef(NodePools, o.Name, uid), Type: corev1.EventTypeWarning,
				Reason: kube.ReasonNodeClassNotReady, Message: fmt.Sprintf("NodePool %s launches nothing: %s: %s", o.Name, c.Reason, c.Message)})
		}
	}
	for _, e := range out {
		if rep.Events >= maxStatusEvents {
			return
		}
		key := e.Object.Kind + "/" + e.Object.Name + "/" + string(e.Reason)
		s.mu.Lock()
		last, seen := s.published[key]
		s.mu.Unlock()
		if seen && last.message == e.Message && now.Sub(last.at) < statusEventEvery {
			continue
		}
		wrote, err := s.events.Publish(ctx, e)
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			continue
		}
		s.mu.Lock()
		s.published[key] = publishedEvent{message: e.Message, at: now}
		s.mu.Unlock()
		if wrote {
			rep.Events++
		}
	}
}

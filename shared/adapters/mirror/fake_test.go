package mirror

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// fakeAPI is a stateful stand-in for one kind's API: objects with revisions, a change log the watches
// replay, and a count of every request.
type fakeAPI struct {
	mu       sync.Mutex
	rev      uint64
	objects  map[string]*fakeObject
	log      []watch.Event
	compact  uint64 // watches from before this revision answer 410 Gone
	missing  bool   // the CRD is not installed
	failNext map[string]error

	lists, watches, applies, statusApplies, replaces, deletes, releases int
}

type fakeObject struct {
	rv          uint64
	uid         types.UID
	finalizers  []string
	deleting    *metav1.Time
	labels      map[string]string
	annotations map[string]string
	spec        any
	status      any
}

func newFakeAPI() *fakeAPI {
	return &fakeAPI{objects: map[string]*fakeObject{}, failNext: map[string]error{}}
}

var (
	_ API          = (*fakeAPI)(nil)
	_ finalizerAPI = (*fakeAPI)(nil)
)

func (f *fakeAPI) writes() int { return f.applies + f.statusApplies + f.replaces + f.deletes }

func (f *fakeAPI) resetCounts() {
	f.lists, f.watches, f.applies, f.statusApplies, f.replaces, f.deletes, f.releases = 0, 0, 0, 0, 0, 0, 0
}

func (f *fakeAPI) notFound() error {
	return apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, "")
}

func (f *fakeAPI) meta(name string, o *fakeObject) *metav1.PartialObjectMetadata {
	uid := o.uid
	if uid == "" {
		uid = types.UID("uid-" + name)
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: strconv.FormatUint(o.rv, 10),
		UID: uid, Labels: maps.Clone(o.labels), Annotations: maps.Clone(o.annotations), Finalizers: slices.Clone(o.finalizers),
		DeletionTimestamp: o.deleting}}
}

// record bumps the revision for a change of name and logs it.
func (f *fakeAPI) record(typ watch.EventType, name string, o *fakeObject) {
	f.rev++
	o.rv = f.rev
	f.log = append(f.log, watch.Event{Type: typ, Object: f.meta(name, o)})
}

func (f *fakeAPI) ListMetadata(_ context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	if f.missing {
		return nil, f.notFound()
	}
	names := slices.Sorted(maps.Keys(f.objects))
	start := 0
	if opts.Continue != "" {
		start, _ = strconv.Atoi(opts.Continue)
	}
	end := len(names)
	if opts.Limit > 0 && start+int(opts.Limit) < end {
		end = start + int(opts.Limit)
	}
	out := &metav1.PartialObjectMetadataList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.FormatUint(f.rev, 10)}}
	if end < len(names) {
		out.Continue = strconv.Itoa(end)
	}
	for _, n := range names[start:end] {
		out.Items = append(out.Items, *f.meta(n, f.objects[n]))
	}
	return out, nil
}

func (f *fakeAPI) WatchMetadata(_ context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watches++
	from, _ := strconv.ParseUint(opts.ResourceVersion, 10, 64)
	if from < f.compact {
		return nil, apierrors.NewResourceExpired("too old resource version")
	}
	ch := make(chan watch.Event, len(f.log)+1)
	for _, ev := range f.log {
		if rv, _ := strconv.ParseUint(ev.Object.(*metav1.PartialObjectMetadata).ResourceVersion, 10, 64); rv > from {
			ch <- ev
		}
	}
	ch <- watch.Event{Type: watch.Bookmark, Object: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: strconv.FormatUint(f.rev, 10)}}}
	close(ch)
	return watch.NewProxyWatcher(ch), nil
}

func (f *fakeAPI) fail(op string) error {
	err := f.failNext[op]
	delete(f.failNext, op)
	return err
}

func (f *fakeAPI) Apply(_ context.Context, u *unstructured.Unstructured) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applies++
	if err := f.fail("apply"); err != nil {
		return "", err
	}
	o, ok := f.objects[u.GetName()]
	typ := watch.Modified
	if !ok {
		o, typ = &fakeObject{uid: types.UID("uid-" + u.GetName()), annotations: map[string]string{}}, watch.Added
		f.objects[u.GetName()] = o
	}
	if _, set := u.Object["metadata"].(map[string]any)["finalizers"]; set {
		o.finalizers = u.GetFinalizers()
	}
	o.labels = u.GetLabels()
	maps.Copy(o.annotations, u.GetAnnotations())
	o.spec = u.Object["spec"]
	f.record(typ, u.GetName(), o)
	return strconv.FormatUint(o.rv, 10), nil
}

func (f *fakeAPI) ApplyStatus(_ context.Context, u *unstructured.Unstructured) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.statusApplies++
	if err := f.fail("status"); err != nil {
		return "", err
	}
	o, ok := f.objects[u.GetName()]
	if !ok {
		return "", f.notFound()
	}
	o.status = u.Object["status"]
	f.record(watch.Modified, u.GetName(), o)
	return strconv.FormatUint(o.rv, 10), nil
}

func (f *fakeAPI) Replace(_ context.Context, object, status *unstructured.Unstructured) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.replaces++
	if err := f.fail("replace"); err != nil {
		return "", err
	}
	o, ok := f.objects[object.GetName()]
	typ := watch.Modified
	if !ok {
		o, typ = &fakeObject{uid: types.UID("uid-" + object.GetName())}, watch.Added
		f.objects[object.GetName()] = o
	}
	o.finalizers = object.GetFinalizers()
	o.labels, o.annotations, o.spec, o.status = object.GetLabels(), object.GetAnnotations(), object.Object["spec"], status.Object["status"]
	if o.annotations == nil {
		o.annotations = map[string]string{}
	}
	f.record(typ, object.GetName(), o)
	return strconv.FormatUint(o.rv, 10), nil
}

func (f *fakeAPI) Delete(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deletes++
	return f.deleteLocked(name)
}

// deleteLocked deletes as the API server does: an object with finalizers is only marked (Terminating).
func (f *fakeAPI) deleteLocked(name string) error {
	o, ok := f.objects[name]
	if !ok {
		return f.notFound()
	}
	if len(o.finalizers) > 0 {
		if o.deleting == nil {
			now := metav1.NewTime(t0.Add(5 * time.Hour))
			o.deleting = &now
			f.record(watch.Modified, name, o)
		}
		return nil
	}
	delete(f.objects, name)
	f.record(watch.Deleted, name, o)
	return nil
}

func (f *fakeAPI) RemoveFinalizer(_ context.Context, name, finalizer string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases++
	if err := f.fail("release"); err != nil {
		return err
	}
	o, ok := f.objects[name]
	if !ok || !slices.Contains(o.finalizers, finalizer) {
		return nil
	}
	o.finalizers = slices.DeleteFunc(slices.Clone(o.finalizers), func(s string) bool { return s == finalizer })
	if o.deleting != nil && len(o.finalizers) == 0 {
		delete(f.objects, name)
		f.record(watch.Deleted, name, o)
		return nil
	}
	f.record(watch.Modified, name, o)
	return nil
}

// userDelete is a user's DELETE (kubectl delete), which the policy lets through.
func (f *fakeAPI) userDelete(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.deleteLocked(name); err != nil {
		panic(err)
	}
}

// edit is someone else's change of an object's spec and a label of theirs.
func (f *fakeAPI) edit(name string, spec any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.objects[name]
	o.spec = spec
	o.labels = maps.Clone(o.labels)
	o.labels["theirs"] = "x"
	f.record(watch.Modified, name, o)
}

// remove is someone else's delete that nothing holds (a finalizer stripped first, with the policy removed).
func (f *fakeAPI) remove(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.objects[name]
	delete(f.objects, name)
	f.record(watch.Deleted, name, o)
}

package mirror

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// API is the cluster side of a Writer, for one kind; *Client satisfies it.
type API interface {
	// ListMetadata lists one page of the kind's objects, metadata only.
	ListMetadata(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error)
	// WatchMetadata watches the kind's objects, metadata only.
	WatchMetadata(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	// Apply and ApplyStatus server-side apply the object and its status subresource (the writer's field
	// manager, forced: the writer owns every field it writes) and return the revision written.
	Apply(ctx context.Context, obj *unstructured.Unstructured) (string, error)
	ApplyStatus(ctx context.Context, obj *unstructured.Unstructured) (string, error)
	// Replace writes object and status whole over what the cluster has (a GET, then an update of each
	// with the revision read), so that fields someone else added go too; it creates a missing object. A
	// conflict is returned only when other writes kept coming between its reads and its updates.
	Replace(ctx context.Context, object, status *unstructured.Unstructured) (string, error)
	Delete(ctx context.Context, name string) error
}

// ErrNotInstalled: the kind's CustomResourceDefinition is not in the cluster.
var ErrNotInstalled = errors.New("the nodewright.sh mirror CRDs are not installed (apply `nodewright manifests`)")

// Defaults of Options.
const (
	// DefaultMaxWrites bounds the objects one run writes or deletes. A write is two or three requests
	// (status, then the object with its hash; a new mirror is created first), so 200 writes are at most
	// 600 requests: within a few seconds of the function's client budget (kube.DefaultQPS 100, burst
	// 300) and of a pass's time, while still keeping up with a burst of 200 Nodes joining at once (each
	// joining claim changes three times, a pass apart). The rest waits for the next run; changes to
	// mirrors that exist go before new mirrors, so a first fill of 5,000 claims does not hold them up.
	DefaultMaxWrites = 200
	// DefaultWorkers is how many writes are in flight at once.
	DefaultWorkers = 4
	// listPageSize is the metadata LIST's page: a mirror's metadata is some 500 bytes.
	listPageSize = 500
)

// watchSeconds bounds the catch-up watch of a whole run: the API server sends its bookmark (the
// collection's current revision) shortly before the watch times out.
var watchSeconds int64 = 2

// Options are a Writer's settings; zero fields take the defaults.
type Options struct {
	MaxWrites int
	Workers   int
}

// Writer keeps the mirrors of one kind equal to what it is given, writing only what changed.
type Writer struct {
	kind Kind
	api  API
	opts Options
	memo memo
}

// NewWriter returns a writer of kind's mirrors through api.
func NewWriter(kind Kind, api API, opts Options) *Writer {
	if opts.MaxWrites <= 0 {
		opts.MaxWrites = DefaultMaxWrites
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	return &Writer{kind: kind, api: api, opts: opts}
}

// Report is what a Sync did.
type Report struct {
	// Written and Deleted count the mirrors written (created or changed) and deleted.
	Written, Deleted int
	// Unchanged counts the objects whose mirror already held them.
	Unchanged int
	// Left counts the writes and deletes left for the next run: those over MaxWrites, and the replaces
	// that other functions' writes of the same mirror kept conflicting with.
	Left int
	// Learned is true when the run listed the mirrors (a cold start, or a watch the server could no
	// longer serve).
	Learned bool
	// Errors are the writes that failed ("<kind>/<name>: ..."); they are tried again next run.
	Errors []string
}

// Sync writes the mirrors of objs that differ from what the cluster holds. With whole (objs are every
// object of the kind that should exist) it first follows the changes others made since the last run,
// and deletes the mirrors of objects not in objs. The error is for what kept it from knowing the
// cluster's mirrors (ErrNotInstalled among them); single writes that fail are in the report.
func (w *Writer) Sync(ctx context.Context, objs []Object, whole bool) (Report, error) {
	var rep Report
	if !w.memo.learned {
		if err := w.learn(ctx); err != nil {
			return rep, err
		}
		rep.Learned = true
	} else if whole {
		relist, err := w.catchUp(ctx)
		if err != nil {
			return rep, err
		}
		if relist {
			if err := w.learn(ctx); err != nil {
				return rep, err
			}
			rep.Learned = true
		}
	}
	var changed, created []write
	want := make(map[string]bool, len(objs))
	for _, o := range objs {
		want[o.Name] = true
		h, err := hashOf(o)
		if err != nil {
			rep.Errors = append(rep.Errors, fmt.Sprintf("%s/%s: hashing: %v", w.kind.Singular, o.Name, err))
			continue
		}
		e, known := w.memo.get(o.Name)
		switch {
		case known && e.hashes == h:
			rep.Unchanged++
		case known && e.hashes != (hashes{}):
			changed = append(changed, write{obj: o, hashes: h, exists: true, statusToo: e.hashes.status != h.status})
		case known: // someone else changed it, or a write of it failed half-way: replaced whole
			changed = append(changed, write{obj: o, hashes: h, replace: true})
		default:
			created = append(created, write{obj: o, hashes: h, statusToo: true})
		}
	}
	todo := append(changed, created...)
	if whole {
		gone := w.memo.names()
		slices.Sort(gone)
		for _, name := range gone {
			if !want[name] {
				todo = append(todo, write{obj: Object{Name: name}, delete: true})
			}
		}
	}
	if len(todo) > w.opts.MaxWrites {
		rep.Left = len(todo) - w.opts.MaxWrites
		todo = todo[:w.opts.MaxWrites]
	}
	w.run(ctx, todo, &rep)
	return rep, nil
}

// write is one object to write or delete.
type write struct {
	obj    Object
	hashes hashes
	// exists: the cluster has a mirror of this name as the writer left it; statusToo: its status must be
	// written too; replace: what the cluster has is unknown, so it is replaced whole.
	exists, statusToo, replace, delete bool
}

// run carries out the writes, Workers at a time.
func (w *Writer) run(ctx context.Context, todo []write, rep *Report) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	free := make(chan struct{}, w.opts.Workers)
	for _, t := range todo {
		free <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-free; wg.Done() }()
			err := w.one(ctx, t)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case apierrors.IsConflict(err):
				rep.Left++ // the memo still does not know the content: the next run replaces it again
			case err != nil:
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s/%s: %v", w.kind.Singular, t.obj.Name, err))
			case t.delete:
				rep.Deleted++
			default:
				rep.Written++
			}
		}()
	}
	wg.Wait()
	slices.Sort(rep.Errors)
}

// one writes one mirror: a new one is created first (without its hash), then its status is written if it
// changed, and last the object with its hash, so the hash never stands for content not written. A mirror
// whose content is unknown is first replaced whole (server-side apply would keep fields others added). A write
// that fails half-way leaves the memo knowing the name but not the content, and the next run writes it
// whole again (or deletes it, when its object is gone by then).
func (w *Writer) one(ctx context.Context, t write) error {
	if t.delete {
		return w.remove(ctx, t.obj.Name)
	}
	// The content is unknown until the write completes; whether it carries the finalizer is kept.
	prev, _ := w.memo.get(t.obj.Name)
	w.memo.put(t.obj.Name, entry{finalized: prev.finalized})
	if t.replace {
		obj, st, err := w.replacement(t.obj)
		if err != nil {
			return err
		}
		if _, err := w.api.Replace(ctx, obj, st); errors.Is(err, ErrSuperseded) {
			// Another writer showed a newer record of the claim; the content stays unknown to this writer,
			// which writes it again from its next read of the claim.
			return nil
		} else if err != nil {
			return fmt.Errorf("replacing: %w", err)
		}
	} else if !t.exists {
		u, err := w.object(t.obj, "")
		if err != nil {
			return err
		}
		if _, err := w.api.Apply(ctx, u); err != nil {
			return fmt.Errorf("creating: %w", err)
		}
	}
	if t.statusToo && !t.replace {
		u, err := w.status(t.obj)
		if err != nil {
			return err
		}
		if _, err := w.api.ApplyStatus(ctx, u); err != nil {
			return fmt.Errorf("writing status: %w", err)
		}
	}
	u, err := w.object(t.obj, t.hashes.String())
	if err != nil {
		return err
	}
	rv, err := w.api.Apply(ctx, u)
	if err != nil {
		return fmt.Errorf("writing: %w", err)
	}
	w.memo.put(t.obj.Name, entry{hashes: t.hashes, rv: parseRV(rv), finalized: slices.Contains(t.obj.Finalizers, Finalizer)})
	return nil
}

// replacement is what a whole replace of o's mirror writes (API.Replace): the object without its hash,
// and the status.
func (w *Writer) replacement(o Object) (obj, status *unstructured.Unstructured, err error) {
	if obj, err = w.object(o, ""); err != nil {
		return nil, nil, err
	}
	status, err = w.status(o)
	return obj, status, err
}

// object is the apply configuration of o's labels and spec (and hash, when given).
func (w *Writer) object(o Object, hash string) (*unstructured.Unstructured, error) {
	spec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&struct {
		Spec any `json:"spec"`
	}{o.Spec})
	if err != nil {
		return nil, fmt.Errorf("encoding spec: %w", err)
	}
	meta := map[string]any{"name": o.Name}
	if len(o.Labels) > 0 {
		labels := map[string]any{}
		for k, v := range o.Labels {
			labels[k] = v
		}
		meta["labels"] = labels
	}
	annotations := map[string]any{}
	if hash != "" {
		annotations[HashAnnotation] = hash
	}
	if o.ClaimVersion > 0 {
		annotations[ClaimVersionAnnotation] = strconv.FormatInt(o.ClaimVersion, 10)
	}
	if len(annotations) > 0 {
		meta["annotations"] = annotations
	}
	if len(o.Finalizers) > 0 {
		fs := make([]any, 0, len(o.Finalizers))
		for _, f := range o.Finalizers {
			fs = append(fs, f)
		}
		meta["finalizers"] = fs
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": APIVersion, "kind": w.kind.Kind, "metadata": meta, "spec": spec["spec"]}}, nil
}

// status is the apply configuration of o's status.
func (w *Writer) status(o Object) (*unstructured.Unstructured, error) {
	st, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&struct {
		Status any `json:"status"`
	}{o.Status})
	if err != nil {
		return nil, fmt.Errorf("encoding status: %w", err)
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": APIVersion, "kind": w.kind.Kind,
		"metadata": map[string]any{"name": o.Name}, "status": st["status"]}}, nil
}

// learn lists the mirrors whole, metadata only, a page at a time: their names, revisions and hashes.
func (w *Writer) learn(ctx context.Context) error {
	objects := map[string]entry{}
	opts := metav1.ListOptions{Limit: listPageSize}
	for {
		page, err := w.api.ListMetadata(ctx, opts)
		if apierrors.IsNotFound(err) {
			w.memo.forget()
			return ErrNotInstalled
		}
		if err != nil {
			w.memo.forget()
			return fmt.Errorf("listing the %s mirrors: %w", w.kind.Singular, err)
		}
		for _, o := range page.Items {
			h, _ := parseHashes(o.Annotations[HashAnnotation])
			objects[o.Name] = entry{hashes: h, rv: parseRV(o.ResourceVersion), uid: o.UID, finalized: slices.Contains(o.Finalizers, Finalizer),
				deleting: deletionOf(&o)}
		}
		if page.Continue == "" {
			w.memo.reset(objects, page.ResourceVersion)
			return nil
		}
		opts.Continue = page.Continue
	}
}

// catchUp follows, with one short watch from the memo's revision, what changed since: the writer's own
// writes are known, anyone else's change leaves that mirror's content unknown (it is written again) and a
// deletion forgets it. relist: the server no longer has the revision (410 Gone), so the mirrors must be
// listed again.
func (w *Writer) catchUp(ctx context.Context) (relist bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(watchSeconds+3)*time.Second)
	defer cancel()
	timeout := watchSeconds
	wi, err := w.api.WatchMetadata(ctx, metav1.ListOptions{ResourceVersion: w.memo.rv, AllowWatchBookmarks: true, TimeoutSeconds: &timeout})
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return true, nil
	}
	if apierrors.IsNotFound(err) {
		w.memo.forget()
		return false, ErrNotInstalled
	}
	if err != nil {
		return false, fmt.Errorf("watching the %s mirrors: %w", w.kind.Singular, err)
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		if ev.Type == watch.Error {
			st := apierrors.FromObject(ev.Object)
			if apierrors.IsResourceExpired(st) || apierrors.IsGone(st) {
				return true, nil
			}
			return false, fmt.Errorf("watching the %s mirrors: %w", w.kind.Singular, st)
		}
		o, ok := ev.Object.(*metav1.PartialObjectMetadata)
		if !ok {
			return false, fmt.Errorf("watching the %s mirrors: unexpected %T in a %s event", w.kind.Singular, ev.Object, ev.Type)
		}
		if ev.Type == watch.Bookmark {
			w.memo.mu.Lock()
			w.memo.rv = o.ResourceVersion
			w.memo.mu.Unlock()
			continue
		}
		w.memo.seen(o, ev.Type == watch.Deleted)
	}
	return false, nil
}

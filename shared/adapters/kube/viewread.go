package kube

import (
	"context"
	"fmt"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// ReadMode says how a read brought a view up to date.
type ReadMode string

const (
	// ReadListed: the kind was listed whole (a cold process, or the view could not be caught up).
	ReadListed ReadMode = "listed"
	// ReadWatched: the changes since the view's revision were read with a watch.
	ReadWatched ReadMode = "watched"
	// ReadUnchanged: nothing in the cluster changed since the view's revision.
	ReadUnchanged ReadMode = "unchanged"
)

// Bounds of a catch-up. The API server sends a watch's bookmark about two seconds before the watch's
// timeout, so a three-second watch reports the server's revision after about one second even when no
// object of the kind changed.
var (
	catchUpWatchSeconds int64 = 3
	catchUpWatches            = 3
	catchUpWatchBudget        = 10 * time.Second
)

// DefaultWatchAfter is how long a whole list of a kind must take before a warm view is caught up with a
// watch instead: a catch-up waits for the API server's bookmark (about a second) when the kind did not
// change, so a small kind that lists faster than that is simply listed again (see also WatchAfterBytes).
const DefaultWatchAfter = time.Second

// RelistBelowBytes: a kind whose whole list is smaller than this is listed again on every read, however
// long its last list took and even while the pods are caught up with a watch (see Snapshotter.read),
// unless SnapshotOptions.WatchAfter is negative. A kind that did not change is caught up only by the API
// server's bookmark, one to two seconds into its watch, while a list this small is answered from the
// watch cache in milliseconds; in a burst of pending pods the pods' own catch-up ends within
// milliseconds on their changes, and tiny unchanged kinds waiting for their bookmarks made every warm
// provisioner run 0.7-1.8 s longer. A list slowed once by a busy API server no longer makes a tiny kind
// wait for bookmarks for the rest of the process's life. The nine kinds of a snapshot cost at most
// about 1.2 MB a run this way; at 1,000 nodes a steady read was 27 MB before the kinds beside the pods
// became views, 9% of a cold read (commit a1029ff).
const RelistBelowBytes = 128 << 10

// catchUpRule says when a warm view of a kind is caught up with a watch rather than listed whole.
type catchUpRule struct {
	// watchAfter: see SnapshotOptions.WatchAfter (negative: however fast the kind lists).
	watchAfter time.Duration
	// relistBelow, when positive, lists the kind whole all the same when its last whole list was smaller.
	relistBelow int64
	// fromCache: see SnapshotOptions.FromCache.
	fromCache bool
}

// defaultWatchAfter is SnapshotOptions.WatchAfter with 0 meaning DefaultWatchAfter.
func defaultWatchAfter(d time.Duration) time.Duration {
	if d == 0 {
		return DefaultWatchAfter
	}
	return d
}

// WatchAfterBytes: a kind whose whole list is at least this large is caught up with a watch however fast
// it lists. 5,000 Nodes are some 90 MB; read again on every five-second lifecycle pass, they would cost the
// API server far more than a second's wait for a bookmark costs the pass.
const WatchAfterBytes = 8 << 20

// source reads one kind of object: whole lists over the REST client, a one-item probe and watches
// through the typed client.
type source[T any, PT object[T]] struct {
	// watchAfter: see DefaultWatchAfter; negative catches up with a watch however fast the list was.
	watchAfter time.Duration
	// relistBelow and fromCache: see catchUpRule.
	relistBelow int64
	fromCache   bool
	req         listRequest
	probe       func(ctx context.Context, opts metav1.ListOptions) (string, error)
	watch       func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	trim        func(PT)
	// relisting, when set, is called before a whole list (what trim keeps across objects starts afresh).
	relisting func()
}

// refresh brings v up to date with the API server and says how.
//
// How it knows the view is current. A warm view remembers the revision it was read at. The read first
// asks for the kind's current revision with a one-item list: consistent (the cluster's revision, served
// from the API server's watch cache once the cache has caught up with etcd, on Kubernetes 1.31+), or the
// kind's latest in the watch cache (SnapshotOptions.FromCache). If it equals the view's revision, nothing
// changed. Otherwise a watch from the view's revision delivers every change since, in
// revision order, and the view is current once it has applied an event or a bookmark at or past the probed
// revision. A kind whose whole list was smaller than the source's relistBelow is listed whole instead,
// however the watchAfter rule would read it. A revision the server no longer has (410 Gone: the view is
// older than the watch cache's history), a watch that ends short of it, or a revision that is not a number lists the kind whole again,
// as a cold process does.
func (v *view[T, PT]) refresh(ctx context.Context, src source[T, PT]) (ReadMode, error) {
	if v.watches(src.watchAfter, src.relistBelow) {
		target, err := src.probe(ctx, probeOptions(src.req.base, src.fromCache))
		if err != nil {
			return "", fmt.Errorf("reading the revision of %s: %w", src.req.what, mapError(err))
		}
		if target == v.rv || (src.fromCache && notAfter(target, v.rv)) {
			return ReadUnchanged, nil
		}
		caught, err := v.catchUp(ctx, src, target)
		if err != nil {
			return "", err
		}
		if caught {
			return ReadWatched, nil
		}
	}
	return ReadListed, v.relist(ctx, src)
}

// watches says whether a refresh would catch the view up with a watch rather than list the kind whole
// (watchAfter as source.watchAfter: 0 is not defaulted here; relistBelow as source.relistBelow).
func (v *view[T, PT]) watches(watchAfter time.Duration, relistBelow int64) bool {
	if !v.known() || (relistBelow > 0 && v.listBytes < relistBelow) {
		return false
	}
	return v.listTook >= watchAfter || v.listBytes >= WatchAfterBytes
}

// probeOptions are the options of the one-item list whose revision a warm view is caught up to:
// consistent (the cluster's current revision), or, fromCache, the kind's latest in the watch cache. The
// latter asks for a list not older than revision 1 (cacheProbeRevision), which the watch cache serves at
// once, whatever it holds, with the limit kept ("0" would list every object).
func probeOptions(base metav1.ListOptions, fromCache bool) metav1.ListOptions {
	opts := base
	opts.Limit, opts.Continue, opts.ResourceVersion, opts.ResourceVersionMatch = 1, "", "", ""
	if fromCache {
		opts.ResourceVersion, opts.ResourceVersionMatch = cacheProbeRevision, metav1.ResourceVersionMatchNotOlderThan
	}
	return opts
}

// cacheProbeRevision is the revision a watch-cache probe asks to be not older than. Not the view's own:
// a view listed whole by an API server that serves consistent lists from etcd (Kubernetes 1.30) stands at
// the cluster's revision, which the kind's watch cache may not reach for minutes, and a list not older
// than that would wait three seconds and fail.
const cacheProbeRevision = "1"

// notAfter reports whether revision a is at or before revision b (false when either is not a number).
// A watch cache behind a view holds nothing the view lacks: the view was listed whole at a later
// revision of the cluster.
func notAfter(a, b string) bool {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	return errA == nil && errB == nil && x <= y
}

// relist reads the kind whole, each object decoded into its own allocation (so a later change frees the
// object it replaces) and trimmed at once.
func (v *view[T, PT]) relist(ctx context.Context, src source[T, PT]) error {
	if src.relisting != nil {
		src.relisting()
	}
	items := make([]PT, 0, len(v.items))
	trimmed, start := 0, time.Now()
	rv, read, err := streamInto[T, PT](ctx, src.req, func() PT {
		o := PT(new(T))
		items = append(items, o)
		return o
	}, func() {
		items, trimmed = items[:0], 0
	}, func() {
		for _, o := range items[trimmed:] {
			src.trim(o)
		}
		trimmed = len(items)
	})
	if err != nil {
		v.forget()
		return err
	}
	v.reset(items, rv)
	v.listTook, v.listBytes = time.Since(start), read
	return nil
}

// catchUp applies the changes from the view's revision up to target. false without an error: the view
// cannot be caught up this way and must be listed whole.
func (v *view[T, PT]) catchUp(ctx context.Context, src source[T, PT], target string) (bool, error) {
	want, err := strconv.ParseUint(target, 10, 64)
	if err != nil {
		return false, nil
	}
	if _, err := strconv.ParseUint(v.rv, 10, 64); err != nil {
		return false, nil
	}
	for range catchUpWatches {
		caught, more, err := v.watchOnce(ctx, src, want)
		if err != nil || caught || !more {
			return caught, err
		}
	}
	return false, nil
}

// watchOnce reads one watch from the view's revision. more: the watch ended short of want without a
// reason to give up, so another watch may reach it.
func (v *view[T, PT]) watchOnce(parent context.Context, src source[T, PT], want uint64) (caught, more bool, err error) {
	ctx, cancel := context.WithTimeout(parent, catchUpWatchBudget)
	defer cancel()
	opts := src.req.base
	opts.Limit, opts.Continue = 0, ""
	opts.ResourceVersion, opts.AllowWatchBookmarks, opts.TimeoutSeconds = v.rv, true, &catchUpWatchSeconds
	w, err := src.watch(ctx, opts)
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("watching %s: %w", src.req.what, mapError(err))
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		if ev.Type == watch.Error {
			if st := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(st) || apierrors.IsGone(st) {
				return false, false, nil
			}
			return false, false, fmt.Errorf("watching %s: %w", src.req.what, mapError(apierrors.FromObject(ev.Object)))
		}
		o, ok := ev.Object.(PT)
		if !ok {
			return false, false, fmt.Errorf("watching %s: unexpected %T in a %s event", src.req.what, ev.Object, ev.Type)
		}
		switch ev.Type {
		case watch.Added, watch.Modified:
			src.trim(o)
			v.put(o)
		case watch.Deleted:
			v.remove(o)
		}
		v.rv = o.GetResourceVersion()
		if rv, err := strconv.ParseUint(v.rv, 10, 64); err != nil {
			v.forget()
			return false, false, nil
		} else if rv >= want {
			return true, false, nil
		}
	}
	if err := parent.Err(); err != nil {
		return false, false, err
	}
	return false, true, nil
}

// restSource is a source over a real REST client, for the kind resource (namespace "" for all).
func restSource[T any, PT object[T]](rc *rest.RESTClient, resource, namespace string, pageSize int64, rule catchUpRule, base metav1.ListOptions,
	probe func(ctx context.Context, opts metav1.ListOptions) (string, error),
	watchFn func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error), trim func(PT)) source[T, PT] {
	return source[T, PT]{
		watchAfter: defaultWatchAfter(rule.watchAfter), relistBelow: rule.relistBelow, fromCache: rule.fromCache,
		req:   listRequest{client: rc, resource: resource, namespace: namespace, what: resource, pageSize: pageSize, base: base},
		probe: probe, watch: watchFn, trim: trim,
	}
}

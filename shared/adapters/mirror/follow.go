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
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// ErrSuperseded: the mirror was written from a newer record of its claim than the one at hand; it is
// left as it is.
var ErrSuperseded = errors.New("the mirror shows a newer record of the claim")

// FollowAPI is what a Follower needs of the NodeClaim mirrors; *Client satisfies it.
type FollowAPI interface {
	Get(ctx context.Context, name string) (*unstructured.Unstructured, error)
	// Update and UpdateStatus write over the revision the object carries (409 when it changed since).
	Update(ctx context.Context, obj *unstructured.Unstructured) (string, error)
	UpdateStatus(ctx context.Context, obj *unstructured.Unstructured) (string, error)
	// Apply and ApplyStatus server-side apply (a missing mirror is created this way).
	Apply(ctx context.Context, obj *unstructured.Unstructured) (string, error)
	ApplyStatus(ctx context.Context, obj *unstructured.Unstructured) (string, error)
}

var _ FollowAPI = (*Client)(nil)

// Defaults of FollowOptions.
const (
	// DefaultFollowMaxWrites bounds the mirrors one run follows: a GET and two updates each, some 150
	// requests, about 1.5 s of a function's client budget (kube.DefaultQPS 100). A run changes the
	// disruption state of a handful of claims (a command's candidates, a notice's claim); drift
	// detection over a whole pool can change hundreds, the rest of which the lifecycle's sweep writes.
	DefaultFollowMaxWrites = 50
	// DefaultFollowBudget bounds the time a run spends on them.
	DefaultFollowBudget = 3 * time.Second
	// DefaultFollowMargin is left before the run's deadline: the writes never take the time a run
	// needs to finish (its lease release, its report).
	DefaultFollowMargin = 2 * time.Second
)

// FollowOptions are a Follower's bounds; zero fields take the defaults.
type FollowOptions struct {
	MaxWrites int
	Budget    time.Duration
	Margin    time.Duration
	Workers   int
}

// Follower writes the NodeClaim mirrors of the claims a flow has just changed (a disruption command's
// candidates, a drifted claim, an interrupted claim, a drain that began or ended), right after the change
// commits, so `kubectl get nodeclaims.nodewright.sh` shows it within seconds instead of at the lifecycle
// function's next sweep. It is a targeted writer: it keeps no memo and lists nothing; for each claim it
// GETs the mirror and writes only when the mirror's hash differs (status, then the object with its hash
// and the claim's version, each over the revision read), or creates a missing mirror. It never deletes
// one, never removes a finalizer, and leaves a mirror written from a newer record of the claim as it is
// (ClaimVersionAnnotation), so concurrent writers do not flap it. A conflict (409) is tried again once
// from a fresh GET; what still conflicts, what the bounds leave and what fails are left to the lifecycle
// function's next sweep, which rewrites every mirror that differs from its claim.
type Follower struct {
	api  FollowAPI
	opts FollowOptions
	now  func() time.Time
}

// NewFollower returns a Follower over api; now is the clock the budget is taken from (time.Now when nil).
func NewFollower(api FollowAPI, opts FollowOptions, now func() time.Time) *Follower {
	if opts.MaxWrites <= 0 {
		opts.MaxWrites = DefaultFollowMaxWrites
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultFollowBudget
	}
	if opts.Margin <= 0 {
		opts.Margin = DefaultFollowMargin
	}
	if opts.Workers <= 0 {
		opts.Workers = DefaultWorkers
	}
	if now == nil {
		now = time.Now
	}
	return &Follower{api: api, opts: opts, now: now}
}

// FollowReport is what a Follow did.
type FollowReport struct {
	// Written counts the mirrors written (created or changed); Unchanged those that already showed the
	// claim; Superseded those showing a newer record of it.
	Written, Unchanged, Superseded int
	// Left counts the claims left to the lifecycle's sweep: beyond MaxWrites, beyond the budget, or
	// still conflicting after a fresh GET.
	Left int
	// Errors are the writes that failed ("nodeclaim/<name>: ..."); the sweep writes them.
	Errors []string
}

// Add adds o's counts to r.
func (r *FollowReport) Add(o FollowReport) {
	r.Written += o.Written
	r.Unchanged += o.Unchanged
	r.Superseded += o.Superseded
	r.Left += o.Left
	r.Errors = append(r.Errors, o.Errors...)
}

// Follow writes the mirrors of claims (each built as mirror.NodeClaim builds it from the record), within
// the bounds: at most MaxWrites claims, and for no longer than Budget nor past the context's deadline
// less Margin. A claim given twice is written from its newest version; a deleted claim is skipped (its
// mirror goes at the lifecycle's sweep, as before). It never returns an error: a flow's run never fails
// for its mirrors.
func (f *Follower) Follow(ctx context.Context, claims []state.Claim) FollowReport {
	var rep FollowReport
	newest := map[string]state.Claim{}
	var order []string
	for _, c := range claims {
		if c.Name == "" || c.Lifecycle == state.Deleted {
			continue
		}
		prev, seen := newest[c.Name]
		if !seen {
			order = append(order, c.Name)
		}
		if !seen || c.Version >= prev.Version {
			newest[c.Name] = c
		}
	}
	if len(order) == 0 {
		return rep
	}
	budget := f.opts.Budget
	if deadline, ok := ctx.Deadline(); ok {
		if left := deadline.Sub(f.now()) - f.opts.Margin; left < budget {
			budget = left
		}
	}
	if budget <= 0 || ctx.Err() != nil {
		rep.Left = len(order)
		return rep
	}
	if len(order) > f.opts.MaxWrites {
		rep.Left = len(order) - f.opts.MaxWrites
		order = order[:f.opts.MaxWrites]
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	now := f.now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	free := make(chan struct{}, f.opts.Workers)
	for _, name := range order {
		obj := NodeClaim(Claim{Record: newest[name], Now: now})
		free <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-free; wg.Done() }()
			out, err := f.one(ctx, obj)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case ctx.Err() != nil && out != written:
				rep.Left++ // the budget ran out: left to the sweep, not failed
			case err != nil:
				rep.Errors = append(rep.Errors, fmt.Sprintf("%s/%s: %v", NodeClaims.Singular, name, err))
			case out == written:
				rep.Written++
			case out == unchanged:
				rep.Unchanged++
			case out == superseded:
				rep.Superseded++
			default:
				rep.Left++
			}
		}()
	}
	wg.Wait()
	slices.Sort(rep.Errors)
	return rep
}

type outcome int

const (
	conflicted outcome = iota
	written
	unchanged
	superseded
)

// one writes one mirror: a GET, then nothing (same hash, or a newer claim version), or its status and
// its object over the revision read, or a creation when there is none. A conflict is tried again once
// from a fresh GET.
func (f *Follower) one(ctx context.Context, o Object) (outcome, error) {
	h, err := hashOf(o)
	if err != nil {
		return conflicted, fmt.Errorf("hashing: %w", err)
	}
	for attempt := 0; attempt < 2; attempt++ {
		cur, err := f.api.Get(ctx, o.Name)
		if apierrors.IsNotFound(err) {
			return f.create(ctx, o, h)
		}
		if err != nil {
			return conflicted, fmt.Errorf("reading: %w", err)
		}
		if supersedes(cur, o.ClaimVersion) {
			return superseded, nil
		}
		if cur.GetAnnotations()[HashAnnotation] == h.String() {
			return unchanged, nil
		}
		st, err := statusOf(o)
		if err != nil {
			return conflicted, err
		}
		keepNodeFacts(st, cur)
		st.SetResourceVersion(cur.GetResourceVersion())
		rv, err := f.api.UpdateStatus(ctx, st)
		if apierrors.IsConflict(err) {
			continue
		}
		if err != nil {
			return conflicted, fmt.Errorf("writing status: %w", err)
		}
		obj, err := over(cur, o, h)
		if err != nil {
			return conflicted, err
		}
		obj.SetResourceVersion(rv)
		if _, err := f.api.Update(ctx, obj); apierrors.IsConflict(err) {
			continue
		} else if err != nil {
			return conflicted, fmt.Errorf("writing: %w", err)
		}
		return written, nil
	}
	return conflicted, nil
}

// create creates a missing mirror as the other writers do: the object without its hash, its status, then
// the object with its hash. Server-side apply: a writer creating it at the same time only merges.
func (f *Follower) create(ctx context.Context, o Object, h hashes) (outcome, error) {
	w := Writer{kind: NodeClaims}
	u, err := w.object(o, "")
	if err != nil {
		return conflicted, err
	}
	if _, err := f.api.Apply(ctx, u); err != nil {
		if apierrors.IsNotFound(err) {
			return conflicted, ErrNotInstalled
		}
		return conflicted, fmt.Errorf("creating: %w", err)
	}
	st, err := w.status(o)
	if err != nil {
		return conflicted, err
	}
	if _, err := f.api.ApplyStatus(ctx, st); err != nil {
		return conflicted, fmt.Errorf("writing status: %w", err)
	}
	if u, err = w.object(o, h.String()); err != nil {
		return conflicted, err
	}
	if _, err := f.api.Apply(ctx, u); err != nil {
		return conflicted, fmt.Errorf("writing: %w", err)
	}
	return written, nil
}

// statusOf is the status of o as an update of the status subresource writes it (the rest is ignored).
func statusOf(o Object) (*unstructured.Unstructured, error) {
	w := Writer{kind: NodeClaims}
	return w.status(o)
}

// over is cur with o's labels, spec, hash and claim version: the object written whole over the revision
// read. Finalizers are kept (a mirror's finalizer is removed only where the claim is gone) and the writer's
// is added to a mirror that lacks it unless it is being deleted (the API server refuses new finalizers
// then).
func over(cur *unstructured.Unstructured, o Object, h hashes) (*unstructured.Unstructured, error) {
	w := Writer{kind: NodeClaims}
	want, err := w.object(o, h.String())
	if err != nil {
		return nil, err
	}
	obj := cur.DeepCopy()
	obj.SetManagedFields(nil) // kept as they are by the server
	obj.SetLabels(o.Labels)
	annotations := map[string]string{HashAnnotation: h.String()}
	if o.ClaimVersion > 0 {
		annotations[ClaimVersionAnnotation] = strconv.FormatInt(o.ClaimVersion, 10)
	}
	obj.SetAnnotations(annotations)
	finalizers := obj.GetFinalizers()
	for _, fin := range o.Finalizers {
		if !slices.Contains(finalizers, fin) && obj.GetDeletionTimestamp() == nil {
			finalizers = append(finalizers, fin)
		}
	}
	obj.SetFinalizers(finalizers)
	obj.Object["spec"] = want.Object["spec"]
	delete(obj.Object, "status")
	return obj, nil
}

// newer reports whether cur was written from a newer claim record than obj is built from.
func newer(cur, obj *unstructured.Unstructured) bool {
	want, err := strconv.ParseInt(obj.GetAnnotations()[ClaimVersionAnnotation], 10, 64)
	return err == nil && supersedes(cur, want)
}

// supersedes reports whether cur was written from a newer claim record than version (0: not a claim's).
func supersedes(cur *unstructured.Unstructured, version int64) bool {
	have, err := strconv.ParseInt(cur.GetAnnotations()[ClaimVersionAnnotation], 10, 64)
	return err == nil && version > 0 && have > version
}

// nodeFacts are the status fields a NodeClaim mirror takes from the claim's Node, not from its record:
// the Follower reads no Node, so it keeps what the mirror shows (the lifecycle's sweep writes them anew).
var nodeFacts = []string{"capacity", "allocatable"}

// keepNodeFacts copies cur's nodeFacts into st where st has none.
func keepNodeFacts(st, cur *unstructured.Unstructured) {
	for _, f := range nodeFacts {
		if _, ok, _ := unstructured.NestedFieldNoCopy(st.Object, "status", f); ok {
			continue
		}
		if v, ok, _ := unstructured.NestedFieldCopy(cur.Object, "status", f); ok {
			_ = unstructured.SetNestedField(st.Object, v, "status", f)
		}
	}
}

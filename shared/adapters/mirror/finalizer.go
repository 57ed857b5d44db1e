package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Finalizer is on every NodeClaim mirror, the same name as on Nodewright's Nodes (kube.TerminationFinalizer),
// as Karpenter puts karpenter.sh/termination on both. A user's DELETE of the mirror then leaves it
// Terminating (deletionTimestamp set) instead of removing it: the lifecycle turns that into a disruption
// request of its claim, and the writer removes the finalizer once the claim is gone, so the mirror goes
// with it. Only the mirror writers' group may remove it (footprint.MirrorPolicy refuses everyone else's
// UPDATE).
const Finalizer = Group + "/termination"

// Deletion is a mirror someone deleted that our finalizer holds: its name, its uid (for Events about it)
// and when the deletion was asked for (its deletionTimestamp).
type Deletion struct {
	Name  string
	UID   types.UID
	Since time.Time
}

// deletionOf is what o's metadata says of its deletion; nil when it is not being deleted.
func deletionOf(o *metav1.PartialObjectMetadata) *Deletion {
	if o.DeletionTimestamp == nil {
		return nil
	}
	return &Deletion{Name: o.Name, UID: o.UID, Since: o.DeletionTimestamp.UTC()}
}

// Deleting lists the mirrors being deleted and held by the finalizer, by name, as the writer last saw them
// (the cold start's LIST, then each whole Sync's watch): no request of its own. A mirror whose
// finalizer the writer removed is no longer listed.
func (w *Writer) Deleting() []Deletion {
	w.memo.mu.Lock()
	defer w.memo.mu.Unlock()
	var out []Deletion
	for _, e := range w.memo.objects {
		if e.deleting != nil && e.finalized {
			out = append(out, *e.deleting)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// finalizerAPI is what releasing a mirror needs besides API: removing Finalizer from it. *Client
// satisfies it; a kind whose mirrors never carry the finalizer never asks.
type finalizerAPI interface {
	RemoveFinalizer(ctx context.Context, name, finalizer string) error
}

var _ finalizerAPI = (*Client)(nil)

// release removes the finalizer from the mirror name, so that its deletion completes.
func (w *Writer) release(ctx context.Context, name string) error {
	f, ok := w.api.(finalizerAPI)
	if !ok {
		return fmt.Errorf("removing the %s finalizer: this mirror API cannot", Finalizer)
	}
	if err := f.RemoveFinalizer(ctx, name, Finalizer); err != nil {
		return fmt.Errorf("removing the %s finalizer: %w", Finalizer, err)
	}
	return nil
}

// RemoveFinalizer removes finalizer from the object name, keeping every other: a GET, then a merge patch
// of the finalizers with the revision read (a concurrent change makes it fail with a conflict, and the
// next run tries again). A missing object, or one without the finalizer, needs nothing.
func (c *Client) RemoveFinalizer(ctx context.Context, name, finalizer string) error {
	cur, err := c.objects.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	have := cur.GetFinalizers()
	if !slices.Contains(have, finalizer) {
		return nil
	}
	keep := slices.DeleteFunc(slices.Clone(have), func(f string) bool { return f == finalizer })
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": keep, "resourceVersion": cur.GetResourceVersion()}})
	if err != nil {
		return err
	}
	_, err = c.objects.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: c.manager})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// NodeClaimObject names a NodeClaim mirror for an Event, so `kubectl describe nodeclaims.nodewright.sh`
// shows it.
func NodeClaimObject(name string, uid types.UID) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: APIVersion, Kind: NodeClaims.Kind, Name: name, UID: uid}
}

// remove takes away the mirror of an object that is gone: the finalizer first (when the mirror carries
// it), then the object itself unless someone's DELETE already asked for that, so it goes at once.
func (w *Writer) remove(ctx context.Context, name string) error {
	e, _ := w.memo.get(name)
	if e.finalized {
		if err := w.release(ctx, name); err != nil {
			return err
		}
	}
	if e.deleting == nil {
		if err := w.api.Delete(ctx, name); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting: %w", err)
		}
	}
	w.memo.remove(name)
	return nil
}

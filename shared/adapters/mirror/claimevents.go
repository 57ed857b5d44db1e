package mirror

import (
	"context"
	"errors"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

// Bounds of the NodeClaim mirror look-ups ClaimEvents makes.
const (
	// claimGetTimeout bounds one GET of a mirror's metadata.
	claimGetTimeout = time.Second
	// claimMissingRetry: a mirror found missing is looked up again only this long after (the provisioner
	// writes a new claim's mirror last in its run; the lifecycle's next pass writes what it left).
	claimMissingRetry = 10 * time.Second
	// claimGetPause: after a GET that failed otherwise (forbidden, the CRDs not installed, a timeout), no
	// mirror is looked up for this long; the Events go out without UID meanwhile.
	claimGetPause = 30 * time.Second
	// maxClaimUIDs bounds the UIDs remembered; past it the memory starts again.
	maxClaimUIDs = 10_000
)

// UIDSource is a writer's memory of its mirrors' UIDs; *Writer satisfies it.
type UIDSource interface {
	UID(name string) types.UID
}

// MetadataGetter reads one mirror's metadata; *Client satisfies it.
type MetadataGetter interface {
	GetMetadata(ctx context.Context, name string) (*metav1.PartialObjectMetadata, error)
}

var (
	_ UIDSource      = (*Writer)(nil)
	_ MetadataGetter = (*Client)(nil)
	_ EventPublisher = (*ClaimEvents)(nil)
)

// GetMetadata reads the metadata of the mirror name (a GET through the metadata client).
func (c *Client) GetMetadata(ctx context.Context, name string) (*metav1.PartialObjectMetadata, error) {
	return c.meta.Get(ctx, name, metav1.GetOptions{})
}

// ClaimEvents publishes Events through events, giving each Event about a NodeClaim mirror
// (NodeClaimObject(name, "")) its mirror's UID, so that `kubectl describe nodeclaims.nodewright.sh NAME`
// shows it (kubectl finds an object's Events by kind, name and UID). The UID comes from the function's
// own NodeClaim writer when it has one (memo), else from a GET of the mirror's metadata (get), bounded
// (one second, none while a failed GET pauses them) and remembered. An Event whose mirror does not exist
// yet, or whose UID cannot be learned, is published without UID: `kubectl get events` still lists it.
// Other Events pass through unchanged. Safe for concurrent use.
type ClaimEvents struct {
	events EventPublisher
	memo   UIDSource
	get    MetadataGetter
	now    func() time.Time

	mu          sync.Mutex
	uids        map[string]types.UID
	missing     map[string]time.Time // name → when its mirror was found missing
	pausedUntil time.Time
}

// NewClaimEvents wraps events; memo (the function's NodeClaim writer) and get may each be nil.
func NewClaimEvents(events EventPublisher, memo UIDSource, get MetadataGetter) *ClaimEvents {
	return &ClaimEvents{events: events, memo: memo, get: get, now: time.Now, uids: map[string]types.UID{},
		missing: map[string]time.Time{}}
}

// NewConfigClaimEvents is NewClaimEvents over cfg's identity: a function without a NodeClaim writer of
// its own reads the mirrors' metadata (its role's `get` on nodeclaims.nodewright.sh).
func NewConfigClaimEvents(cfg *rest.Config, events EventPublisher, memo UIDSource) (*ClaimEvents, error) {
	client, err := NewClient(cfg, NodeClaims, "nodewright-events")
	if err != nil {
		return nil, err
	}
	return NewClaimEvents(events, memo, client), nil
}

// Publish publishes e, with its NodeClaim mirror's UID when e is about one.
func (c *ClaimEvents) Publish(ctx context.Context, e kube.Event) (bool, error) {
	if o := e.Object; o.APIVersion == APIVersion && o.Kind == NodeClaims.Kind && o.UID == "" && o.Name != "" {
		e.Object.UID = c.uid(ctx, o.Name)
	}
	return c.events.Publish(ctx, e)
}

// uid is the UID of the NodeClaim mirror name; empty when it cannot be learned now.
func (c *ClaimEvents) uid(ctx context.Context, name string) types.UID {
	if c.memo != nil {
		if uid := c.memo.UID(name); uid != "" {
			return uid
		}
	}
	now := c.now()
	c.mu.Lock()
	uid, known := c.uids[name]
	missingAt, missing := c.missing[name]
	paused := now.Before(c.pausedUntil)
	c.mu.Unlock()
	switch {
	case known:
		return uid
	case c.get == nil, paused, missing && now.Sub(missingAt) < claimMissingRetry:
		return ""
	}
	gctx, cancel := context.WithTimeout(ctx, claimGetTimeout)
	defer cancel()
	obj, err := c.get.GetMetadata(gctx, name)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case apierrors.IsNotFound(err) && !isNoCRD(err):
		if len(c.missing) >= maxClaimUIDs {
			c.missing = map[string]time.Time{}
		}
		c.missing[name] = now
		return ""
	case err != nil:
		c.pausedUntil = now.Add(claimGetPause)
		return ""
	}
	if len(c.uids) >= maxClaimUIDs {
		c.uids = map[string]types.UID{}
	}
	delete(c.missing, name)
	c.uids[name] = obj.UID
	return obj.UID
}

// isNoCRD reports whether a NotFound means the resource itself is not served (the CRDs are not
// installed), not that the one mirror is missing.
func isNoCRD(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || d.Name == ""
}

package mirror

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/kube"
)

type publishedEvents struct{ got []kube.Event }

func (p *publishedEvents) Publish(_ context.Context, e kube.Event) (bool, error) {
	p.got = append(p.got, e)
	return true, nil
}

type memoUIDs map[string]types.UID

func (m memoUIDs) UID(name string) types.UID { return m[name] }

// getter answers GETs from uids (absent: NotFound), or err when set, and counts them.
type getter struct {
	uids  map[string]types.UID
	err   error
	calls int
}

func (g *getter) GetMetadata(_ context.Context, name string) (*metav1.PartialObjectMetadata, error) {
	g.calls++
	if g.err != nil {
		return nil, g.err
	}
	uid, ok := g.uids[name]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, name)
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name, UID: uid}}, nil
}

func claimEvent(name string) kube.Event {
	return kube.Event{Object: NodeClaimObject(name, ""), Reason: kube.ReasonDisruptionTerminating, Message: "m"}
}

func TestClaimEventsGiveNodeClaimEventsTheirMirrorsUID(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	pub := &publishedEvents{}
	get := &getter{uids: map[string]types.UID{"a": "uid-a", "b": "uid-b"}}
	c := NewClaimEvents(pub, memoUIDs{"m": "uid-m"}, get)
	c.now = func() time.Time { return now }

	for _, name := range []string{"m", "a", "a", "gone"} {
		_, err := c.Publish(ctx, claimEvent(name))
		assert.NoError(t, err)
	}
	node := kube.Event{Object: corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: "a"}, Reason: kube.ReasonDisruptionTerminating}
	_, _ = c.Publish(ctx, node)
	uids := []types.UID{}
	for _, e := range pub.got {
		uids = append(uids, e.Object.UID)
	}
	assert.Equal(t, []types.UID{"uid-m", "uid-a", "uid-a", "", ""}, uids, "the writer's memory, a GET (remembered), none for a missing mirror, other objects untouched")
	assert.Equal(t, 2, get.calls, "one GET for a, one for the missing mirror; none for the writer's own")
	assert.Equal(t, NodeClaims.Kind, pub.got[0].Object.Kind)
	assert.Equal(t, APIVersion, pub.got[0].Object.APIVersion)

	// A missing mirror is looked up again only after claimMissingRetry: the provisioner writes it soon.
	get.uids["gone"] = "uid-gone"
	_, _ = c.Publish(ctx, claimEvent("gone"))
	assert.Equal(t, types.UID(""), pub.got[len(pub.got)-1].Object.UID)
	assert.Equal(t, 2, get.calls)
	now = now.Add(claimMissingRetry)
	_, _ = c.Publish(ctx, claimEvent("gone"))
	assert.Equal(t, types.UID("uid-gone"), pub.got[len(pub.got)-1].Object.UID)
	assert.Equal(t, 3, get.calls)
}

func TestClaimEventsPauseTheirLookupsAfterAFailedGet(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	for what, failure := range map[string]error{
		"forbidden (a role without get)": apierrors.NewForbidden(schema.GroupResource{Group: Group, Resource: NodeClaims.Plural}, "a", errors.New("no")),
		"the CRDs not installed":         apierrors.NewNotFound(schema.GroupResource{}, ""),
		"a timeout":                      context.DeadlineExceeded,
	} {
		pub := &publishedEvents{}
		get := &getter{err: failure}
		c := NewClaimEvents(pub, nil, get)
		c.now = func() time.Time { return now }
		for _, name := range []string{"a", "b", "c"} {
			wrote, err := c.Publish(ctx, claimEvent(name))
			assert.NoError(t, err, what)
			assert.True(t, wrote, what)
		}
		assert.Len(t, pub.got, 3, "%s: every Event is published", what)
		assert.Equal(t, 1, get.calls, "%s: no GET while paused", what)
		get.err, get.uids = nil, map[string]types.UID{"a": "uid-a"}
		now = now.Add(claimGetPause)
		_, _ = c.Publish(ctx, claimEvent("a"))
		assert.Equal(t, types.UID("uid-a"), pub.got[3].Object.UID, "%s: looked up again after the pause", what)
	}
	// Without a getter (nil), Events go out without UID and nothing is read.
	pub := &publishedEvents{}
	_, err := NewClaimEvents(pub, nil, nil).Publish(ctx, claimEvent("a"))
	assert.NoError(t, err)
	assert.Equal(t, types.UID(""), pub.got[0].Object.UID)
}

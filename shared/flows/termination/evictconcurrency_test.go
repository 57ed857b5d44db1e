package termination

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/core/drain"
)

// gatedEvictions holds every eviction until `together` of them are in flight at once: evictions made
// one after another never get past the first.
type gatedEvictions struct {
	Actions
	together int
	mu       sync.Mutex
	inFlight int
	open     chan struct{}
}

func (g *gatedEvictions) Evict(ctx context.Context, ref kube.PodRef) (kube.EvictionResult, error) {
	g.mu.Lock()
	g.inFlight++
	if g.inFlight == g.together {
		close(g.open)
	}
	g.mu.Unlock()
	select {
	case <-g.open:
		return kube.EvictionResult{Outcome: kube.Evicted}, nil
	case <-ctx.Done():
		return kube.EvictionResult{}, ctx.Err()
	}
}

// TestADrainStepEvictsItsPodsConcurrently: a 110-pod Node's step made one eviction (and one Event)
// after another, about 11 s at 1,000 nodes on the scale harness where the target is 2 s. The step now
// keeps evictionConcurrency evictions in flight.
func TestADrainStepEvictsItsPodsConcurrently(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	gate := &gatedEvictions{together: 8, open: make(chan struct{})}
	s := &Service{deps: Deps{Actions: gate}}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	var plan drain.Plan
	for i := 0; i < 40; i++ {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "web", Name: fmt.Sprintf("web-%d", i), UID: "u"}}
		plan.Decisions = append(plan.Decisions, drain.Decision{Pod: pod, Action: drain.Evict, Tier: 1})
	}
	plan.Decisions = append(plan.Decisions, drain.Decision{Pod: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held"}}, Action: drain.Wait})
	tl, err := s.apply(ctx, node, plan, Request{Reason: "Drifted"})
	require.NoError(t, err)
	assert.Equal(t, 40, tl.evicted, "every eviction went through once enough were in flight together")
	assert.Equal(t, 40, tl.codes["200"])
	assert.Equal(t, 1, tl.held)
	assert.Empty(t, tl.failures)
}

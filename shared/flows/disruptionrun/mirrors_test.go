package disruptionrun

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// mirrorLauncher is the fixture's launcher whose Launches can say what the mirrors are built from.
type mirrorLauncher struct{ *fakeLauncher }

type mirrorLaunches struct{ *fakeLauncher }

func (l mirrorLauncher) PrepareLaunches(ctx context.Context) (Launches, error) {
	v, err := l.fakeLauncher.PrepareLaunches(ctx)
	if err != nil {
		return nil, err
	}
	return mirrorLaunches{v.(*fakeLauncher)}, nil
}

// MirrorConfiguration hands the run's claims and Nodes on as one pool's claims, so the test sees what
// the run passed.
func (l mirrorLaunches) MirrorConfiguration(_ context.Context, claims []state.Claim, nodes []corev1.Node) mirror.Configuration {
	var pc []mirror.PoolClaim
	for _, c := range claims {
		pc = append(pc, mirror.PoolClaim{Claim: c})
	}
	return mirror.Configuration{Pools: []mirror.Pool{{Claims: pc}}, Unresolved: make([]string, len(nodes))}
}

type recordedStatus struct {
	mu     sync.Mutex
	writes []mirror.Configuration
}

func (r *recordedStatus) Write(_ context.Context, cfg mirror.Configuration, _ time.Time) mirror.StatusReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, cfg)
	return mirror.StatusReport{Pools: mirror.Report{Written: 1}, Events: 1}
}

func TestARunWritesThePoolAndClassMirrorsFromItsFirstCompleteRead(t *testing.T) {
	f := newFixture(t, "100%")
	f.node("a", "medium", "1")
	f.node("b", "medium", "1")
	status := &recordedStatus{}
	f.runner = New(Config{ValidationDelay: -1}, Deps{Store: f.store, Cluster: f.cluster, Launcher: mirrorLauncher{f.launch}, Nodes: f.cluster,
		Terminations: f.terms, Events: f.events, Mirrors: status, Now: f.clock.Now})
	rep := f.run()
	require.Len(t, status.writes, 1, "once a run, however many commands it decides")
	cfg := status.writes[0]
	assert.Len(t, cfg.Pools[0].Claims, 2, "the run's claims")
	assert.Len(t, cfg.Unresolved, 2, "the run's Nodes")
	assert.Equal(t, 1, rep.MirrorsWritten)
	assert.Equal(t, 1, rep.MirrorEvents)

	f.launch.prepareErr = errors.New("the catalog could not be read")
	f.run()
	assert.Len(t, status.writes, 1, "an incomplete read writes no mirror")
}

package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

// Eight invocations triggered at once for the same pending pods (a burst of queue batches, the backstop,
// two execution environments) launch once: one holds the lease and launches, the others do nothing, and
// a run after them counts the claims in flight.
func TestConcurrentTriggersLaunchOnce(t *testing.T) {
	w := newAWSWorld(t)
	cp := kubetest.Shared(t, kubetest.Options{Scheduler: true})
	ns := cp.Namespace(t)
	createPendingPods(t, cp.Client, ns, 6)
	p := newProvisioner(t, w, cp, ns)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	var wg sync.WaitGroup
	outcomes := make([]provisioning.Outcome, 8)
	for i := range outcomes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = p.Handle(ctx, fmt.Sprintf("run-%d", i), provisioning.Trigger{})
		}()
	}
	wg.Wait()

	launched, holders := 0, 0
	for i, o := range outcomes {
		require.NoError(t, o.Err, "run %d", i)
		if o.Report.Lease {
			holders++
		}
		launched += len(o.Launched)
	}
	assert.GreaterOrEqual(t, holders, 1)
	require.Positive(t, launched)
	instances := w.claimedInstances(t)
	assert.Len(t, instances, launched, "one instance per launched claim, nothing twice")
	claims, err := w.store.ListClaims(ctx)
	require.NoError(t, err)
	assert.Len(t, claims, launched)

	after := p.Handle(ctx, "run-after", provisioning.Trigger{})
	require.NoError(t, after.Err)
	assert.Empty(t, after.Report.Claims, "the pods wait for the claims in flight")
	assert.Equal(t, launched, after.Report.InFlight)
	assert.Len(t, w.claimedInstances(t), launched)
}

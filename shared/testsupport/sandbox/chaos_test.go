package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/faults"
	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

func TestChaosScaleUpAndSpotInterruptionRecoverFromFaults(t *testing.T) {
	inj, err := faults.New(uint64(time.Now().UnixNano()))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sb, err := Start(ctx, Options{Out: testWriter{t}, BootDelay: time.Second, LifecycleEvery: time.Second, Faults: inj})
	if err != nil {
		testenv.Unavailable(t, "the sandbox (moto and the local control plane)", err)
	}
	t.Cleanup(sb.Close)

	rep, err := sb.Chaos(context.Background(), ScaleUpOptions{Replicas: 6, Timeout: 2 * time.Minute})
	require.NoError(t, err)
	t.Logf("report (seed %d): faults %v, calls %v, failing %v, recovered errors %d", rep.Seed, rep.FaultsInjected, rep.CallsSeen,
		rep.FailingShare, rep.FaultErrorsRecovered)
	if !assert.Equal(t, 6, rep.PodsBound, "every pod bound") {
		dump(t, sb)
	}
	// The failing shares (≥ 10 % per target) are the demo's targets: with the test's few hundred calls
	// their draw varies by a few points, so here each target must only have met failures.
	assert.GreaterOrEqual(t, rep.FaultsTotal, 20)
	for _, target := range []faults.Target{faults.AWS, faults.Kube} {
		failing := 0
		for _, k := range faults.Kinds {
			if k.Failing() {
				failing += rep.FaultsInjected[string(target)+"/"+string(k)]
			}
		}
		assert.GreaterOrEqual(t, failing, 5, "failed %s calls", target)
	}
	assert.Zero(t, rep.PodsLost)
	assert.Zero(t, rep.LeakedInstances)
	assert.Zero(t, rep.DuplicateLaunches)
	assert.Zero(t, rep.DuplicateEventsActedOn)
	// How fast is the demo's figure (replacementLaunchedAfterSeconds ≤ 10 in its targets): it adds up the
	// SDK's and client-go's backoffs and varies from run to run, so the test asks only that the replacement
	// came while the node still ran.
	assert.GreaterOrEqual(t, rep.ReplacementLaunchedAfterSeconds, 0.0, "a replacement was launched")
	assert.GreaterOrEqual(t, rep.SpotInterruption.InterruptedNodeGoneAfterSeconds, 0.0, "the node went")
	assert.False(t, rep.SpotInterruption.ReclaimedByEC2, "Nodewright terminated the instance within the notice")
	assert.Less(t, rep.ReplacementLaunchedAfterSeconds, rep.SpotInterruption.InterruptedNodeGoneAfterSeconds, "replacement first")
	assert.Empty(t, rep.Errors, "only injected faults failed calls")
	t.Logf("replacement launched after %.3fs", rep.ReplacementLaunchedAfterSeconds)
}

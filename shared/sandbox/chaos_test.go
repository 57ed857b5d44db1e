package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/faults"
	"github.com/nodewright/nodewright/shared/testenv"
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
	assert.GreaterOrEqual(t, rep.FaultsTotal, 20)
	assert.GreaterOrEqual(t, rep.FailingShare[faults.AWS], 0.10)
	assert.GreaterOrEqual(t, rep.FailingShare[faults.Kube], 0.10)
	assert.Zero(t, rep.PodsLost)
	assert.Zero(t, rep.LeakedInstances)
	assert.Zero(t, rep.DuplicateLaunches)
	assert.Zero(t, rep.DuplicateEventsActedOn)
	assert.GreaterOrEqual(t, rep.ReplacementLaunchedAfterSeconds, 0.0, "a replacement was launched")
	assert.LessOrEqual(t, rep.ReplacementLaunchedAfterSeconds, 10.0)
	assert.Empty(t, rep.Errors, "only injected faults failed calls")
	assert.True(t, rep.Worked(), "targets: %v", rep.TargetsMet)
}

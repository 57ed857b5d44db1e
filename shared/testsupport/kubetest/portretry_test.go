package kubetest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// lostPort is the error a component start returned in CI when the port testenv.FreePort found free was
// taken by another test package's server before etcd bound it.
func lostPort() error {
	return fmt.Errorf("waiting for etcd: %w\n--- etcd output (tail) ---\n%s", fmt.Errorf("%w (last: connection refused)", testenv.ErrExited),
		`{"level":"fatal","msg":"discovery failed","error":"listen tcp 127.0.0.1:37873: bind: address already in use"}`)
}

func TestAComponentThatLostItsPortIsStartedAgain(t *testing.T) {
	cp := &ControlPlane{procs: map[string]*testenv.Process{}}
	starts := 0
	err := cp.startOnFreePorts("etcd", func() error {
		starts++
		if starts < 3 {
			return lostPort()
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, 3, starts)
}

func TestAComponentStartGivesUpAfterPortAttempts(t *testing.T) {
	cp := &ControlPlane{procs: map[string]*testenv.Process{}}
	starts := 0
	err := cp.startOnFreePorts("etcd", func() error { starts++; return lostPort() })
	require.Error(t, err)
	assert.Equal(t, portAttempts, starts)
}

func TestOtherStartFailuresAreNotRetried(t *testing.T) {
	cp := &ControlPlane{procs: map[string]*testenv.Process{}}
	starts := 0
	boom := errors.New("waiting for kube-apiserver: context deadline exceeded")
	err := cp.startOnFreePorts("kube-apiserver", func() error { starts++; return boom })
	assert.ErrorIs(t, err, boom)
	assert.Equal(t, 1, starts)
	exited := fmt.Errorf("waiting for etcd: %w\n--- etcd output (tail) ---\nflag provided but not defined", testenv.ErrExited)
	assert.False(t, portTaken(exited), "an exit for another reason")
}

package testenv

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFreePortCanBeBound(t *testing.T) {
	port, err := FreePort()
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	require.NoError(t, err)
	l.Close()
}

func TestPoll(t *testing.T) {
	t.Run("returns once ready", func(t *testing.T) {
		calls := 0
		err := Poll(context.Background(), time.Millisecond, nil, func(context.Context) error {
			if calls++; calls < 3 {
				return errors.New("not yet")
			}
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, 3, calls)
	})
	t.Run("gives up on the deadline with the last reason", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		err := Poll(ctx, time.Millisecond, nil, func(context.Context) error { return errors.New("port closed") })
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Contains(t, err.Error(), "port closed")
	})
	t.Run("gives up when the process exits", func(t *testing.T) {
		exited := make(chan struct{})
		close(exited)
		err := Poll(context.Background(), time.Hour, exited, func(context.Context) error { return errors.New("no") })
		assert.ErrorIs(t, err, ErrExited)
	})
}

func TestProcessOutputAndStop(t *testing.T) {
	p, err := StartProcess("sh", "/bin/sh", []string{"-c", "echo started; exec sleep 60"}, "")
	require.NoError(t, err)
	require.NoError(t, Poll(context.Background(), 10*time.Millisecond, p.Exited(), func(context.Context) error {
		if p.Output() != "started\n" {
			return errors.New("no output yet")
		}
		return nil
	}))
	p.Stop(5 * time.Second)
	select {
	case <-p.Exited():
	default:
		t.Fatal("process still running after Stop")
	}
}

func TestTailBufferKeepsTheEnd(t *testing.T) {
	b := &tailBuffer{max: 4}
	_, _ = b.Write([]byte("abcdef"))
	_, _ = b.Write([]byte("gh"))
	assert.Equal(t, "efgh", b.String())
}

func TestUnavailableFailsUnderCI(t *testing.T) {
	t.Setenv("CI", "true")
	assert.True(t, InCI())
	t.Setenv("CI", "")
	assert.False(t, InCI())
}

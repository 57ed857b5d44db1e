package crash_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/crash"
)

func TestAGoroutinesPanicComesBackFromWait(t *testing.T) {
	g, ctx := crash.WithContext(context.Background())
	g.Go(func() error { panic("boom") })
	g.Go(func() error {
		<-ctx.Done() // the panic cancels the group's context, as an error does
		return nil
	})
	err := g.Wait()
	pe, ok := crash.Is(err)
	require.True(t, ok, "Wait returns the recovered panic, got %v", err)
	assert.Equal(t, "boom", pe.Value)
	assert.Contains(t, string(pe.Stack), "group_test.go", "the stack is the panicking goroutine's")
}

func TestAGroupWithoutPanicsReturnsTheFirstError(t *testing.T) {
	g, _ := crash.WithContext(context.Background())
	want := errors.New("read failed")
	g.Go(func() error { return want })
	g.Go(func() error { return nil })
	err := g.Wait()
	assert.ErrorIs(t, err, want)
	_, ok := crash.Is(err)
	assert.False(t, ok)
}

func TestCaptureJoinsThePanicToTheFunctionsError(t *testing.T) {
	first := errors.New("earlier failure")
	run := func() (err error) {
		defer crash.Capture(&err)
		err = first
		var items []int
		return fmt.Errorf("unreachable: %d", items[len(items)]) // an index out of range: a runtime panic
	}
	err := run()
	assert.ErrorIs(t, err, first, "the error set before the panic is kept")
	pe, ok := crash.Is(err)
	require.True(t, ok)
	assert.Contains(t, pe.Error(), "index out of range")
}

package testenv

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatCPUCountsFromTheLastParenthesis(t *testing.T) {
	// A command name may hold spaces and parentheses; utime 250 and stime 120 ticks are fields 14 and 15.
	line := "4242 (kube (api) server) S 1 4242 4242 0 -1 4194560 9000 0 0 0 250 120 0 0 20 0 40 0 100 0 0"
	got, err := parseStatCPU(line)
	require.NoError(t, err)
	assert.Equal(t, 3700*time.Millisecond, got)

	_, err = parseStatCPU("4242 (short) S 1 2")
	assert.Error(t, err)
}

func TestCPUTimeOfThisProcessGrows(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	require.NoError(t, err)
	deadline := time.Now().Add(5 * time.Second)
	after := before
	for after <= before && time.Now().Before(deadline) {
		for i := 0; i < 1e6; i++ {
			_ = i * i
		}
		after, err = CPUTime(os.Getpid())
		require.NoError(t, err)
	}
	assert.Greater(t, after, before, "spinning shows up in /proc/<pid>/stat")
}

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The scenarios themselves run in shared/testsupport/sandbox's tests; here only the command line.
func TestDemoRejectsBadArguments(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"demo", "--scenario", "scale-down"}, `unknown scenario "scale-down" (have burst, chaos, coexistence, consolidation, detection, drift, expiry, headroom, scale-up, spot-interruption)`},
		{[]string{"demo", "--replicas", "0"}, "--replicas must be at least 1"},
		{[]string{"demo", "--scenario", "scale-up", "extra"}, "unexpected arguments [extra]"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := dispatch(tt.args, strings.NewReader(""), &out, &errOut)
		assert.Equal(t, 2, code, tt.args)
		assert.Contains(t, errOut.String(), tt.want, tt.args)
	}
}

func TestDemoReplicasDefaultPerScenario(t *testing.T) {
	assert.Equal(t, 1000, replicasFor("burst"), "1,000 pods that need 200 nodes")
	assert.Equal(t, 30, replicasFor("scale-up"))
	assert.Equal(t, 30, replicasFor("consolidation"))
	assert.Equal(t, 10, replicasFor("headroom"), "the buffer's chunks and the scale-up's pods")
}

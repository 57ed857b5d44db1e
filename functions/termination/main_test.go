package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuildNamesTheMissingEnvironment(t *testing.T) {
	t.Setenv("NODEWRIGHT_CLUSTER_NAME", "demo")
	t.Setenv("NODEWRIGHT_STATE_TABLE", "state")
	t.Setenv("NODEWRIGHT_TERMINATION_QUEUE_URL", "")
	_, err := build(context.Background())
	assert.ErrorContains(t, err, "NODEWRIGHT_TERMINATION_QUEUE_URL")
}

package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/kube"
)

func TestEnvironmentWinsOverDescribeCluster(t *testing.T) {
	got := fill(kube.Cluster{Name: "demo", Endpoint: "https://override"}, kube.Cluster{Endpoint: "https://eks", CA: "Q0E="})
	assert.Equal(t, kube.Cluster{Name: "demo", Endpoint: "https://override", CA: "Q0E="}, got)
}

func TestBuildNamesTheMissingEnvironment(t *testing.T) {
	t.Setenv("NODEWRIGHT_CLUSTER_NAME", "demo")
	t.Setenv("NODEWRIGHT_STATE_TABLE", "state")
	t.Setenv("NODEWRIGHT_TERMINATION_QUEUE_URL", "")
	_, err := build(context.Background())
	assert.ErrorContains(t, err, "NODEWRIGHT_TERMINATION_QUEUE_URL")
}

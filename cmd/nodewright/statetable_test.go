package main

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// motoTable creates a state table named name in moto, points the commands' AWS configuration at moto for
// the test, and returns the table's store.
func motoTable(t *testing.T, name string) *state.Store {
	t.Helper()
	moto := awstest.Shared(t)
	_, err := state.NewClient(moto.Config()).CreateTable(context.Background(), state.CreateTableInput(name))
	require.NoError(t, err)
	loadAWSConfig = func(context.Context, string) (aws.Config, error) { return moto.Config(), nil }
	t.Cleanup(func() { loadAWSConfig = nil })
	return state.New(state.NewClient(moto.Config()), name)
}

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

func TestApplyWritesValidatedConfigIdempotently(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "nodewright-state")

	sample := filepath.Join("..", "..", "infra", "manifests")
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"apply"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	code, out, stderr := run("-f", sample, "--table", "nodewright-state")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "ec2nodeclass/default created\nnodepool/default created\n", out)

	code, out, _ = run("-f", sample, "--table", "nodewright-state")
	require.Equal(t, 0, code)
	assert.Equal(t, "ec2nodeclass/default unchanged\nnodepool/default unchanged\n", out)

	np, err := store.GetConfig(ctx, state.KindNodePool, "default")
	require.NoError(t, err)
	assert.EqualValues(t, 1, np.Version)

	code, _, stderr = run("-f", filepath.Join("..", "..", "shared", "core", "apis", "testdata", "invalid"), "--table", "nodewright-state")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "nothing applied")

	code, _, _ = run("-f", sample)
	assert.Equal(t, 2, code, "the table is required")
}

func TestApplyRefusesToPruneAnEC2NodeClassClaimsUse(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "nodewright-state")
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"apply"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, _, stderr := run("-f", filepath.Join("..", "..", "infra", "manifests"), "--table", "nodewright-state")
	require.Equal(t, 0, code, stderr)
	for _, name := range []string{"default-abcde", "default-fghij"} {
		_, err := store.CreateClaim(ctx, state.Claim{Name: name, NodePool: "default", NodeClass: "default"})
		require.NoError(t, err)
	}

	// The NodePool moves to a new class; pruning would drop the one both claims use.
	moved, err := os.ReadFile(filepath.Join("..", "..", "infra", "manifests", "default.yaml"))
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "moved.yaml")
	require.NoError(t, os.WriteFile(file, bytes.ReplaceAll(moved, []byte("name: default\nspec:\n  role"), []byte("name: next\nspec:\n  role")), 0o600))
	require.NoError(t, os.WriteFile(file, bytes.ReplaceAll(mustRead(t, file), []byte("kind: EC2NodeClass\n        name: default"),
		[]byte("kind: EC2NodeClass\n        name: next")), 0o600))

	code, out, stderr := run("-f", file, "--table", "nodewright-state", "--prune")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "EC2NodeClass default: 2 NodeClaims use it")
	assert.Contains(t, stderr, "nothing applied")
	_, err = store.GetConfig(ctx, state.KindEC2NodeClass, "next")
	assert.True(t, state.IsNotFound(err), "the new class was not written either")

	code, out, stderr = run("-f", file, "--table", "nodewright-state")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "ec2nodeclass/next created", "without --prune nothing is removed")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

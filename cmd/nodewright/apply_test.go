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

	"github.com/nodewright/nodewright/shared/awstest"
	"github.com/nodewright/nodewright/shared/state"
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

	code, _, stderr = run("-f", filepath.Join("..", "..", "shared", "apis", "testdata", "invalid"), "--table", "nodewright-state")
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "nothing applied")

	code, _, _ = run("-f", sample)
	assert.Equal(t, 2, code, "the table is required")
}

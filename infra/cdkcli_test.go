package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// cdkCLI is the pinned CDK CLI `make test` installs (the Makefile's CDK_STAMP prerequisite).
func cdkCLI(t *testing.T) string {
	t.Helper()
	cli, err := filepath.Abs(filepath.Join("..", ".tools", "node_modules", ".bin", "cdk"))
	require.NoError(t, err)
	if _, err := os.Stat(cli); err != nil {
		testenv.Unavailable(t, "the pinned CDK CLI (make test installs it)", err)
	}
	return cli
}

// cdkSynth runs `cdk synth` as an operator does, from the repository root with cdk.json, plus context.
func cdkSynth(t *testing.T, cli, out string, values ...string) ([]byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := []string{"synth", "--no-notices", "--no-version-reporting", "--quiet", "--output", out}
	for _, c := range values {
		args = append(args, "-c", c)
	}
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CDK_DISABLE_VERSION_CHECK=1", "CDK_DISABLE_CLI_TELEMETRY=true",
		"JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1")
	return cmd.CombinedOutput()
}

func TestCDKCLISynthesizesTheStack(t *testing.T) {
	cli := cdkCLI(t)
	out := t.TempDir()
	log, err := cdkSynth(t, cli, out, "functionsDir="+fakeFunctions(t), "clusterName=cli-test")
	require.NoError(t, err, "%s", log)

	body, err := os.ReadFile(filepath.Join(out, "Nodewright-cli-test.template.json"))
	require.NoError(t, err, "the CLI writes the stack's template")
	var template struct {
		Resources map[string]struct {
			Type       string         `json:"Type"`
			Properties map[string]any `json:"Properties"`
		} `json:"Resources"`
	}
	require.NoError(t, json.Unmarshal(body, &template))
	count := map[string]int{}
	for _, r := range template.Resources {
		count[r.Type]++
		if r.Type == "AWS::Lambda::Function" && r.Properties["Runtime"] == "provided.al2023" {
			count["go function"]++
		}
	}
	assert.Equal(t, 6, count["go function"], "webhook, provisioner, lifecycle, interruption, termination, disruption")
	assert.Equal(t, 8, count["AWS::SQS::Queue"])
	assert.Equal(t, 1, count["AWS::DynamoDB::Table"])
	assert.Equal(t, 1, count["AWS::CloudWatch::Dashboard"])
	assert.Positive(t, count["AWS::CloudWatch::Alarm"])

	log, err = cdkSynth(t, cli, t.TempDir(), "functionsDir="+fakeFunctions(t), "manifests=shared/core/apis/testdata/invalid")
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "invalid manifests fail the synth: %v", err)
	assert.Contains(t, string(log), "invalid manifests (7 problems)")
	assert.Contains(t, string(log), "NodePool/broken: spec.weight: Invalid value: 0", "each problem names the object and the field")
}

package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/flows/interruption"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func required() map[string]string {
	return map[string]string{"NODEWRIGHT_CLUSTER_NAME": "demo", "NODEWRIGHT_STATE_TABLE": "state",
		"NODEWRIGHT_PROVISIONING_QUEUE_URL": "https://sqs/provisioning.fifo", "NODEWRIGHT_TERMINATION_QUEUE_URL": "https://sqs/termination"}
}

func TestSettingsDefaultToEventOnlyRebalance(t *testing.T) {
	s, err := readSettings(env(required()))
	require.NoError(t, err)
	assert.Equal(t, interruption.RebalanceEventOnly, s.rebalance)
	assert.Equal(t, "demo", s.cluster)

	vars := required()
	vars["NODEWRIGHT_REBALANCE_POLICY"] = "replace"
	s, err = readSettings(env(vars))
	require.NoError(t, err)
	assert.Equal(t, interruption.RebalanceReplace, s.rebalance)
}

func TestSettingsNameWhatIsWrong(t *testing.T) {
	for _, name := range []string{"NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_STATE_TABLE", "NODEWRIGHT_PROVISIONING_QUEUE_URL", "NODEWRIGHT_TERMINATION_QUEUE_URL"} {
		vars := required()
		delete(vars, name)
		_, err := readSettings(env(vars))
		assert.EqualError(t, err, name+" is required")
	}
	vars := required()
	vars["NODEWRIGHT_REBALANCE_POLICY"] = "drain"
	_, err := readSettings(env(vars))
	assert.EqualError(t, err, `NODEWRIGHT_REBALANCE_POLICY: rebalance policy "drain": must be "event" or "replace"`)
}

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func required() map[string]string {
	return map[string]string{"NODEWRIGHT_CLUSTER_NAME": "demo", "NODEWRIGHT_STATE_TABLE": "state",
		"NODEWRIGHT_TERMINATION_QUEUE_URL": "https://sqs/termination"}
}

func TestSettingsDefaults(t *testing.T) {
	s, err := readSettings(env(required()))
	require.NoError(t, err)
	assert.Zero(t, s.validationDelay, "zero: the runner's default, 15 s")

	vars := required()
	vars["NODEWRIGHT_DISRUPTION_VALIDATION_DELAY"] = "5s"
	s, err = readSettings(env(vars))
	require.NoError(t, err)
	assert.Equal(t, 5*time.Second, s.validationDelay)
}

func TestSettingsNameWhatIsWrong(t *testing.T) {
	for _, name := range []string{"NODEWRIGHT_CLUSTER_NAME", "NODEWRIGHT_STATE_TABLE", "NODEWRIGHT_TERMINATION_QUEUE_URL"} {
		vars := required()
		delete(vars, name)
		_, err := readSettings(env(vars))
		assert.EqualError(t, err, name+" is required")
	}
	vars := required()
	vars["NODEWRIGHT_DISRUPTION_VALIDATION_DELAY"] = "soon"
	_, err := readSettings(env(vars))
	assert.EqualError(t, err, `NODEWRIGHT_DISRUPTION_VALIDATION_DELAY: "soon" is not a duration`)
}

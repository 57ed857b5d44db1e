package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/sizing"
)

// TestFunctionMemoryFollowsClusterPods: every function gets the memory of the cluster's tier and a Go
// memory limit of 90% of it.
func TestFunctionMemoryFollowsClusterPods(t *testing.T) {
	template, _ := synthWith(t, map[string]interface{}{"clusterPods": "150000"})
	cfn := toCfn(t, template)
	want, err := sizing.For(150_000)
	require.NoError(t, err)
	prefixes := map[string]string{sizing.Provisioner: "Provisioner", sizing.Disruption: "Disruption", sizing.Lifecycle: "Lifecycle",
		sizing.Termination: "Termination", sizing.Interruption: "Interruption", sizing.Webhook: "Webhook"}
	require.Len(t, prefixes, len(sizing.Functions))
	for fn, prefix := range prefixes {
		_, props := cfn.one(t, "AWS::Lambda::Function", prefix+"HandlerFunction")
		assert.EqualValues(t, want[fn].MemoryMB, props["MemorySize"], fn)
		vars := props["Environment"].(map[string]interface{})["Variables"].(map[string]interface{})
		assert.Equal(t, want[fn].GoMemLimit(), vars["GOMEMLIMIT"], fn)
	}
	_, props := cfn.one(t, "AWS::Lambda::Function", "ProvisionerHandlerFunction")
	assert.EqualValues(t, 4096, props["MemorySize"], "the top tier")
}

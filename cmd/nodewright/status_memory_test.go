package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// status shows the memory registered Nodes reported beside the estimate the plans would use without it.
func TestStatusShowsObservedMemory(t *testing.T) {
	ctx := context.Background()
	store := motoTable(t, "status-memory")
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := dispatch(append([]string{"status", "--table", "status-memory"}, args...), strings.NewReader(""), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, stderr := run()
	require.Equal(t, 0, code, stderr)
	assert.NotContains(t, out, "OBSERVED MEMORY", "nothing observed, nothing shown")

	_, err := store.RecordMemory(ctx, state.MemoryObservation{InstanceType: "m5.large", ImageID: "ami-1", MemoryBytes: 7400 << 20,
		NominalMiB: 8192, Architecture: "amd64", Node: "ip-10-0-0-1"})
	require.NoError(t, err)
	_, err = store.RecordMemory(ctx, state.MemoryObservation{InstanceType: "m6g.large", ImageID: "ami-2", MemoryBytes: 7500 << 20})
	require.NoError(t, err)

	code, out, stderr = run()
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "OBSERVED MEMORY")
	// 8192 MiB less ceil(7.5 %) = 7577 MiB estimated.
	assert.Regexp(t, `m5\.large\s+ami-1\s+7400\s+7577\s+ip-10-0-0-1\s+(59|60)d`, out)
	assert.Regexp(t, `m6g\.large\s+ami-2\s+7500\s+-\s+-`, out, "no nominal memory recorded: no estimate shown")

	code, out, stderr = run("-o", "json")
	require.Equal(t, 0, code, stderr)
	var rep statusReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Memory, 2)
	assert.Equal(t, int64(7400), rep.Memory[0].ObservedMiB)
	assert.Equal(t, int64(7577), rep.Memory[0].EstimatedMiB)
}

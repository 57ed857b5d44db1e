package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

// chinaTable is a state table in moto's cn-north-1, which the commands reach as a stack deployed there.
func chinaTable(t *testing.T, name string) *state.Store {
	t.Helper()
	cfg := awstest.Shared(t).Config()
	cfg.Region = "cn-north-1"
	_, err := state.NewClient(cfg).CreateTable(context.Background(), state.CreateTableInput(name))
	require.NoError(t, err)
	loadAWSConfig = func(context.Context, string) (aws.Config, error) { return cfg, nil }
	t.Cleanup(func() { loadAWSConfig = nil })
	return state.New(state.NewClient(cfg), name)
}

func TestStatusAndExplainSayChinaPricesAreInCNY(t *testing.T) {
	ctx := context.Background()
	store := chinaTable(t, "china-state")
	_, err := store.CreateClaim(ctx, state.Claim{Name: "default-a1", NodePool: "default", Lifecycle: state.Launched,
		InstanceType: "m5.large", Zone: "cn-north-1a", CapacityType: "on-demand", PricePerHour: 1.013})
	require.NoError(t, err)

	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		require.Equal(t, 0, dispatch(args, strings.NewReader(""), &out, &errOut), errOut.String())
		return out.String()
	}
	text := run("status", "--table", "china-state")
	assert.Regexp(t, `(?m)^NODEPOOL\s+NODECLAIMS\s+LIFECYCLES\s+CNY/H\s+DRIFTED`, text)
	assert.Regexp(t, `(?m)^NAME .*\s+CAPACITY\s+CNY/H\s+NODE`, text)
	assert.NotContains(t, text, "$/H", "yuan are not dollars")
	var rep statusReport
	require.NoError(t, json.Unmarshal([]byte(run("status", "--table", "china-state", "-o", "json")), &rep))
	assert.Equal(t, "CNY", rep.Currency)

	text = run("explain", "nodeclaim/default-a1", "--table", "china-state")
	assert.Contains(t, text, "1.0130 CNY/h")
	assert.NotContains(t, text, "$1.0130")
}

func TestPerHourWritesTheCurrency(t *testing.T) {
	assert.Equal(t, "$0.1920/h", perHour("USD", 0.192))
	assert.Equal(t, "$0.1920/h", perHour("", 0.192))
	assert.Equal(t, "1.0130 CNY/h", perHour("CNY", 1.013))
	assert.Equal(t, "$/H", perHourHeader("USD"))
	assert.Equal(t, "CNY/H", perHourHeader("CNY"))
}

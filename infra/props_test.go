package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRebalancePolicyContext(t *testing.T) {
	cases := []struct {
		name, value, want, wantErr string
	}{
		{name: "default", value: "", want: "event"},
		{name: "event", value: "event", want: "event"},
		{name: "replace", value: "replace", want: "replace"},
		{name: "unknown", value: "drain", wantErr: `context value rebalancePolicy "drain" is not supported: use "event"`},
		{name: "case matters", value: "Replace", wantErr: `rebalancePolicy "Replace" is not supported`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := map[string]interface{}{"clusterName": "unit", "manifests": "manifests"}
			if tc.value != "" {
				ctx["rebalancePolicy"] = tc.value
			}
			props, err := stackPropsFromContext(awscdk.NewApp(&awscdk.AppProps{Context: &ctx}))
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, props.RebalancePolicy)
		})
	}
}

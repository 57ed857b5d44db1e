package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/core/sizing"
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
			if props, ok := propsOrError(t, ctx, tc.wantErr); ok {
				assert.Equal(t, tc.want, props.RebalancePolicy)
			}
		})
	}
}

func TestAlarmTopicArnContext(t *testing.T) {
	cases := []struct {
		name, value, region, want, wantErr string
	}{
		{name: "none", value: ""},
		{name: "topic", value: "arn:aws:sns:us-east-1:123456789012:ops-alerts", want: "arn:aws:sns:us-east-1:123456789012:ops-alerts"},
		{name: "other partition", value: "arn:aws-us-gov:sns:us-gov-west-1:123456789012:ops", region: "us-gov-west-1",
			want: "arn:aws-us-gov:sns:us-gov-west-1:123456789012:ops"},
		{name: "fifo topic", value: "arn:aws:sns:us-east-1:123456789012:ops.fifo", want: "arn:aws:sns:us-east-1:123456789012:ops.fifo"},
		{name: "a topic name, not an ARN", value: "ops-alerts",
			wantErr: `context value alarmTopicArn "ops-alerts" is not an SNS topic ARN: want arn:<partition>:sns:<region>:<account>:<topic>`},
		{name: "an SQS queue", value: "arn:aws:sqs:us-east-1:123456789012:ops", wantErr: `alarmTopicArn "arn:aws:sqs:us-east-1:123456789012:ops" is not an SNS topic ARN`},
		{name: "a subscription", value: "arn:aws:sns:us-east-1:123456789012:ops:0f1e2d3c-aaaa-bbbb-cccc-123456789abc",
			wantErr: "is not an SNS topic ARN"},
		{name: "short account", value: "arn:aws:sns:us-east-1:1234:ops", wantErr: "is not an SNS topic ARN"},
		{name: "another region", value: "arn:aws:sns:eu-west-1:123456789012:ops",
			wantErr: `alarmTopicArn "arn:aws:sns:eu-west-1:123456789012:ops" is in region eu-west-1, but CloudWatch alarms in us-east-1 can notify only a topic in us-east-1`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			region := tc.region
			if region == "" {
				region = "us-east-1"
			}
			ctx := map[string]interface{}{"clusterName": "unit", "manifests": "manifests", "region": region}
			if tc.value != "" {
				ctx["alarmTopicArn"] = tc.value
			}
			if props, ok := propsOrError(t, ctx, tc.wantErr); ok {
				assert.Equal(t, tc.want, props.AlarmTopicArn)
			}
		})
	}
}

func TestAlarmTopicArnInAnyRegionWhenEnvironmentAgnostic(t *testing.T) {
	arn, err := alarmTopicArn("arn:aws:sns:eu-west-1:123456789012:ops", nil)
	require.NoError(t, err)
	assert.Equal(t, "arn:aws:sns:eu-west-1:123456789012:ops", arn)
}

// propsOrError reads stack props from the context values; with wantErr it checks the error says so and
// reports false.
func propsOrError(t *testing.T, ctx map[string]interface{}, wantErr string) (StackProps, bool) {
	t.Helper()
	props, err := stackPropsFromContext(awscdk.NewApp(&awscdk.AppProps{Context: &ctx}))
	if wantErr != "" {
		require.Error(t, err)
		assert.Contains(t, err.Error(), wantErr)
		return props, false
	}
	require.NoError(t, err)
	return props, true
}

func TestClusterPodsContext(t *testing.T) {
	cases := []struct {
		name    string
		value   interface{}
		want    int
		wantErr string
	}{
		{name: "the default tier when unset", value: nil, want: sizing.DefaultClusterPods},
		{name: "JSON number in cdk.json", value: 60000.0, want: 60000},
		{name: "text from -c", value: "150000", want: 150000},
		{name: "zero", value: 0.0, wantErr: "context value clusterPods 0: must be between 1 and 150000"},
		{name: "beyond Kubernetes' ceiling", value: "150001", wantErr: "context value clusterPods 150001: must be between 1 and 150000"},
		{name: "not a number", value: "lots", wantErr: `context value clusterPods "lots" is not a whole number of pods`},
		{name: "a fraction", value: 1.5, wantErr: "context value clusterPods 1.5 is not a whole number of pods"},
		{name: "a boolean", value: true, wantErr: "context value clusterPods true is not a whole number of pods"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := map[string]interface{}{"clusterName": "unit", "manifests": "manifests"}
			if tc.value != nil {
				ctx["clusterPods"] = tc.value
			}
			if props, ok := propsOrError(t, ctx, tc.wantErr); ok {
				assert.Equal(t, tc.want, props.ClusterPods)
				want, err := sizing.For(tc.want)
				require.NoError(t, err)
				assert.Equal(t, want, props.Sizes)
			}
		})
	}
}

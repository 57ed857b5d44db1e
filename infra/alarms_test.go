package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testTopicArn = "arn:aws:sns:us-east-1:123456789012:nodewright-alarms"

// synthWithTopic is synth with the alarmTopicArn context value set.
func synthWithTopic(t *testing.T) (assertions.Template, assertions.Annotations) {
	t.Helper()
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]interface{}{"clusterName": "unit", "manifests": "manifests",
		"functionsDir": fakeFunctions(t), "region": "us-east-1", "alarmTopicArn": testTopicArn}})
	props, err := stackPropsFromContext(app)
	require.NoError(t, err)
	stack := NewNodewrightStack(app, props.StackName(), props)
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	return assertions.Template_FromStack(stack.Stack, nil), assertions.Annotations_FromStack(stack.Stack)
}

// alarmsOn returns the alarms on metric, keyed by the logical id of what their single dimension refers to.
func alarmsOn(t *testing.T, c cfnTemplate, namespace, metric string) map[string]map[string]interface{} {
	t.Helper()
	out := map[string]map[string]interface{}{}
	for id, a := range c.ofType("AWS::CloudWatch::Alarm") {
		if a["Namespace"] != namespace || a["MetricName"] != metric {
			continue
		}
		dims := a["Dimensions"].([]interface{})
		require.Len(t, dims, 1, id)
		ref := dimensionRef(dims[0].(map[string]interface{})["Value"])
		require.NotEmpty(t, ref, "alarm %s's dimension refers to a resource", id)
		out[ref] = a
	}
	return out
}

// dimensionRef is the logical id a dimension value ({"Ref": id} or {"Fn::GetAtt": [id, attr]}) refers to.
func dimensionRef(v interface{}) string {
	m, _ := v.(map[string]interface{})
	if ref, ok := m["Ref"].(string); ok {
		return ref
	}
	if att, ok := m["Fn::GetAtt"].([]interface{}); ok {
		return att[0].(string)
	}
	return ""
}

// byPrefix returns the one value whose key starts with prefix and ends in CDK's 8-character hash.
func byPrefix(t *testing.T, m map[string]map[string]interface{}, prefix string) map[string]interface{} {
	t.Helper()
	for k, v := range m {
		if strings.HasPrefix(k, prefix) && len(k) == len(prefix)+8 {
			return v
		}
	}
	require.Failf(t, "missing", "nothing for %s<hash> among %d", prefix, len(m))
	return nil
}

func TestAlarms(t *testing.T) {
	template, _ := synth(t)
	c := toCfn(t, template)

	t.Run("twenty-one alarms without actions when no topic is set", func(t *testing.T) {
		alarms := c.ofType("AWS::CloudWatch::Alarm")
		assert.Len(t, alarms, 21, "4 dead-letter queues, 2 queue ages, 6 functions' errors and throttles, unschedulable pods, refused launches, budget standstill")
		for id, a := range alarms {
			assert.Nil(t, a["AlarmActions"], id)
			assert.Nil(t, a["OKActions"], id)
			assert.Contains(t, a["AlarmDescription"], "Nodewright unit:", id)
		}
	})

	t.Run("any message in a dead-letter queue", func(t *testing.T) {
		dlq := alarmsOn(t, c, "AWS/SQS", "ApproximateNumberOfMessagesVisible")
		require.Len(t, dlq, 4, "one alarm per dead-letter queue and none on the work queues")
		for _, q := range []string{"Provisioning", "Interruption", "Termination"} {
			a := byPrefix(t, dlq, "Queues"+q+"DeadLetter")
			assert.EqualValues(t, 1, a["Threshold"], q)
			assert.Equal(t, "GreaterThanOrEqualToThreshold", a["ComparisonOperator"], q)
			assert.EqualValues(t, 1, a["EvaluationPeriods"], q)
			assert.Equal(t, "notBreaching", a["TreatMissingData"], q)
			assert.Equal(t, "Maximum", a["Statistic"], q)
		}
	})

	t.Run("provisioning older than five minutes, interruption older than one", func(t *testing.T) {
		age := alarmsOn(t, c, "AWS/SQS", "ApproximateAgeOfOldestMessage")
		require.Len(t, age, 2)
		for q, limit := range map[string]float64{"Provisioning": 300, "Interruption": 60} {
			a := byPrefix(t, age, "Queues"+q)
			assert.EqualValues(t, limit, a["Threshold"], q)
			assert.Equal(t, "GreaterThanThreshold", a["ComparisonOperator"], q)
			assert.EqualValues(t, 60, a["Period"], q)
			assert.EqualValues(t, 1, a["EvaluationPeriods"], q)
			assert.Equal(t, "Maximum", a["Statistic"], q)
		}
	})

	t.Run("each function failing in 3 of 5 minutes", func(t *testing.T) {
		errs := alarmsOn(t, c, "AWS/Lambda", "Errors")
		require.Len(t, errs, 6)
		for _, fn := range []string{"WebhookHandler", "ProvisionerHandler", "LifecycleHandler", "InterruptionHandler", "TerminationHandler"} {
			a := byPrefix(t, errs, fn+"Function")
			assert.EqualValues(t, 0, a["Threshold"], fn)
			assert.Equal(t, "GreaterThanThreshold", a["ComparisonOperator"], fn)
			assert.Equal(t, "Sum", a["Statistic"], fn)
			assert.EqualValues(t, 60, a["Period"], fn)
			assert.EqualValues(t, 5, a["EvaluationPeriods"], fn)
			assert.EqualValues(t, 3, a["DatapointsToAlarm"], fn)
			assert.Equal(t, "notBreaching", a["TreatMissingData"], fn)
		}
	})

	t.Run("the webhook throttled at all, other functions in 3 of 5 minutes", func(t *testing.T) {
		throttles := alarmsOn(t, c, "AWS/Lambda", "Throttles")
		require.Len(t, throttles, 6)
		for fn, want := range map[string]float64{"WebhookHandler": 1, "ProvisionerHandler": 3, "LifecycleHandler": 3,
			"InterruptionHandler": 3, "TerminationHandler": 3, "DisruptionHandler": 3} {
			a := byPrefix(t, throttles, fn+"Function")
			assert.EqualValues(t, 0, a["Threshold"], fn)
			assert.Equal(t, "GreaterThanThreshold", a["ComparisonOperator"], fn)
			assert.Equal(t, "Sum", a["Statistic"], fn)
			assert.EqualValues(t, 60, a["Period"], fn)
			assert.EqualValues(t, want, a["DatapointsToAlarm"], fn)
			assert.Equal(t, "notBreaching", a["TreatMissingData"], fn)
		}
		assert.Contains(t, byPrefix(t, throttles, "WebhookHandlerFunction")["AlarmDescription"], "rotate the token")
	})

	t.Run("pods unschedulable for fifteen minutes", func(t *testing.T) {
		var found []map[string]interface{}
		for _, a := range c.ofType("AWS::CloudWatch::Alarm") {
			if a["MetricName"] == "scheduler_unschedulable_pods_count" {
				found = append(found, a)
			}
		}
		require.Len(t, found, 1)
		a := found[0]
		assert.Equal(t, "Nodewright", a["Namespace"])
		assert.Equal(t, []interface{}{map[string]interface{}{"Name": "cluster", "Value": "unit"}}, a["Dimensions"])
		assert.Equal(t, "Minimum", a["Statistic"], "every run of the period saw unschedulable pods")
		assert.EqualValues(t, 0, a["Threshold"])
		assert.Equal(t, "GreaterThanThreshold", a["ComparisonOperator"])
		assert.EqualValues(t, 15*60, a["Period"].(float64)*a["EvaluationPeriods"].(float64))
	})

	t.Run("any launch EC2 refuses as unauthorized or invalid", func(t *testing.T) {
		var found []map[string]interface{}
		for _, a := range c.ofType("AWS::CloudWatch::Alarm") {
			if a["MetricName"] == "provisioner_launches_never_succeed_total" {
				found = append(found, a)
			}
		}
		require.Len(t, found, 1)
		a := found[0]
		assert.Equal(t, "Nodewright", a["Namespace"])
		assert.Equal(t, "Sum", a["Statistic"])
		assert.EqualValues(t, 0, a["Threshold"])
		assert.Equal(t, "GreaterThanThreshold", a["ComparisonOperator"])
		assert.EqualValues(t, 60, a["Period"])
		assert.EqualValues(t, 1, a["EvaluationPeriods"])
	})

	t.Run("consolidation held by a budget for three hours", func(t *testing.T) {
		var found []map[string]interface{}
		for _, a := range c.ofType("AWS::CloudWatch::Alarm") {
			if a["MetricName"] == "voluntary_disruption_budget_blocked_nodepools" {
				found = append(found, a)
			}
		}
		require.Len(t, found, 1)
		a := found[0]
		assert.Equal(t, "Nodewright", a["Namespace"])
		assert.Equal(t, []interface{}{map[string]interface{}{"Name": "cluster", "Value": "unit"}}, a["Dimensions"])
		assert.Equal(t, "Minimum", a["Statistic"], "every run of the hour found a NodePool at a standstill")
		assert.EqualValues(t, 0, a["Threshold"])
		assert.Equal(t, "GreaterThanThreshold", a["ComparisonOperator"])
		assert.Equal(t, "notBreaching", a["TreatMissingData"], "runs that decide nothing are no evidence")
		assert.EqualValues(t, 3*3600, a["Period"].(float64)*a["EvaluationPeriods"].(float64))
	})
}

func TestAlarmsNotifyTopic(t *testing.T) {
	template, annotations := synthWithTopic(t)
	alarms := toCfn(t, template).ofType("AWS::CloudWatch::Alarm")
	require.Len(t, alarms, 21)
	for id, a := range alarms {
		assert.Equal(t, []interface{}{testTopicArn}, a["AlarmActions"], "%s notifies when it fires", id)
		assert.Equal(t, []interface{}{testTopicArn}, a["OKActions"], "%s notifies when it recovers", id)
	}
	template.ResourceCountIs(jsii.String("AWS::SNS::Topic"), jsii.Number(0))

	errs := annotations.FindError(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
	warns := annotations.FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*")))
	for _, m := range append(*errs, *warns...) {
		finding, _ := json.Marshal(m)
		t.Errorf("cdk-nag: %s", finding)
	}
}

package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
)

// Alarms are the conditions that need an operator: work stuck in a dead-letter queue, a work queue
// falling behind, a function failing or throttled again and again, pods no NodePool can fit, consolidation
// held by a budget for hours. With a topic, each alarm
// notifies it when it fires and when it recovers.
type Alarms struct {
	constructs.Construct
	// DeadLetter maps each work queue's name to the alarm on its dead-letter queue.
	DeadLetter map[string]awscloudwatch.Alarm
	// QueueAge maps the provisioning and interruption queues' names to their oldest-message alarms.
	QueueAge map[string]awscloudwatch.Alarm
	// Errors and Throttles map each function's name to its error and throttle alarms.
	Errors, Throttles map[string]awscloudwatch.Alarm
	Unschedulable     awscloudwatch.Alarm
	// LaunchesRefused fires when EC2 refuses launches as unauthorized or invalid.
	LaunchesRefused awscloudwatch.Alarm
	BudgetBlocked   awscloudwatch.Alarm
	// All are the alarms above in a stable order: queues, functions, pods, budgets.
	All []awscloudwatch.Alarm
}

// queueAgeLimits are how old a work queue's oldest message may get. A pending pod waits for the
// provisioning queue, whose single consumer normally empties it within a run or two (a minute each);
// five minutes means runs are failing or far too slow. A spot interruption notice gives two minutes, so
// an interruption message older than one minute leaves too little time to replace and drain the node.
// The termination queue is left out: the drain re-sends its messages, so their age stays small even
// when a drain is stuck (its dead-letter alarm catches that).
var queueAgeLimits = map[string]float64{"Provisioning": 300, "Interruption": 60}

// NewAlarms creates the alarms on w; topicArn, when not empty, is the SNS topic they notify.
func NewAlarms(scope constructs.Construct, id string, w Watched, topicArn string) *Alarms {
	c := constructs.NewConstruct(scope, jsii.String(id))
	a := &Alarms{Construct: c, DeadLetter: map[string]awscloudwatch.Alarm{}, QueueAge: map[string]awscloudwatch.Alarm{},
		Errors: map[string]awscloudwatch.Alarm{}, Throttles: map[string]awscloudwatch.Alarm{}}
	minute := awscdk.Duration_Minutes(jsii.Number(1))
	for _, q := range w.Queues.ordered() {
		// Any message here is work that failed every retry; one datapoint is enough. An idle queue
		// publishes nothing, which is not a problem.
		a.DeadLetter[q.Name] = a.add(awscloudwatch.NewAlarm(c, jsii.String(q.Name+"DeadLetter"), &awscloudwatch.AlarmProps{
			Metric: q.DeadLetter.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
				Statistic: jsii.String(statMax), Period: minute}),
			Threshold: jsii.Number(1), EvaluationPeriods: jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			AlarmDescription: jsii.String(fmt.Sprintf("Nodewright %s: the %s dead-letter queue holds messages that failed "+
				"every retry. Read them and the function's logs, fix the cause, then redrive them.", w.ClusterName, q.Name)),
		}))
		limit, watched := queueAgeLimits[q.Name]
		if !watched {
			continue
		}
		// The age is itself a duration, so one datapoint over the limit already means "for that long".
		a.QueueAge[q.Name] = a.add(awscloudwatch.NewAlarm(c, jsii.String(q.Name+"OldestMessage"), &awscloudwatch.AlarmProps{
			Metric: q.Work.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{
				Statistic: jsii.String(statMax), Period: minute}),
			Threshold: jsii.Number(limit), EvaluationPeriods: jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			AlarmDescription: jsii.String(fmt.Sprintf("Nodewright %s: the %s queue's oldest message is older than %.0f s; "+
				"its function is failing, throttled or too slow (see Plumbing on the dashboard).", w.ClusterName, q.Name, limit)),
		}))
	}
	for _, f := range w.Functions {
		// Minutes with errors in 3 of the last 5: one failed invocation is retried by its queue or the next
		// tick and needs nobody, while the scheduled functions run every minute, so a persistent fault fills
		// most minutes and fires within three. Minutes without invocations are not errors.
		a.Errors[f.Name] = a.add(awscloudwatch.NewAlarm(c, jsii.String(f.Name+"Errors"), &awscloudwatch.AlarmProps{
			Metric:    f.Function.MetricErrors(&awscloudwatch.MetricOptions{Statistic: jsii.String(statSum), Period: minute}),
			Threshold: jsii.Number(0), EvaluationPeriods: jsii.Number(5), DatapointsToAlarm: jsii.Number(3),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
			AlarmDescription: jsii.String(fmt.Sprintf("Nodewright %s: the %s function failed in 3 of the last 5 minutes; "+
				"read its log group.", w.ClusterName, f.Name)),
		}))
		a.Throttles[f.Name] = a.add(throttleAlarm(c, w.ClusterName, f))
	}
	// The provisioner reports unschedulable pods on every run (at least once a minute). The minimum of
	// each 5-minute period above zero in 3 periods in a row means some pod fit no NodePool for 15 minutes,
	// not that a burst was briefly waiting. No runs is no evidence; the error alarms cover a broken function.
	a.Unschedulable = a.add(awscloudwatch.NewAlarm(c, jsii.String("UnschedulablePods"), &awscloudwatch.AlarmProps{
		Metric: emf{cluster: w.ClusterName}.metric(metrics.SchedulerUnschedulablePods, statMin, "").
			With(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(5))}),
		Threshold: jsii.Number(0), EvaluationPeriods: jsii.Number(3),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		AlarmDescription: jsii.String(fmt.Sprintf("Nodewright %s: pods have fit no NodePool for 15 minutes (requirements, "+
			"taints, limits or instance types); `nodewright explain pod/NS/NAME` and the pods' events say why.", w.ClusterName)),
	}))
	// EC2 refusing a launch as unauthorized or invalid is a configuration problem no retry fixes: every
	// run that tries again is refused again, so one minute with such a refusal is enough.
	a.LaunchesRefused = a.add(awscloudwatch.NewAlarm(c, jsii.String("LaunchesRefused"), &awscloudwatch.AlarmProps{
		Metric: emf{cluster: w.ClusterName}.metric(metrics.LaunchesNeverSucceed, statSum, "").
			With(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1))}),
		Threshold: jsii.Number(0), EvaluationPeriods: jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		AlarmDescription: jsii.String(fmt.Sprintf("Nodewright %s: EC2 refused launches as unauthorized or invalid; no retry "+
			"will fix that. `nodewright explain nodeclaim/NAME` shows the refusal (decision LaunchFailed, reason "+
			"Unauthorized or InvalidRequest): check the provisioner's role and the EC2NodeClass.", w.ClusterName)),
	}))
	// A NodePool whose budgets allow no disruption while it has candidates is at a standstill. Budgets
	// that are 0 by schedule for a few hours are normal (business hours); every hourly minimum above zero
	// for 3 hours in a row is worth a look. Runs that decide nothing write no datapoint.
	a.BudgetBlocked = a.add(awscloudwatch.NewAlarm(c, jsii.String("ConsolidationBlockedByBudget"), &awscloudwatch.AlarmProps{
		Metric: emf{cluster: w.ClusterName}.metric(metrics.BudgetBlockedPools, statMin, "").
			With(&awscloudwatch.MetricOptions{Period: awscdk.Duration_Hours(jsii.Number(1))}),
		Threshold: jsii.Number(0), EvaluationPeriods: jsii.Number(3),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		AlarmDescription: jsii.String(fmt.Sprintf("Nodewright %s: a NodePool's disruption budgets have allowed no consolidation "+
			"for 3 hours although it has nodes to consolidate; check spec.disruption.budgets and drains held by "+
			"PodDisruptionBudgets (`nodewright explain node/NAME`).", w.ClusterName)),
	}))
	if topicArn != "" {
		notify := awscloudwatchactions.NewSnsAction(awssns.Topic_FromTopicArn(c, jsii.String("Topic"), jsii.String(topicArn)))
		for _, alarm := range a.All {
			alarm.AddAlarmAction(notify)
			alarm.AddOkAction(notify)
		}
	}
	return a
}

// throttleAlarm fires when f's invocations are throttled. Every function's reserved concurrency covers
// what its triggers can start at once (concurrency.go), so a throttle means a flood or a limit set too low.
// The webhook's alarm fires on any throttled minute: the API server fails such a call open and logs the
// failure, and its log line can carry the webhook's URL, secret path token included. The others fire on 3 of 5
// minutes: a throttled queue batch or tick is retried, but one that keeps being throttled is work waiting.
func throttleAlarm(c constructs.Construct, cluster string, f NamedFunction) awscloudwatch.Alarm {
	periods, datapoints := 5.0, 3.0
	description := fmt.Sprintf("Nodewright %s: the %s function was throttled in 3 of the last 5 minutes; its work is "+
		"waiting. Look for a flood of its events, or raise its reserved concurrency.", cluster, f.Name)
	if f.Name == "Webhook" {
		periods, datapoints = 1, 1
		description = fmt.Sprintf("Nodewright %s: the webhook was throttled. The API server let those pods through "+
			"(failurePolicy Ignore) and logged the failure, which can include the webhook's URL and its token: rotate the token (infra/README.md, section "+
			"Rotating the webhook token), and look for a flood of calls to the Function URL.", cluster)
	}
	return awscloudwatch.NewAlarm(c, jsii.String(f.Name+"Throttles"), &awscloudwatch.AlarmProps{
		Metric: f.Function.MetricThrottles(&awscloudwatch.MetricOptions{Statistic: jsii.String(statSum),
			Period: awscdk.Duration_Minutes(jsii.Number(1))}),
		Threshold: jsii.Number(0), EvaluationPeriods: jsii.Number(periods), DatapointsToAlarm: jsii.Number(datapoints),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		AlarmDescription:   jsii.String(description),
	})
}

func (a *Alarms) add(alarm awscloudwatch.Alarm) awscloudwatch.Alarm {
	a.All = append(a.All, alarm)
	return alarm
}

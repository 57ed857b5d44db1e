package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/adapters/metrics"
)

// Statistics the sections use.
const (
	statSum = "Sum"
	statMax = "Maximum"
	statMin = "Minimum"
	statP50 = "p50"
	statP99 = "p99"
)

// metricSections are the dashboard's sections on what Nodewright does and on the AWS parts it runs on.
func metricSections(w Watched) []dashboardSection {
	e := emf{cluster: w.ClusterName}
	return []dashboardSection{scaleUpSection(e), capacitySection(e), consolidationSection(e), interruptionSection(e),
		terminationSection(e), plumbingSection(w)}
}

func scaleUpSection(e emf) dashboardSection {
	return dashboardSection{
		title: "Scale-up",
		meaning: "Pods waiting for nodes, what the provisioner launched for them and the webhook that wakes it; unschedulable pods " +
			"fit no NodePool (`nodewright explain` says why).",
		widgets: []awscloudwatch.IWidget{
			graph("Pods waiting", 6, e.metric(metrics.SchedulerQueueDepth, statMax, "queue depth"),
				e.metric(metrics.SchedulerUnschedulablePods, statMax, "unschedulable"),
				e.metric(metrics.InflightClaims, statMax, "in-flight NodeClaims")),
			graph("Scheduling duration (s)", 6, e.metric(metrics.SchedulingDuration, statP50, "p50"),
				e.metric(metrics.SchedulingDuration, statP99, "p99"), e.metric(metrics.SchedulingDuration, statMax, "max")),
			graph("NodeClaims created per NodePool", 6, e.search(metrics.ClaimsCreated, []string{dimNodePool}, statSum, "")),
			graph("Nodes created per NodePool and zone", 6, e.search(metrics.NodesCreated, []string{dimNodePool, dimZone}, statSum, "")),
			graph("Coalesced triggers", 6, e.metric(metrics.CoalescedTriggers, statSum, "coalesced")),
			graph("Failed launches by reason", 6, e.search(metrics.LaunchFailures, []string{dimNodePool, dimReason}, statSum, "")),
			graph("Webhook requests by result", 6, e.search(metrics.WebhookRequests, []string{dimResult}, statSum, "")),
			graph("Webhook answer time p99 (s)", 6, e.search(metrics.WebhookDuration, []string{dimResult}, statP99, "")),
		},
	}
}

func capacitySection(e emf) dashboardSection {
	dims := []string{dimNodePool, dimResourceType}
	usageVsLimit := func(terms ...string) []awscloudwatch.IMetric {
		return []awscloudwatch.IMetric{
			e.search(metrics.PoolUsage, dims, statMax, "usage", terms...),
			e.search(metrics.PoolLimit, dims, statMax, "limit", terms...),
		}
	}
	requestsVsAllocatable := func(resource string) []awscloudwatch.IMetric {
		term := dimResourceType + `="` + resource + `"`
		return []awscloudwatch.IMetric{
			e.search(metrics.NodesAllocatable, dims, statMax, "allocatable", term),
			e.search(metrics.NodesPodRequests, dims, statMax, "pod requests", term),
			e.search(metrics.NodesDaemonRequests, dims, statMax, "daemon requests", term),
			e.search(metrics.NodesSystemOverhead, dims, statMax, "system overhead", term),
		}
	}
	return dashboardSection{
		title: "Capacity",
		meaning: "What each NodePool uses against its limits (a NodePool at its limit launches nothing more), what its Nodes " +
			"offer against what their pods request, how fast pods start and what the instances in use cost.",
		widgets: []awscloudwatch.IWidget{
			graph("CPU usage vs limit (cores)", 8, usageVsLimit(dimResourceType+`="cpu"`)...),
			graph("Memory usage vs limit (bytes)", 8, usageVsLimit(dimResourceType+`="memory"`)...),
			graph("Nodes, pods and other resources vs limit", 8,
				usageVsLimit("NOT "+dimResourceType+`="cpu"`, "NOT "+dimResourceType+`="memory"`)...),
			graph("CPU allocatable vs requested (cores)", 8, requestsVsAllocatable("cpu")...),
			graph("Memory allocatable vs requested (bytes)", 8, requestsVsAllocatable("memory")...),
			graph("Cluster utilization (% of allocatable requested)", 8,
				e.search(metrics.ClusterUtilization, []string{dimResourceType}, statMax, "")),
			graph("Pods on Nodewright nodes by phase", 8, e.search(metrics.PodsState, []string{dimNodePool, dimPhase}, statMax, "")),
			graph("Pod startup (s)", 8, e.metric(metrics.PodsStartupDuration, statP50, "p50"),
				e.metric(metrics.PodsStartupDuration, statP99, "p99")),
			graph("Price of the offerings in use ($/hour)", 8,
				e.search(metrics.OfferingPriceEstimate, []string{dimInstanceType, dimCapacityType, dimZone}, statMax, "")),
		},
	}
}

func consolidationSection(e emf) dashboardSection {
	poolReason := []string{dimNodePool, dimReason}
	return dashboardSection{
		title: "Consolidation",
		meaning: "Empty and underused nodes removed or replaced cheaper, drifted nodes rolled within budgets, expired ones replaced first; a NodePool with eligible nodes " +
			"and no allowed disruptions for hours is held by its budget (`nodewright explain node/NAME` says why a node stays).",
		widgets: []awscloudwatch.IWidget{
			graph("Decisions by action, reason and method", 8,
				e.search(metrics.DisruptionDecisions, []string{dimDecision, dimReason, dimMethod}, statSum, "")),
			graph("Eligible nodes per NodePool", 8, e.search(metrics.DisruptionEligibleNodes, []string{dimNodePool}, statMax, "")),
			graph("Allowed disruptions per NodePool and reason", 8, e.search(metrics.AllowedDisruptions, poolReason, statMin, "")),
			graph("NodeClaims disrupted per NodePool and reason; node repairs by condition", 8,
				e.search(metrics.ClaimsDisrupted, poolReason, statSum, ""),
				e.search(metrics.ClaimsUnhealthyDisrupted, []string{dimNodePool, dimCondition, dimCapacityType}, statSum, "repaired")),
			graph("Drifted NodeClaims per NodePool and drift type", 8, e.search(metrics.ClaimsDrifted, []string{dimNodePool, dimType}, statMax, "")),
			graph("Expired NodeClaims per NodePool", 8, e.search(metrics.ClaimsExpired, []string{dimNodePool}, statMax, "")),
			graph("Evaluation duration (s)", 8, e.metric(metrics.DisruptionEvaluation, statP50, "p50"),
				e.metric(metrics.DisruptionEvaluation, statMax, "max")),
			graph("Failed validations, rollbacks, pools held by budgets", 8,
				e.metric(metrics.DisruptionFailedValidations, statSum, "failed validations"),
				e.metric(metrics.DisruptionQueueFailures, statSum, "rolled back"),
				e.metric(metrics.BudgetBlockedPools, statMax, "NodePools held by budgets")),
			graph("Balanced moves per NodePool; their median score (approved at 0.5)", 8,
				e.search(metrics.ConsolidationMoves, []string{dimDecision, dimNodePool, dimPolicy}, statSum, ""),
				e.search(metrics.ConsolidationScore, []string{dimDecision, dimNodePool, dimPolicy}, statP50, "score")),
		},
	}
}

func interruptionSection(e emf) dashboardSection {
	return dashboardSection{
		title: "Interruption",
		meaning: "Spot notices, rebalance recommendations, health and state-change events and what they disrupted; " +
			"a spot notice gives two minutes, so time in queue must stay short.",
		widgets: []awscloudwatch.IWidget{
			graph("Messages received by type", 6, e.search(metrics.InterruptionReceived, []string{dimMessageType}, statSum, ""),
				e.metric(metrics.InterruptionDeleted, statSum, "deleted")),
			graph("Messages failed", 6, e.metric(metrics.InterruptionFailed, statSum, "failed"),
				e.metric(metrics.InterruptionRetried, statSum, "retried")),
			graph("Time in queue (s)", 6, e.metric(metrics.InterruptionQueueDuration, statP99, "p99"),
				e.metric(metrics.InterruptionQueueDuration, statMax, "max")),
			graph("NodeClaims disrupted by reason", 6,
				e.search(metrics.ClaimsDisrupted, []string{dimNodePool, dimReason}, statSum, "")),
		},
	}
}

func terminationSection(e emf) dashboardSection {
	pool := []string{dimNodePool}
	return dashboardSection{
		title: "Termination",
		meaning: "Nodes drained and removed, how long it took and how long they lived; many redriven requests or refused " +
			"evictions (429) mean PodDisruptionBudgets are holding drains.",
		widgets: []awscloudwatch.IWidget{
			graph("Nodes drained / terminated", 6, e.search(metrics.NodesDrained, pool, statSum, "drained"),
				e.search(metrics.NodesTerminated, []string{dimNodePool, dimZone}, statSum, "terminated")),
			graph("NodeClaims terminated", 6, e.search(metrics.ClaimsTerminated, []string{dimNodePool, dimCapacityType, dimZone}, statSum, "")),
			graph("Termination duration (s)", 6, e.search(metrics.NodesTerminationDuration, pool, statP50, "p50"),
				e.search(metrics.NodesTerminationDuration, pool, statP99, "p99")),
			graph("Node lifetime (s)", 6, e.search(metrics.NodesLifetime, pool, statP50, "p50")),
			graph("Termination requests redriven", 8, e.metric(metrics.TerminationRedriven, statSum, "redriven")),
			graph("Pods drained by reason", 8, e.search(metrics.PodsDrained, []string{dimReason}, statSum, "")),
			graph("Eviction requests by code", 8, e.search(metrics.EvictionRequests, []string{dimCode}, statSum, "")),
		},
	}
}

func plumbingSection(w Watched) dashboardSection {
	per := func(m func(NamedFunction) awscloudwatch.IMetric) []awscloudwatch.IMetric {
		out := []awscloudwatch.IMetric{}
		for _, f := range w.Functions {
			out = append(out, m(f))
		}
		return out
	}
	opts := func(f NamedFunction, stat string) *awscloudwatch.MetricOptions {
		return &awscloudwatch.MetricOptions{Statistic: jsii.String(stat), Label: jsii.String(f.Name), Period: metricPeriod()}
	}
	var age, visible, dead []awscloudwatch.IMetric
	for _, q := range w.Queues.ordered() {
		age = append(age, q.Work.MetricApproximateAgeOfOldestMessage(queueOpts(q.Name)))
		visible = append(visible, q.Work.MetricApproximateNumberOfMessagesVisible(queueOpts(q.Name)))
		dead = append(dead, q.DeadLetter.MetricApproximateNumberOfMessagesVisible(queueOpts(q.Name+" DLQ")))
	}
	return dashboardSection{
		title: "Plumbing",
		meaning: "The functions and queues underneath: errors, throttles, old messages or anything in a dead-letter " +
			"queue mean work is not getting done.",
		widgets: []awscloudwatch.IWidget{
			graph("Invocations", 6, per(func(f NamedFunction) awscloudwatch.IMetric { return f.Function.MetricInvocations(opts(f, statSum)) })...),
			graph("Errors", 6, per(func(f NamedFunction) awscloudwatch.IMetric { return f.Function.MetricErrors(opts(f, statSum)) })...),
			graph("Throttles", 6, per(func(f NamedFunction) awscloudwatch.IMetric { return f.Function.MetricThrottles(opts(f, statSum)) })...),
			graph("Duration p99 (ms)", 6, per(func(f NamedFunction) awscloudwatch.IMetric { return f.Function.MetricDuration(opts(f, statP99)) })...),
			graph("Oldest message age (s)", 8, age...),
			graph("Messages visible", 8, visible...),
			graph("Dead-letter messages visible", 8, dead...),
		},
	}
}

// queueOpts reads an SQS metric's maximum per minute, labelled label.
func queueOpts(label string) *awscloudwatch.MetricOptions {
	return &awscloudwatch.MetricOptions{Statistic: jsii.String(statMax), Label: jsii.String(label), Period: metricPeriod()}
}

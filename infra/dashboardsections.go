package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"
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
		meaning: "Pods waiting for nodes and what the provisioner launched for them; unschedulable pods fit no NodePool " +
			"(`nodewright explain` says why).",
		widgets: []awscloudwatch.IWidget{
			graph("Pods waiting", 6, e.metric(metricPendingPods, statMax, "pending"),
				e.metric(metricUnschedulablePods, statMax, "unschedulable"),
				e.metric(metricInflightClaims, statMax, "in-flight NodeClaims")),
			graph("Scheduling duration (s)", 6, e.metric(metricSchedulingDuration, statP50, "p50"),
				e.metric(metricSchedulingDuration, statP99, "p99"), e.metric(metricSchedulingDuration, statMax, "max")),
			graph("NodeClaims created per NodePool", 6, e.search(metricClaimsCreated, []string{dimNodePool}, statSum, "")),
			graph("Coalesced triggers", 6, e.metric(metricCoalescedTriggers, statSum, "coalesced")),
			graph("Failed launches by reason", 6, e.search(metricLaunchFailed, []string{dimNodePool, dimReason}, statSum, "")),
		},
	}
}

func capacitySection(e emf) dashboardSection {
	dims := []string{dimNodePool, dimResourceType}
	usageVsLimit := func(terms ...string) []awscloudwatch.IMetric {
		return []awscloudwatch.IMetric{
			e.search(metricPoolUsage, dims, statMax, "usage", terms...),
			e.search(metricPoolLimit, dims, statMax, "limit", terms...),
		}
	}
	return dashboardSection{
		title:   "Capacity",
		meaning: "What each NodePool uses against its limits; a NodePool at its limit launches nothing more.",
		widgets: []awscloudwatch.IWidget{
			graph("CPU usage vs limit (cores)", 8, usageVsLimit(dimResourceType+`="cpu"`)...),
			graph("Memory usage vs limit (bytes)", 8, usageVsLimit(dimResourceType+`="memory"`)...),
			graph("Nodes, pods and other resources vs limit", 8,
				usageVsLimit("NOT "+dimResourceType+`="cpu"`, "NOT "+dimResourceType+`="memory"`)...),
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
				e.search(metricDisruptionDecisions, []string{dimDecision, dimReason, dimMethod}, statSum, "")),
			graph("Eligible nodes per NodePool", 8, e.search(metricDisruptionEligible, []string{dimNodePool}, statMax, "")),
			graph("Allowed disruptions per NodePool and reason", 8, e.search(metricAllowedDisruptions, poolReason, statMin, "")),
			graph("NodeClaims handed to termination", 8, e.search(metricClaimsConsolidated, poolReason, statSum, "")),
			graph("Drifted NodeClaims per NodePool and drift type", 8, e.search(metricClaimsDrifted, []string{dimNodePool, dimType}, statMax, "")),
			graph("Expired NodeClaims per NodePool", 8, e.search(metricClaimsExpired, []string{dimNodePool}, statMax, "")),
			graph("Evaluation duration (s)", 8, e.metric(metricDisruptionEvaluation, statP50, "p50"),
				e.metric(metricDisruptionEvaluation, statMax, "max")),
			graph("Failed validations, rollbacks, pools held by budgets", 8,
				e.metric(metricDisruptionFailedChecks, statSum, "failed validations"),
				e.metric(metricDisruptionRollbacks, statSum, "rolled back"),
				e.metric(metricBudgetBlockedPools, statMax, "NodePools held by budgets")),
		},
	}
}

func interruptionSection(e emf) dashboardSection {
	return dashboardSection{
		title: "Interruption",
		meaning: "Spot notices, rebalance recommendations, health and state-change events and what they disrupted; " +
			"a spot notice gives two minutes, so time in queue must stay short.",
		widgets: []awscloudwatch.IWidget{
			graph("Messages received by type", 6, e.search(metricReceivedMessages, []string{dimMessageType}, statSum, ""),
				e.metric(metricDeletedMessages, statSum, "deleted")),
			graph("Messages failed", 6, e.metric(metricFailedMessages, statSum, "failed")),
			graph("Time in queue (s)", 6, e.metric(metricMessageQueueTime, statP99, "p99"),
				e.metric(metricMessageQueueTime, statMax, "max")),
			graph("NodeClaims disrupted by reason", 6,
				e.search(metricClaimsDisrupted, []string{dimReason, dimNodePool, dimCapacityType}, statSum, "")),
		},
	}
}

func terminationSection(e emf) dashboardSection {
	pool := []string{dimNodePool}
	return dashboardSection{
		title: "Termination",
		meaning: "Nodes drained and removed, and how long it took; many redriven requests or refused evictions (429) " +
			"mean PodDisruptionBudgets are holding drains.",
		widgets: []awscloudwatch.IWidget{
			graph("Nodes drained / terminated", 8, e.search(metricNodesDrained, pool, statSum, "drained"),
				e.search(metricNodesTerminated, pool, statSum, "terminated")),
			graph("Termination duration (s)", 8, e.search(metricTerminationDuration, pool, statP50, "p50"),
				e.search(metricTerminationDuration, pool, statP99, "p99")),
			graph("Termination requests redriven", 8, e.metric(metricRequestsRedriven, statSum, "redriven")),
			graph("Pods drained by reason", 12, e.search(metricPodsDrained, []string{dimReason}, statSum, "")),
			graph("Eviction requests by code", 12, e.search(metricEvictionRequests, []string{dimCode}, statSum, "")),
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

package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/nodewright/nodewright/shared/metrics"
)

// The metrics the functions write as EMF records (namespace metrics.Namespace), named after Karpenter's.
// Each carries the ClusterName dimension; the comments name the dimensions it carries besides.
const (
	// provisioner
	metricSchedulingDuration = "scheduler_scheduling_duration_seconds" // Seconds
	metricPendingPods        = "provisioner_pending_pods"
	metricUnschedulablePods  = "provisioner_unschedulable_pods"
	metricInflightClaims     = "provisioner_inflight_nodeclaims"
	metricCoalescedTriggers  = "provisioner_coalesced_triggers"
	metricClaimsCreated      = "nodeclaims_created"                 // NodePool
	metricLaunchFailed       = "nodeclaims_launch_failed"           // NodePool, Reason
	metricLaunchesNeverWork  = "provisioner_launches_never_succeed" // Nodewright's own
	// lifecycle
	metricPoolUsage = "nodepools_usage" // NodePool, ResourceType; the unit follows the resource
	metricPoolLimit = "nodepools_limit" // NodePool, ResourceType
	// interruption
	metricReceivedMessages = "interruption_received_messages" // MessageType
	metricDeletedMessages  = "interruption_deleted_messages"
	metricFailedMessages   = "interruption_failed_messages"
	metricMessageQueueTime = "interruption_message_queue_duration_seconds" // Seconds
	metricClaimsDisrupted  = "nodeclaims_disrupted"                        // NodePool, Reason, CapacityType
	// termination
	metricNodesDrained        = "nodes_drained"                      // NodePool
	metricNodesTerminated     = "nodes_terminated"                   // NodePool
	metricTerminationDuration = "nodes_termination_duration_seconds" // NodePool; Seconds
	metricPodsDrained         = "pods_drained"                       // Reason
	metricEvictionRequests    = "pods_eviction_requests"             // Code
	metricRequestsRedriven    = "termination_requests_redriven"
	// disruption
	metricDisruptionDecisions    = "voluntary_disruption_decisions_total"                      // Decision, Reason, ConsolidationType
	metricDisruptionEvaluation   = "voluntary_disruption_decision_evaluation_duration_seconds" // Seconds
	metricDisruptionFailedChecks = "voluntary_disruption_failed_validations_total"
	metricDisruptionRollbacks    = "voluntary_disruption_queue_failures_total"
	metricDisruptionEligible     = "voluntary_disruption_eligible_nodes"           // NodePool
	metricAllowedDisruptions     = "nodepools_allowed_disruptions"                 // NodePool, Reason
	metricClaimsConsolidated     = "nodeclaims_disrupted_total"                    // NodePool, Reason
	metricBudgetBlockedPools     = "voluntary_disruption_budget_blocked_nodepools" // Nodewright's own
	metricClaimsDrifted          = "nodeclaims_drifted"                            // NodePool, Type
	metricClaimsExpired          = "nodeclaims_expired"                            // NodePool
)

// The dimensions of the metrics above.
const (
	dimClusterName  = "ClusterName"
	dimNodePool     = "NodePool"
	dimResourceType = "ResourceType"
	dimMessageType  = "MessageType"
	dimReason       = "Reason"
	dimCapacityType = "CapacityType"
	dimCode         = "Code"
	dimDecision     = "Decision"
	dimMethod       = "ConsolidationType"
	dimType         = "Type"
)

// metricPeriod is the resolution of the dashboard's graphs: the provisioner and lifecycle functions run
// at least once a minute, and SQS publishes its metrics every minute.
func metricPeriod() awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(1)) }

// emf reads one cluster's EMF metrics back as CloudWatch metrics, for graphs and alarms.
type emf struct{ cluster string }

// metric is the one series of name that carries only the ClusterName dimension, labelled label in
// graphs (an alarm's metric has none: CloudWatch would make a labelled one a metric math query).
func (e emf) metric(name, stat, label string) awscloudwatch.Metric {
	props := &awscloudwatch.MetricProps{
		Namespace:     jsii.String(metrics.Namespace),
		MetricName:    jsii.String(name),
		DimensionsMap: &map[string]*string{dimClusterName: jsii.String(e.cluster)},
		Statistic:     jsii.String(stat),
		Period:        metricPeriod(),
	}
	if label != "" {
		props.Label = jsii.String(label)
	}
	return awscloudwatch.NewMetric(props)
}

// search is every series of name whose dimensions are exactly ClusterName and dims, whatever their
// values, so a graph needs no NodePool, reason or code known at synth time. Each series is labelled
// label followed by its dimension values; terms narrow the search further (e.g. ResourceType="cpu").
func (e emf) search(name string, dims []string, stat, label string, terms ...string) awscloudwatch.IMetric {
	schema := append([]string{metrics.Namespace, dimClusterName}, dims...)
	query := append([]string{fmt.Sprintf(`MetricName="%s"`, name), fmt.Sprintf(`%s="%s"`, dimClusterName, e.cluster)}, terms...)
	legend := []string{label}
	for _, d := range dims {
		legend = append(legend, fmt.Sprintf("${PROP('Dim.%s')}", d))
	}
	return awscloudwatch.NewSearchExpression(&awscloudwatch.SearchExpressionProps{
		Expression: jsii.String(fmt.Sprintf("SEARCH('{%s} %s', '%s')", strings.Join(schema, ","), strings.Join(query, " "), stat)),
		Label:      jsii.String(strings.TrimSpace(strings.Join(legend, " "))),
		Period:     metricPeriod(),
	})
}

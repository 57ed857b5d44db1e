package metrics

// The names follow Karpenter's Prometheus metrics without their karpenter_ prefix: in Prometheus that first
// word is the metric's namespace, and CloudWatch has a namespace of its own (Namespace), so
// karpenter_nodes_allocatable is nodes_allocatable in namespace Nodewright. Keeping the prefix would put a
// second "karpenter" on every graph, and, beside a Karpenter whose metrics reach CloudWatch through the
// CloudWatch agent, make the two indistinguishable by name. Counters end in _total as Karpenter's do;
// names Karpenter does not have are Nodewright's own and say so in Catalog.
const (
	// provisioner
	SchedulerQueueDepth         = "scheduler_queue_depth"
	SchedulerUnschedulablePods  = "scheduler_unschedulable_pods_count"
	SchedulingDuration          = "scheduler_scheduling_duration_seconds"
	InflightClaims              = "provisioner_inflight_nodeclaims"
	CoalescedTriggers           = "provisioner_coalesced_triggers_total"
	LaunchesNeverSucceed        = "provisioner_launches_never_succeed_total"
	ClaimsCreated               = "nodeclaims_created_total"
	LaunchFailures              = "cloudprovider_instance_launch_failures_total"
	NodesAllocatable            = "nodes_allocatable"
	NodesSystemOverhead         = "nodes_system_overhead"
	NodesPodRequests            = "nodes_total_pod_requests"
	NodesDaemonRequests         = "nodes_total_daemon_requests"
	ClusterUtilization          = "cluster_utilization_percent"
	PodsState                   = "pods_state"
	PodsStartupDuration         = "pods_startup_duration_seconds"
	OfferingPriceEstimate       = "cloudprovider_instance_type_offering_price_estimate"
	PoolUsage                   = "nodepools_usage"
	PoolLimit                   = "nodepools_limit"
	NodesCreated                = "nodes_created_total"
	InterruptionReceived        = "interruption_received_messages_total"
	InterruptionDeleted         = "interruption_deleted_messages_total"
	InterruptionFailed          = "interruption_failed_messages_total"
	InterruptionRetried         = "interruption_retried_messages_total"
	InterruptionQueueDuration   = "interruption_message_queue_duration_seconds"
	ClaimsDisrupted             = "nodeclaims_disrupted_total"
	ClaimsUnhealthyDisrupted    = "nodeclaims_unhealthy_disrupted_total"
	NodesDrained                = "nodes_drained_total"
	NodesTerminated             = "nodes_terminated_total"
	ClaimsTerminated            = "nodeclaims_terminated_total"
	NodesTerminationDuration    = "nodes_termination_duration_seconds"
	NodesLifetime               = "nodes_lifetime_duration_seconds"
	PodsDrained                 = "pods_drained_total"
	EvictionRequests            = "pods_eviction_requests_total"
	TerminationRedriven         = "termination_requests_redriven_total"
	DisruptionDecisions         = "voluntary_disruption_decisions_total"
	DisruptionEvaluation        = "voluntary_disruption_decision_evaluation_duration_seconds"
	DisruptionFailedValidations = "voluntary_disruption_failed_validations_total"
	DisruptionQueueFailures     = "voluntary_disruption_queue_failures_total"
	DisruptionEligibleNodes     = "voluntary_disruption_eligible_nodes"
	AllowedDisruptions          = "nodepools_allowed_disruptions"
	BudgetBlockedPools          = "voluntary_disruption_budget_blocked_nodepools"
	ConsolidationScore          = "consolidation_score"
	ConsolidationMoves          = "consolidation_moves_total"
	ClaimsDrifted               = "nodeclaims_drifted"
	ClaimsExpired               = "nodeclaims_expired"
	WebhookRequests             = "webhook_requests_total"
	WebhookDuration             = "webhook_request_duration_seconds"
)

// Dimensions, named as Karpenter's labels. Karpenter has no cluster label (a Prometheus server scrapes one
// cluster); DimCluster keeps one account's clusters apart.
const (
	DimCluster           = "cluster"
	DimNodePool          = "nodepool"
	DimResourceType      = "resource_type"
	DimMessageType       = "message_type"
	DimReason            = "reason"
	DimCapacityType      = "capacity_type"
	DimInstanceType      = "instance_type"
	DimZone              = "zone"
	DimCode              = "code"
	DimDecision          = "decision"
	DimConsolidationType = "consolidation_type"
	DimPhase             = "phase"
	DimType              = "type"
	DimResult            = "result"
	DimCondition         = "condition"
	DimPolicy            = "policy"
)

// Spec is one metric: the dimensions it carries besides DimCluster, its unit (empty: by resource_type,
// ResourceUnit), and whether Karpenter has it (Own: Nodewright's alone).
type Spec struct {
	Dims []string
	Unit string
	Own  bool
}

// Catalog is every metric the functions write. A record naming a metric outside it, or with other
// dimensions, is a mistake the tests catch (CheckRecord).
var Catalog = map[string]Spec{
	SchedulerQueueDepth:        {Unit: "Count"},
	SchedulerUnschedulablePods: {Unit: "Count"},
	SchedulingDuration:         {Unit: "Seconds"},
	InflightClaims:             {Unit: "Count", Own: true},
	CoalescedTriggers:          {Unit: "Count", Own: true},
	LaunchesNeverSucceed:       {Unit: "Count", Own: true},
	ClaimsCreated:              {Dims: []string{DimNodePool}, Unit: "Count"},
	LaunchFailures:             {Dims: []string{DimNodePool, DimReason}, Unit: "Count"},
	NodesAllocatable:           {Dims: []string{DimNodePool, DimResourceType}},
	NodesSystemOverhead:        {Dims: []string{DimNodePool, DimResourceType}},
	NodesPodRequests:           {Dims: []string{DimNodePool, DimResourceType}},
	NodesDaemonRequests:        {Dims: []string{DimNodePool, DimResourceType}},
	ClusterUtilization:         {Dims: []string{DimResourceType}, Unit: "Percent"},
	PodsState:                  {Dims: []string{DimNodePool, DimPhase}, Unit: "Count"},
	PodsStartupDuration:        {Unit: "Seconds"},
	OfferingPriceEstimate:      {Dims: []string{DimInstanceType, DimCapacityType, DimZone}, Unit: "None"},
	PoolUsage:                  {Dims: []string{DimNodePool, DimResourceType}},
	PoolLimit:                  {Dims: []string{DimNodePool, DimResourceType}},
	NodesCreated:               {Dims: []string{DimNodePool, DimZone}, Unit: "Count"},
	InterruptionReceived:       {Dims: []string{DimMessageType}, Unit: "Count"},
	InterruptionDeleted:        {Unit: "Count"},
	InterruptionFailed:         {Unit: "Count", Own: true},
	InterruptionRetried:        {Unit: "Count", Own: true},
	InterruptionQueueDuration:  {Unit: "Seconds"},
	ClaimsDisrupted:            {Dims: []string{DimNodePool, DimReason}, Unit: "Count"},
	// Karpenter's image_id label is left out: one series per AMI would multiply what is billed for what the
	// decision records already name.
	ClaimsUnhealthyDisrupted:    {Dims: []string{DimNodePool, DimCondition, DimCapacityType}, Unit: "Count"},
	NodesDrained:                {Dims: []string{DimNodePool}, Unit: "Count"},
	NodesTerminated:             {Dims: []string{DimNodePool, DimZone}, Unit: "Count"},
	ClaimsTerminated:            {Dims: []string{DimNodePool, DimCapacityType, DimZone}, Unit: "Count"},
	NodesTerminationDuration:    {Dims: []string{DimNodePool}, Unit: "Seconds"},
	NodesLifetime:               {Dims: []string{DimNodePool}, Unit: "Seconds"},
	PodsDrained:                 {Dims: []string{DimReason}, Unit: "Count"},
	EvictionRequests:            {Dims: []string{DimCode}, Unit: "Count"},
	TerminationRedriven:         {Unit: "Count", Own: true},
	DisruptionDecisions:         {Dims: []string{DimDecision, DimReason, DimConsolidationType}, Unit: "Count"},
	DisruptionEvaluation:        {Unit: "Seconds"},
	DisruptionFailedValidations: {Unit: "Count"},
	DisruptionQueueFailures:     {Unit: "Count"},
	DisruptionEligibleNodes:     {Dims: []string{DimNodePool}, Unit: "Count"},
	AllowedDisruptions:          {Dims: []string{DimNodePool, DimReason}, Unit: "Count"},
	BudgetBlockedPools:          {Unit: "Count", Own: true},
	// The Balanced consolidation policy's score of each move per NodePool, and the moves it judged:
	// decision is the pool's approved|rejected (the move's, for moves_total), policy is Balanced.
	ConsolidationScore: {Dims: []string{DimDecision, DimNodePool, DimPolicy}, Unit: "None"},
	ConsolidationMoves: {Dims: []string{DimDecision, DimNodePool, DimPolicy}, Unit: "Count"},
	ClaimsDrifted:      {Dims: []string{DimNodePool, DimType}, Unit: "Count", Own: true},
	ClaimsExpired:      {Dims: []string{DimNodePool}, Unit: "Count", Own: true},
	WebhookRequests:    {Dims: []string{DimResult}, Unit: "Count", Own: true},
	WebhookDuration:    {Dims: []string{DimResult}, Unit: "Seconds", Own: true},
}

// Renamed maps each name written before issue #27 to its name now (dimensions went from ClusterName,
// NodePool, ... to cluster, nodepool, ... at the same time). infra/README.md's migration table (section Metrics) lists it.
var Renamed = map[string]string{
	"provisioner_pending_pods":           SchedulerQueueDepth,
	"provisioner_unschedulable_pods":     SchedulerUnschedulablePods,
	"provisioner_coalesced_triggers":     CoalescedTriggers,
	"provisioner_launches_never_succeed": LaunchesNeverSucceed,
	"nodeclaims_created":                 ClaimsCreated,
	"nodeclaims_launch_failed":           LaunchFailures,
	"interruption_received_messages":     InterruptionReceived,
	"interruption_deleted_messages":      InterruptionDeleted,
	"interruption_failed_messages":       InterruptionFailed,
	"interruption_retried_messages":      InterruptionRetried,
	"nodeclaims_disrupted":               ClaimsDisrupted,
	"nodes_drained":                      NodesDrained,
	"nodes_terminated":                   NodesTerminated,
	"pods_drained":                       PodsDrained,
	"pods_eviction_requests":             EvictionRequests,
	"termination_requests_redriven":      TerminationRedriven,
}

// ResourceUnit is the CloudWatch unit of a resource's quantity: memory and storage in bytes, the rest
// (cores, pods, nodes, devices) counted.
func ResourceUnit(resource string) string {
	switch resource {
	case "memory", "ephemeral-storage", "storage":
		return "Bytes"
	}
	return "Count"
}

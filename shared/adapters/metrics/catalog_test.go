package metrics

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// karpenters are the Karpenter metrics (reference f.1, without the karpenter_ prefix) the catalog takes
// the names of.
var karpenters = map[string]bool{
	"scheduler_queue_depth": true, "scheduler_unschedulable_pods_count": true, "scheduler_scheduling_duration_seconds": true,
	"nodeclaims_created_total": true, "cloudprovider_instance_launch_failures_total": true, "nodes_allocatable": true,
	"nodes_system_overhead": true, "nodes_total_pod_requests": true, "nodes_total_daemon_requests": true,
	"cluster_utilization_percent": true, "pods_state": true, "pods_startup_duration_seconds": true,
	"cloudprovider_instance_type_offering_price_estimate": true, "nodepools_usage": true, "nodepools_limit": true,
	"nodes_created_total": true, "interruption_received_messages_total": true, "interruption_deleted_messages_total": true,
	"interruption_message_queue_duration_seconds": true, "nodeclaims_disrupted_total": true, "nodes_drained_total": true,
	"nodes_terminated_total": true, "nodeclaims_terminated_total": true, "nodes_termination_duration_seconds": true,
	"nodes_lifetime_duration_seconds": true, "pods_drained_total": true, "pods_eviction_requests_total": true,
	"voluntary_disruption_decisions_total": true, "voluntary_disruption_decision_evaluation_duration_seconds": true,
	"voluntary_disruption_failed_validations_total": true, "voluntary_disruption_queue_failures_total": true,
	"voluntary_disruption_eligible_nodes": true, "nodepools_allowed_disruptions": true, "nodeclaims_unhealthy_disrupted_total": true,
	"consolidation_score": true, "consolidation_moves_total": true,
}

func TestCatalogNamesAreKarpentersOrSayTheyAreNot(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9_]*[a-z0-9]$`)
	for name, spec := range Catalog {
		assert.Regexp(t, snake, name)
		assert.False(t, strings.HasPrefix(name, "karpenter_"), "%s: the namespace plays the prefix's part", name)
		assert.Equal(t, !spec.Own, karpenters[name], "%s: Karpenter's name unless marked Nodewright's own", name)
		for _, d := range spec.Dims {
			assert.Regexp(t, snake, d, "%s: dimensions are Karpenter's lower-case label names", name)
		}
		assert.NotContains(t, spec.Dims, DimCluster, "%s: every metric carries the cluster; it is not listed", name)
	}
}

func TestEachMetricHasOneName(t *testing.T) {
	for old, now := range Renamed {
		assert.Contains(t, Catalog, now, "%s was renamed to a metric the functions write", old)
		assert.NotContains(t, Catalog, old, "%s is written under one name only", old)
	}
	for name := range Catalog {
		_, counted := map[string]bool{"Count": true}[Catalog[name].Unit]
		if strings.HasSuffix(name, "_total") {
			assert.True(t, counted, "%s is a counter", name)
		}
	}
}

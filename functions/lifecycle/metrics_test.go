package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/lifecycle"
	"github.com/nodewright/nodewright/shared/metrics"
)

func TestUsageBecomesKarpentersNodePoolMetrics(t *testing.T) {
	var buf bytes.Buffer
	usage := []lifecycle.PoolUsage{{NodePool: "default", Nodes: 2,
		Used: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("12"), corev1.ResourceMemory: resource.MustParse("24Gi"),
			"nodes": resource.MustParse("2"), corev1.ResourcePods: resource.MustParse("116")},
		Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000")}}}
	require.NoError(t, writeUsage(&buf, "prod", usage, time.Now()))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	require.Len(t, recs, 4, "cpu, memory, nodes and pods")
	got := map[string]map[string]any{}
	for _, rec := range recs {
		assert.Equal(t, "prod", rec["ClusterName"])
		assert.Equal(t, "default", rec["NodePool"])
		got[rec["ResourceType"].(string)] = rec
	}
	assert.EqualValues(t, 12, got["cpu"]["nodepools_usage"])
	assert.EqualValues(t, 1000, got["cpu"]["nodepools_limit"])
	assert.EqualValues(t, 24*1024*1024*1024, got["memory"]["nodepools_usage"])
	assert.NotContains(t, got["memory"], "nodepools_limit", "no limit, no limit metric")
	assert.EqualValues(t, 2, got["nodes"]["nodepools_usage"])
}

func TestRepairsBecomeKarpentersUnhealthyDisruptedMetric(t *testing.T) {
	var buf bytes.Buffer
	repairs := []lifecycle.Repair{
		{NodePool: "default", Node: "ip-a", Claim: "default-a", CapacityType: "spot", Condition: "ready"},
		{NodePool: "default", Node: "ip-b", Claim: "default-b", CapacityType: "spot", Condition: "ready"},
		{NodePool: "gpu", Node: "ip-c", Claim: "gpu-c", Condition: "accelerated_hardware_ready"},
	}
	require.NoError(t, writeRepairs(&buf, "prod", repairs, time.Now()))
	recs, err := metrics.Records(buf.Bytes())
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Equal(t, "default", recs[0]["NodePool"])
	assert.Equal(t, "ready", recs[0]["Condition"])
	assert.Equal(t, "spot", recs[0]["CapacityType"])
	assert.EqualValues(t, 2, recs[0]["nodeclaims_unhealthy_disrupted_total"])
	assert.Equal(t, "gpu", recs[1]["NodePool"])
	assert.Equal(t, "accelerated_hardware_ready", recs[1]["Condition"])
	assert.Equal(t, metrics.Unknown, recs[1]["CapacityType"])
	assert.EqualValues(t, 1, recs[1]["nodeclaims_unhealthy_disrupted_total"])
	for _, rec := range recs {
		assert.Equal(t, "prod", rec["ClusterName"])
	}

	buf.Reset()
	require.NoError(t, writeRepairs(&buf, "prod", nil, time.Now()))
	assert.Empty(t, buf.String(), "a run that repaired nothing writes nothing")
}

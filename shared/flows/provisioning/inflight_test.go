package provisioning

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func TestInFlightClaims(t *testing.T) {
	m5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a")
	c5 := instanceType("c5.xlarge", "amd64", 4, 0.17, "us-east-1a")
	classes := map[string]*readyClass{"default": testClass(m5, c5)}
	taint := corev1.Taint{Key: "team", Value: "a", Effect: corev1.TaintEffectNoSchedule}
	pools := []scheduling.NodePool{{Name: "default", Labels: map[string]string{"team": "a"}, Taints: []corev1.Taint{taint}}}
	claims := []state.Claim{
		{Name: "launched", NodePool: "default", NodeClass: "default", Lifecycle: state.Launched, InstanceType: "m5.xlarge",
			Zone: "us-east-1a", CapacityType: "reserved", ProviderID: "aws:///us-east-1a/i-1", InstanceID: "i-1", ReservationID: "cr-1"},
		{Name: "pending", NodePool: "default", NodeClass: "default", Lifecycle: state.Pending, InstanceTypes: []string{"c5.xlarge", "m5.xlarge"},
			ReservationID: "cr-2"},
		{Name: "unknown-pool", NodePool: "gone", NodeClass: "gone", Lifecycle: state.Pending, InstanceTypes: []string{"x1.large"},
			Requests: map[string]string{"cpu": "3", "memory": "6Gi"}},
		{Name: "registered-node", NodePool: "default", NodeClass: "default", Lifecycle: state.Launched, InstanceType: "m5.xlarge",
			ProviderID: "aws:///us-east-1a/i-2"},
		{Name: "named-node", NodePool: "default", Lifecycle: state.Launched, NodeName: "ip-10-0-0-1"},
		{Name: "registered", NodePool: "default", Lifecycle: state.Registered, NodeName: "ip-10-0-0-2"},
		{Name: "registered-after-the-node-list", NodePool: "default", Lifecycle: state.Registered, NodeName: "ip-10-0-0-3",
			Requests: map[string]string{"cpu": "1"}},
		{Name: "initialized", NodePool: "default", Lifecycle: state.Initialized, NodeName: "ip-10-0-0-4"},
		{Name: "deleted", NodePool: "default", Lifecycle: state.Deleted},
	}
	nodes := joinedNodes{byProviderID: map[string]bool{"aws:///us-east-1a/i-2": true},
		byName: map[string]bool{"ip-10-0-0-1": true, "ip-10-0-0-2": true}}
	got := inFlightClaims(claims, nodes, pools, classes)
	require.Len(t, got, 4)
	assert.Equal(t, "registered-after-the-node-list", got[3].Name,
		"a claim whose Node the snapshot does not show as joined still stands for its capacity")

	launched := got[0]
	assert.Equal(t, "launched", launched.Name)
	assert.Equal(t, m5.Allocatable, launched.Allocatable)
	assert.Equal(t, "m5.xlarge", launched.Labels[scheduling.LabelInstanceType])
	assert.Equal(t, "us-east-1a", launched.Labels[scheduling.LabelZone])
	assert.Equal(t, "reserved", launched.Labels[scheduling.LabelCapacityType])
	assert.Empty(t, launched.PendingReservationID, "a launched instance is in EC2's own count already")
	assert.Equal(t, "amd64", launched.Labels[scheduling.LabelArch])
	assert.Equal(t, "a", launched.Labels["team"])
	assert.Equal(t, []corev1.Taint{taint}, launched.Taints)

	pending := got[1]
	assert.Equal(t, "c5.xlarge", pending.Labels[scheduling.LabelInstanceType], "the cheapest option stands in until the launch answers")
	assert.Equal(t, c5.Allocatable, pending.Allocatable)
	assert.Equal(t, "cr-2", pending.PendingReservationID, "a launch not answered yet still holds its reservation instance")

	unknown := got[2]
	assert.Equal(t, scheduling.Resources{CPU: 3000, Memory: 6 << 30}, unknown.Allocatable, "its requests stand in for an unknown type")
}

// A registered claim whose Node was deleted with the finalizer stripped boots nothing: once the lifecycle
// has found its Node gone (NodeLostAt) it is no longer capacity in flight, so its pods get a node.
func TestRegisteredClaimWithLostNodeIsNotInFlight(t *testing.T) {
	m5 := instanceType("m5.xlarge", "amd64", 4, 0.192, "us-east-1a")
	classes := map[string]*readyClass{"default": testClass(m5)}
	pools := []scheduling.NodePool{{Name: "default"}}
	lost := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	claims := []state.Claim{
		{Name: "lost", NodePool: "default", NodeClass: "default", Lifecycle: state.Registered, InstanceType: "m5.xlarge",
			InstanceID: "i-1", ProviderID: "aws:///us-east-1a/i-1", NodeName: "ip-10-0-0-1", NodeLostAt: &lost},
		{Name: "joining", NodePool: "default", NodeClass: "default", Lifecycle: state.Registered, InstanceType: "m5.xlarge",
			InstanceID: "i-2", ProviderID: "aws:///us-east-1a/i-2", NodeName: "ip-10-0-0-2"},
	}
	got := inFlightClaims(claims, joinedNodes{byProviderID: map[string]bool{}, byName: map[string]bool{}}, pools, classes)
	require.Len(t, got, 1)
	assert.Equal(t, "joining", got[0].Name, "a registered claim whose Node has not posted its status yet still counts")
}

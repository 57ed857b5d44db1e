package lifecycle

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// shapedClaim is a launched m5.xlarge-like claim (4 vCPUs, 16 GiB) whose pods asked for requests.
func shapedClaim(requests map[string]string) state.Claim {
	c := claimOn("default-s", "default", state.Registered, "i-0s", "ip-s")
	c.InstanceType, c.CapacityType, c.Requests = "m5.xlarge", "on-demand", requests
	c.Labels = map[string]string{scheduling.LabelInstanceCPU: "4", scheduling.LabelInstanceMemory: "16384",
		corev1.LabelArchStable: "amd64"}
	return c
}

// withCapacity gives a Node the capacity it reports.
func withCapacity(n *corev1.Node, capacity map[string]string) *corev1.Node {
	n.Status.Capacity = corev1.ResourceList{}
	for k, v := range capacity {
		n.Status.Capacity[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return n
}

// Karpenter's node shape check: a requested resource of which the Node has less than 90 % of what its
// instance type promised is an issue; what the claim's pods did not request is not judged.
func TestShapeIssues(t *testing.T) {
	requests := map[string]string{"cpu": "1", "memory": "1Gi", "pods": "3"}
	cases := []struct {
		name     string
		requests map[string]string
		labels   map[string]string
		capacity map[string]string
		want     []string
	}{
		{name: "as promised (memory less the VM overhead estimate)", requests: requests,
			capacity: map[string]string{"cpu": "4", "memory": "15520Mi", "pods": "58"}},
		{name: "half the memory", requests: requests, capacity: map[string]string{"cpu": "4", "memory": "8Gi", "pods": "58"},
			want: []string{"of memory from instance type m5.xlarge, the Node has 8Gi"}},
		{name: "fewer CPUs", requests: requests, capacity: map[string]string{"cpu": "2", "memory": "15520Mi"},
			want: []string{"expected 4 of cpu from instance type m5.xlarge, the Node has 2 (50.0% of it)"}},
		{name: "memory not requested is not judged", requests: map[string]string{"cpu": "1"},
			capacity: map[string]string{"cpu": "4", "memory": "1Gi"}},
		{name: "a missing GPU", requests: map[string]string{"nvidia.com/gpu": "1"},
			labels:   map[string]string{scheduling.LabelInstanceGPUCount: "1", scheduling.LabelInstanceGPUManufacturer: "nvidia"},
			capacity: map[string]string{"cpu": "4"},
			want:     []string{"expected 1 of nvidia.com/gpu from instance type m5.xlarge, the Node has 0 (0.0% of it)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := shapedClaim(tc.requests)
			for k, v := range tc.labels {
				c.Labels[k] = v
			}
			got := ShapeIssues(c, withCapacity(node("ip-s", c.ProviderID, nil), tc.capacity))
			require.Len(t, got, len(tc.want), "%v", got)
			for i, w := range tc.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

// A Node that initializes with less memory than its instance type promised gets FailedConsistencyCheck,
// on the Node and on its NodeClaim, as Karpenter's consistency check publishes it; one as promised gets
// none.
func TestInitializedNodeOfTheWrongShapeFailsTheConsistencyCheck(t *testing.T) {
	for _, tc := range []struct {
		name   string
		memory string
		want   int
	}{{"wrong shape", "8Gi", 2}, {"as promised", "15520Mi", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			c := shapedClaim(map[string]string{"cpu": "1", "memory": "1Gi"})
			r := newRig(t, c)
			n := withCapacity(node("ip-s", c.ProviderID, nil), map[string]string{"cpu": "4", "memory": tc.memory})
			n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
			r.nodes = listedNodes{n}
			r.instances.list = []instance.Instance{{ID: "i-0s", Tags: map[string]string{instance.TagNodeClaim: c.Name}}}
			events := &recEvents{}
			runner := NewRunner(RunnerConfig{}, RunnerDeps{Store: r.store, Nodes: r.nodes, NodeActions: r.writer,
				Instances: r.instances, Terminations: r.queue, Events: events, Now: func() time.Time { return r.now }})
			rep, err := runner.Run(context.Background(), "run-1")
			require.NoError(t, err)
			require.Equal(t, 1, rep.Initialized)
			var got []kube.Event
			for _, e := range events.events {
				if e.Reason == kube.ReasonFailedConsistencyCheck {
					got = append(got, e)
				}
			}
			require.Len(t, got, tc.want)
			if tc.want == 0 {
				return
			}
			kinds := []string{got[0].Object.Kind, got[1].Object.Kind}
			assert.ElementsMatch(t, []string{"Node", "NodeClaim"}, kinds)
			assert.Equal(t, corev1.EventTypeWarning, got[0].Type)
			assert.Contains(t, got[0].Message, "NodeClaim default-s: expected")
		})
	}
}

package disruption_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/disruption"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func TestValidate(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	od := scheduling.CapacityTypeOnDemand
	// base: n1's web pod (1 CPU) fits on dest (3.9 CPU, 2 used, kept by do-not-disrupt): delete n1.
	base := func() disruption.Input {
		dest := node(small, nodeSpec{"dest", "default", "medium", od, []*corev1.Pod{pod("db", "2")}})
		dest.Node.Annotations = map[string]string{disruption.AnnotationDoNotDisrupt: "true"}
		return disruption.Input{
			Now: now, InstanceTypes: small,
			NodePools: []disruption.NodePool{pool("default", budgets(disruption.Budget{Nodes: "1"}), amd64Only)},
			Nodes: []disruption.Node{
				dest,
				node(small, nodeSpec{"n1", "default", "medium", od, []*corev1.Pod{pod("web", "1")}}),
			},
		}
	}
	res := disruption.Decide(base())
	require.Len(t, res.Commands, 1)
	cmd := res.Commands[0]
	require.Equal(t, disruption.ActionDelete, cmd.Action)
	require.Equal(t, []string{"n1"}, nodeNames(cmd))

	cases := []struct {
		name   string
		modify func(*disruption.Input)
		kind   disruption.ValidationKind
		reason string
	}{
		{name: "nothing changed", modify: func(*disruption.Input) {}},
		{
			name: "pods moved onto the destination: the node would now need a replacement",
			modify: func(in *disruption.Input) {
				in.Nodes[0].Pods = append(in.Nodes[0].Pods, pod("cache", "1500m"))
				in.Nodes[0].Pods[1].Spec.NodeName = "dest"
			},
			kind: disruption.ValidationScheduling, reason: "would now be replaced, not deleted",
		},
		{
			name:   "a new pending pod takes the room",
			modify: func(in *disruption.Input) { in.PendingPods = []*corev1.Pod{pod("new", "1500m")} },
			kind:   disruption.ValidationScheduling, reason: "would now be replaced, not deleted",
		},
		{
			name: "the budget is used up by a node already disrupting",
			modify: func(in *disruption.Input) {
				other := node(small, nodeSpec{"other", "default", "small", od, nil})
				other.Disrupting = true
				in.Nodes = append(in.Nodes, other)
			},
			kind: disruption.ValidationBudget, reason: "budget for Underutilized now allows 0 disruptions, the command needs 1",
		},
		{
			name: "a pod of the node got do-not-disrupt",
			modify: func(in *disruption.Input) {
				annotated(in.Nodes[1].Pods[0], disruption.AnnotationDoNotDisrupt, "true")
			},
			kind: disruption.ValidationCandidate, reason: "node n1 is no longer a candidate: pod default/web has the karpenter.sh/do-not-disrupt annotation",
		},
		{name: "the node is gone", modify: func(in *disruption.Input) { in.Nodes = in.Nodes[:1] }, kind: disruption.ValidationCandidate, reason: "node n1 is gone"},
		{name: "the node has another claim", modify: func(in *disruption.Input) { in.Nodes[1].Claim = "claim-new" }, kind: disruption.ValidationCandidate, reason: "now belongs to claim claim-new"},
		{name: "incomplete snapshot", modify: func(in *disruption.Input) { in.Incomplete = "pods" }, kind: disruption.ValidationIncomplete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.modify(&in)
			err := disruption.Validate(cmd, in)
			if tc.kind == "" {
				assert.NoError(t, err)
				return
			}
			var ve *disruption.ValidationError
			require.True(t, errors.As(err, &ve), "got %v", err)
			assert.Equal(t, tc.kind, ve.Kind)
			assert.Contains(t, ve.Reason, tc.reason)
		})
	}
}

func TestValidateEmpty(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	in := func() disruption.Input {
		return disruption.Input{
			Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default")},
			Nodes: []disruption.Node{node(small, nodeSpec{"e", "default", "medium", scheduling.CapacityTypeOnDemand, nil})},
		}
	}
	res := disruption.Decide(in())
	require.Len(t, res.Commands, 1)
	cmd := res.Commands[0]
	require.Equal(t, disruption.ReasonEmpty, cmd.Reason)
	assert.NoError(t, disruption.Validate(cmd, in()))
	fresh := in()
	p := pod("web", "1")
	p.Spec.NodeName = "e"
	fresh.Nodes[0].Pods = []*corev1.Pod{p}
	err := disruption.Validate(cmd, fresh)
	var ve *disruption.ValidationError
	require.True(t, errors.As(err, &ve), "got %v", err)
	assert.Equal(t, disruption.ValidationCandidate, ve.Kind)
	assert.Contains(t, ve.Reason, "no longer empty")
}

func TestValidateReplacementOptions(t *testing.T) {
	small := schedulingtest.SmallCatalog()
	in := func() disruption.Input {
		return disruption.Input{
			Now: now, InstanceTypes: small, NodePools: []disruption.NodePool{pool("default", amd64Only)},
			Nodes: []disruption.Node{node(small, nodeSpec{"n1", "default", "large", scheduling.CapacityTypeOnDemand, []*corev1.Pod{pod("web", "1"), pod("api", "500m")}})},
		}
	}
	res := disruption.Decide(in())
	require.Len(t, res.Commands, 1)
	cmd := res.Commands[0]
	require.Equal(t, disruption.ActionReplace, cmd.Action)
	require.Equal(t, "small", cmd.Replacements[0].InstanceType)
	assert.NoError(t, disruption.Validate(cmd, in()))

	fresh := in()
	fresh.Unavailable = scheduling.UnavailableOfferings{}
	for _, z := range schedulingtest.Zones {
		for _, ct := range []string{scheduling.CapacityTypeSpot, scheduling.CapacityTypeOnDemand} {
			fresh.Unavailable[scheduling.OfferingKey{InstanceType: "small", Zone: z, CapacityType: ct}] = true
		}
	}
	err := disruption.Validate(cmd, fresh)
	var ve *disruption.ValidationError
	require.True(t, errors.As(err, &ve), "got %v", err)
	assert.Equal(t, disruption.ValidationScheduling, ve.Kind)
	assert.Contains(t, ve.Reason, "instance type small is no longer a valid replacement")
}

package lifecycle

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

func (noWrites) Annotate(context.Context, string, map[string]string) error {
	return errors.New("unexpected write")
}

// narrowedClaim is a claim of a pool with "team Exists", launched for a pod selecting team=a, as the
// provisioner records it: the narrowed value and the instance type's labels.
func narrowedClaim() state.Claim {
	return state.Claim{Name: "teams-abcde", NodePool: "teams", NodeClass: "default", InstanceID: "i-0abc", Zone: "us-east-1a",
		InstanceType: "m5.xlarge", CapacityType: "spot", Lifecycle: state.Launched,
		Labels: map[string]string{"team": "a", "karpenter.sh/nodepool": "teams", "karpenter.k8s.aws/ec2nodeclass": "default",
			"karpenter.k8s.aws/instance-category": "m", "karpenter.k8s.aws/instance-family": "m5",
			"karpenter.k8s.aws/instance-generation": "5", "karpenter.k8s.aws/instance-size": "xlarge",
			"karpenter.k8s.aws/instance-cpu": "4", "karpenter.k8s.aws/instance-memory": "16384",
			"karpenter.k8s.aws/instance-hypervisor": "nitro", "node.kubernetes.io/instance-type": "m5.xlarge",
			"topology.kubernetes.io/zone": "us-east-1a", "karpenter.sh/capacity-type": "spot"}}
}

func teamsPool() scheduling.NodePool {
	return scheduling.NodePool{Name: "teams", Labels: map[string]string{scheduling.LabelEC2NodeClass: "default"},
		Annotations:  map[string]string{"example.com/owner": "platform", "example.com/empty": ""},
		Requirements: []scheduling.NodeSelectorRequirement{{Key: "team", Operator: scheduling.OpExists}}}
}

func TestExpectedForCarriesTheClaimLabelsAndTemplateAnnotations(t *testing.T) {
	c := narrowedClaim()
	exp := ExpectedFor(c, teamsPool())
	assert.Equal(t, c.Labels, exp.Labels, "every recorded label, the narrowed team=a and the instance-type labels among them")
	assert.Equal(t, map[string]string{"example.com/owner": "platform", "example.com/empty": ""}, exp.Annotations)

	gone := ExpectedFor(c, scheduling.NodePool{})
	assert.Equal(t, "a", gone.Labels["team"], "the claim's labels outlive its NodePool's configuration")
	assert.Empty(t, gone.Annotations)
}

func TestRegisterPutsTheClaimLabelsAndAnnotationsOnTheNode(t *testing.T) {
	c := narrowedClaim()
	exp := ExpectedFor(c, teamsPool())
	n := node("ip-10-0-0-1", "aws:///us-east-1a/i-0abc", map[string]string{"karpenter.sh/nodepool": "teams"}, unregistered)
	n.Annotations["example.com/owner"] = "someone-else"
	n.Annotations["node.alpha.kubernetes.io/ttl"] = "0"

	r := Register(exp, []*corev1.Node{n})
	require.Same(t, n, r.Node)
	want := map[string]string{RegisteredLabel: "true"}
	for k, v := range c.Labels {
		if k != "karpenter.sh/nodepool" {
			want[k] = v
		}
	}
	assert.Equal(t, want, r.Patch.SetLabels)
	assert.Equal(t, map[string]string{"example.com/owner": "platform", "example.com/empty": ""}, r.Patch.SetAnnotations,
		"template annotations are set, other annotations are left alone")
	assert.False(t, r.Patch.Empty())

	for k, v := range r.Patch.SetLabels {
		n.Labels[k] = v
	}
	for k, v := range r.Patch.SetAnnotations {
		n.Annotations[k] = v
	}
	n.Spec.Taints = nil
	assert.True(t, Register(exp, []*corev1.Node{n}).Patch.Empty(), "nothing left to do once applied")
}

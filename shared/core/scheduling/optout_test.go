package scheduling_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

func nodePoolReq(op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: scheduling.LabelNodePool, Operator: op, Values: values}
}

// A pod opts out of Karpenter's nodes, and is ignored, when the requirements Karpenter reads first leave
// the nodepool label DoesNotExist.
func TestOptsOut(t *testing.T) {
	other := corev1.NodeSelectorRequirement{Key: "team", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}
	for _, tc := range []struct {
		name string
		o    schedulingtest.PodOptions
		want bool
	}{
		{name: "no node affinity", o: schedulingtest.PodOptions{}},
		{name: "required nodepool DoesNotExist", want: true,
			o: schedulingtest.PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{other, nodePoolReq(corev1.NodeSelectorOpDoesNotExist)}}},
		{name: "required nodepool NotIn one pool: it opts out of that pool only",
			o: schedulingtest.PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{nodePoolReq(corev1.NodeSelectorOpNotIn, "gpu")}}},
		{name: "required nodepool Exists", o: schedulingtest.PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{nodePoolReq(corev1.NodeSelectorOpExists)}}},
		{name: "another label DoesNotExist",
			o: schedulingtest.PodOptions{NodeRequirements: []corev1.NodeSelectorRequirement{{Key: "team", Operator: corev1.NodeSelectorOpDoesNotExist}}}},
		{name: "a nodeSelector on a pool and NotIn that pool: no value is left", want: true,
			o: schedulingtest.PodOptions{NodeSelector: map[string]string{scheduling.LabelNodePool: "default"},
				NodeRequirements: []corev1.NodeSelectorRequirement{nodePoolReq(corev1.NodeSelectorOpNotIn, "default")}}},
		{name: "DoesNotExist in the second required term only: Karpenter reads the first",
			o: schedulingtest.PodOptions{NodeRequirementTerms: [][]corev1.NodeSelectorRequirement{{other}, {nodePoolReq(corev1.NodeSelectorOpDoesNotExist)}}}},
		{name: "DoesNotExist in the heaviest preferred term", want: true,
			o: schedulingtest.PodOptions{NodePreferences: [][]corev1.NodeSelectorRequirement{{other}, {nodePoolReq(corev1.NodeSelectorOpDoesNotExist)}},
				Weights: []int32{10, 50}}},
		{name: "DoesNotExist in a lighter preferred term",
			o: schedulingtest.PodOptions{NodePreferences: [][]corev1.NodeSelectorRequirement{{other}, {nodePoolReq(corev1.NodeSelectorOpDoesNotExist)}},
				Weights: []int32{50, 50}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.CPU = "1"
			pod := schedulingtest.Pod(tc.o)
			assert.Equal(t, tc.want, scheduling.OptsOut(pod))
			assert.Equal(t, !tc.want, scheduling.IsProvisionable(pod), "a pod that opts out is not provisioned for")
		})
	}
}

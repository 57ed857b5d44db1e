package scheduling

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
)

func TestRequirementsCompatible(t *testing.T) {
	pool := NewRequirements(
		MustRequirement(LabelZone, OpIn, "us-west-2a", "us-west-2b"),
		MustRequirement("team", OpIn, "blue"),
	)
	tests := []struct {
		name    string
		pod     Requirements
		wantErr string
	}{
		{name: "matching zone", pod: NewRequirements(MustRequirement(LabelZone, OpIn, "us-west-2b"))},
		{name: "zone outside the pool", pod: NewRequirements(MustRequirement(LabelZone, OpIn, "us-west-2c")), wantErr: `pod requires topology.kubernetes.io/zone In [us-west-2c] but only topology.kubernetes.io/zone In [us-west-2a us-west-2b] is available`},
		{name: "defined custom label", pod: NewRequirements(MustRequirement("team", OpIn, "blue"))},
		{name: "wrong custom value", pod: NewRequirements(MustRequirement("team", OpIn, "red")), wantErr: "team In [red]"},
		{name: "undefined custom label In", pod: NewRequirements(MustRequirement("gpu", OpIn, "true")), wantErr: `label "gpu" is not defined`},
		{name: "undefined custom label Exists", pod: NewRequirements(MustRequirement("gpu", OpExists)), wantErr: `label "gpu" is not defined`},
		{name: "undefined custom label Gt", pod: NewRequirements(MustRequirement("gpu", OpGt, "1")), wantErr: `label "gpu" is not defined`},
		{name: "undefined custom label NotIn is fine", pod: NewRequirements(MustRequirement("gpu", OpNotIn, "true"))},
		{name: "undefined custom label DoesNotExist is fine", pod: NewRequirements(MustRequirement("gpu", OpDoesNotExist))},
		{name: "undefined well-known label is fine", pod: NewRequirements(MustRequirement(LabelArch, OpIn, "arm64"))},
		{name: "undefined AWS label is fine", pod: NewRequirements(MustRequirement(LabelInstanceFamily, OpIn, "m5"))},
		{name: "DoesNotExist against a defined label", pod: NewRequirements(MustRequirement("team", OpDoesNotExist)), wantErr: "team DoesNotExist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pool.Compatible(tt.pod)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
			var inc *IncompatibleError
			assert.ErrorAs(t, err, &inc)
		})
	}
}

func TestRequirementsIntersectsIgnoresOneSidedKeys(t *testing.T) {
	it := NewRequirements(MustRequirement(LabelArch, OpIn, "amd64"), MustRequirement(LabelInstanceType, OpIn, "m5.large"))
	assert.NoError(t, it.Intersects(NewRequirements(MustRequirement("custom", OpIn, "x"))))
	assert.Error(t, it.Intersects(NewRequirements(MustRequirement(LabelArch, OpIn, "arm64"))))
	// Both sides allow the label to be absent.
	assert.NoError(t, NewRequirements(MustRequirement("k", OpDoesNotExist)).Intersects(NewRequirements(MustRequirement("k", OpNotIn, "a"))))
}

func TestRequirementsFromNodeSelector(t *testing.T) {
	term := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
		{Key: "beta.kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}},
		{Key: "failure-domain.beta.kubernetes.io/zone", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"us-west-2a"}},
		{Key: LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{"4"}},
		{Key: LabelInstanceCPU, Operator: corev1.NodeSelectorOpLt, Values: []string{"33"}},
	}}
	reqs, err := RequirementsFromNodeSelector(term)
	require.NoError(t, err)
	assert.Equal(t, []string{LabelInstanceCPU, LabelArch, LabelZone}, reqs.Keys())
	assert.True(t, reqs.Get(LabelInstanceCPU).Has("32"))
	assert.False(t, reqs.Get(LabelInstanceCPU).Has("33"))
	assert.False(t, reqs.Get(LabelZone).Has("us-west-2a"))

	_, err = RequirementsFromNodeSelector(corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"n"}}}})
	assert.ErrorContains(t, err, "matchFields")
}

func TestRequirementsFromSpecsAndBack(t *testing.T) {
	three := 3
	specs := []NodeSelectorRequirement{
		{Key: LabelInstanceFamily, Operator: OpIn, Values: []string{"m5", "c5", "r5"}, MinValues: &three},
		{Key: LabelInstanceCPU, Operator: OpGte, Values: []string{"4"}},
		{Key: LabelInstanceCPU, Operator: OpLte, Values: []string{"16"}},
	}
	reqs, err := RequirementsFromSpecs(specs)
	require.NoError(t, err)
	assert.Equal(t, 3, reqs.Get(LabelInstanceFamily).MinValues)
	assert.Equal(t, []NodeSelectorRequirement{
		{Key: LabelInstanceCPU, Operator: OpGte, Values: []string{"4"}},
		{Key: LabelInstanceCPU, Operator: OpLte, Values: []string{"16"}},
		{Key: LabelInstanceFamily, Operator: OpIn, Values: []string{"c5", "m5", "r5"}, MinValues: &three},
	}, reqs.Specs())

	_, err = RequirementsFromSpecs([]NodeSelectorRequirement{{Key: "k", Operator: OpGt, Values: []string{"a"}}})
	assert.Error(t, err)
}

func TestRequirementsLabels(t *testing.T) {
	reqs := NewRequirements(MustRequirement(LabelZone, OpIn, "us-west-2a"), MustRequirement(LabelArch, OpIn, "amd64", "arm64"), MustRequirement("x", OpExists))
	assert.Equal(t, map[string]string{LabelZone: "us-west-2a"}, reqs.Labels())
	assert.False(t, reqs.Has("y"))
	assert.Equal(t, OpExists, reqs.Get("y").Operator(), "an unconstrained key allows anything")
}

package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestValidateNodePoolUpdate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*apis.NodePool)
		path   string
		typ    field.ErrorType
	}{
		{"group changed", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Group = "other.io" }, "spec.template.spec.nodeClassRef.group", field.ErrorTypeInvalid},
		{"kind changed", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Kind = "Other" }, "spec.template.spec.nodeClassRef.kind", field.ErrorTypeInvalid},
		{"dynamic to static", func(np *apis.NodePool) { np.Spec.Replicas = ptr(int64(2)) }, "spec.replicas", field.ErrorTypeForbidden},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := baseNodePool(t)
			updated := old.DeepCopy()
			c.mutate(updated)
			assertHasError(t, apis.ValidateNodePoolUpdate(old, updated), c.path, c.typ)
		})
	}
	t.Run("name of the class may change", func(t *testing.T) {
		old := baseNodePool(t)
		updated := old.DeepCopy()
		updated.Spec.Template.Spec.NodeClassRef.Name = "other"
		updated.Spec.Template.Spec.ExpireAfter = "24h"
		assert.Empty(t, apis.ValidateNodePoolUpdate(old, updated))
	})
}

func TestValidateNodeClaimUpdate(t *testing.T) {
	old := apis.NewNodeClaim(baseNodePool(t))
	same := old.DeepCopy()
	same.Status.NodeName = "ip-10-0-0-1.ec2.internal"
	assert.Empty(t, apis.ValidateNodeClaimUpdate(old, same), "status may change")
	changed := old.DeepCopy()
	changed.Spec.ExpireAfter = "1h"
	assertHasError(t, apis.ValidateNodeClaimUpdate(old, changed), "spec", field.ErrorTypeForbidden)
}

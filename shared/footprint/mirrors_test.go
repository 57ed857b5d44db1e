package footprint

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOnlyTheMirrorWritersGroupsMayWriteMirrors(t *testing.T) {
	expr := MirrorPolicy().Spec.Validations[0].Expression
	for _, f := range Functions() {
		if f == Lifecycle || f == Provisioner {
			assert.Contains(t, expr, "'"+f.Group()+"'")
		} else {
			assert.NotContains(t, expr, "'"+f.Group()+"'", "%s writes no mirror", f)
		}
	}
	assert.Contains(t, expr, "request.operation == 'DELETE' && request.resource.resource == 'nodeclaims'")
	assert.Equal(t, MirrorPolicyName, MirrorPolicyBinding().Spec.PolicyName)
	assert.Equal(t, "Forbidden", string(*MirrorPolicy().Spec.Validations[0].Reason), "403, as RBAC answers")
}

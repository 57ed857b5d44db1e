package footprint

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOnlyTheMirrorWritersGroupsMayWriteMirrors(t *testing.T) {
	expr := MirrorPolicy().Spec.Validations[0].Expression
	for _, f := range Functions() {
		switch f {
		case Provisioner, Lifecycle, Interruption, Termination:
			assert.Contains(t, expr, `request.resource.resource in ['nodeclaims'] && request.userInfo.groups.exists(g, g == '`+f.Group()+`')`)
		case Disruption:
			assert.Contains(t, expr, `request.resource.resource in ['nodeclaims', 'nodepools', 'ec2nodeclasses'] && request.userInfo.groups.exists(g, g == '`+f.Group()+`')`)
		default:
			assert.NotContains(t, expr, "'"+f.Group()+"'", "%s writes no mirror", f)
		}
	}
	assert.Contains(t, expr, "request.operation == 'DELETE' && request.resource.resource == 'nodeclaims'")
	assert.Equal(t, MirrorPolicyName, MirrorPolicyBinding().Spec.PolicyName)
	assert.Equal(t, "Forbidden", string(*MirrorPolicy().Spec.Validations[0].Reason), "403, as RBAC answers")
}

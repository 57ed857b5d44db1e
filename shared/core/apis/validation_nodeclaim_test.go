package apis_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestValidateNodeClaimRejects(t *testing.T) {
	cases := []invalidCase[apis.NodeClaim]{
		{"requirements missing", func(c *apis.NodeClaim) { c.Spec.Requirements = nil }, "spec.requirements", field.ErrorTypeRequired},
		{"operator unsupported", func(c *apis.NodeClaim) { c.Spec.Requirements[0].Operator = "Near" }, "spec.requirements[0].operator", field.ErrorTypeNotSupported},
		{"taint effect unknown", func(c *apis.NodeClaim) { c.Spec.Taints[0].Effect = "Maybe" }, "spec.taints[0].effect", field.ErrorTypeNotSupported},
		{"nodeClassRef missing", func(c *apis.NodeClaim) { c.Spec.NodeClassRef = nil }, "spec.nodeClassRef", field.ErrorTypeRequired},
		{"expireAfter missing", func(c *apis.NodeClaim) { c.Spec.ExpireAfter = "" }, "spec.expireAfter", field.ErrorTypeRequired},
		{"terminationGracePeriod malformed", func(c *apis.NodeClaim) { c.Spec.TerminationGracePeriod = ptr(apis.Duration("1d")) }, "spec.terminationGracePeriod", field.ErrorTypeInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			claim := apis.NewNodeClaim(baseNodePool(t))
			c.mutate(claim)
			assertHasError(t, apis.ValidateNodeClaim(claim), c.path, c.typ)
		})
	}
}

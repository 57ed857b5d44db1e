package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestSelectorTermsAccepted(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*apis.EC2NodeClass)
	}{
		{"wildcard tag value", func(nc *apis.EC2NodeClass) { nc.Spec.SubnetSelectorTerms[0].Tags["Name"] = "*" }},
		{"terms of different kinds are ORed", func(nc *apis.EC2NodeClass) {
			nc.Spec.SubnetSelectorTerms = append(nc.Spec.SubnetSelectorTerms, apis.SubnetSelectorTerm{ID: "subnet-0abc"})
			nc.Spec.SecurityGroupSelectorTerms = append(nc.Spec.SecurityGroupSelectorTerms,
				apis.SecurityGroupSelectorTerm{ID: "sg-0abc"}, apis.SecurityGroupSelectorTerm{Name: "cluster-sg"})
		}},
		{"AMI terms by name, owner, tags and SSM parameter", func(nc *apis.EC2NodeClass) {
			nc.Spec.AMIFamily = ptr(apis.AMIFamilyAL2023)
			nc.Spec.AMISelectorTerms = []apis.AMISelectorTerm{
				{Name: "golden-*", Owner: "123456789012"},
				{Tags: map[string]string{"team": "a"}, Owner: "self"},
				{SSMParameter: "/custom/ami"},
				{ID: "ami-0abc"},
			}
		}},
		{"alias with an SSM parameter in the same term", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].SSMParameter = "/x" }},
		{"capacity reservations by tags and owner", func(nc *apis.EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{
				{Tags: map[string]string{"a": "b"}, OwnerID: "123456789012", InstanceMatchCriteria: "open"},
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc := baseEC2NodeClass(t)
			c.mutate(nc)
			assert.Empty(t, apis.ValidateEC2NodeClass(nc))
		})
	}
}

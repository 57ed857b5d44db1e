package mirror

import (
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func testClass(name string) *apis.EC2NodeClass {
	role := "KarpenterNodeRole"
	nc := &apis.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: name}}
	nc.Spec.Role = role
	return nc
}

func resolved(conds ...metav1.Condition) apis.EC2NodeClassStatus {
	st := apis.EC2NodeClassStatus{Subnets: []apis.SubnetStatus{{ID: "subnet-1", Zone: "us-east-1a", ZoneID: "use1-az1"}},
		SecurityGroups: []apis.SecurityGroupStatus{{ID: "sg-1", Name: "nodes"}},
		AMIs:           []apis.AMIStatus{{ID: "ami-1", Name: "al2023"}}, InstanceProfile: "profile"}
	st.Conditions = append(conds, metav1.Condition{Type: "Ready", Status: "False", Reason: "NotReady", ObservedGeneration: 3})
	return st
}

func ok(typ string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: typ, ObservedGeneration: 3}
}

func TestEC2NodeClassMirrorCarriesTheResolution(t *testing.T) {
	obj := EC2NodeClass(Class{EC2NodeClass: testClass("default"), Status: resolved(ok("SubnetsReady"), ok("SecurityGroupsReady"), ok("AMIsReady"),
		ok("InstanceProfileReady"))}, t0)
	st := obj.Status.(apis.EC2NodeClassStatus)
	assert.Equal(t, "default", obj.Name)
	assert.Equal(t, "KarpenterNodeRole", obj.Spec.(apis.EC2NodeClassSpec).Role, "the ROLE column reads the spec")
	assert.Equal(t, []apis.SubnetStatus{{ID: "subnet-1", Zone: "us-east-1a", ZoneID: "use1-az1"}}, st.Subnets)
	assert.Equal(t, "nodes", st.SecurityGroups[0].Name)
	assert.Equal(t, "ami-1", st.AMIs[0].ID)
	assert.Equal(t, "profile", st.InstanceProfile)
	var types []string
	for _, c := range st.Conditions {
		types = append(types, c.Type)
		assert.Zero(t, c.ObservedGeneration, "a stored class has no generation")
	}
	assert.Equal(t, []string{"SubnetsReady", "SecurityGroupsReady", "AMIsReady", "InstanceProfileReady", "ValidationSucceeded", "Ready"}, types)
	assert.Equal(t, metav1.ConditionTrue, condOf(t, st.Conditions, "Ready").Status, "Ready is recomputed: every other condition is True")
}

func TestEC2NodeClassWithAMissingSubnetIsNotReadyForThatReason(t *testing.T) {
	missing := metav1.Condition{Type: "SubnetsReady", Status: metav1.ConditionFalse, Reason: "SubnetsNotFound", Message: "subnetSelectorTerms match no subnet"}
	noAMI := metav1.Condition{Type: "AMIsReady", Status: metav1.ConditionFalse, Reason: "AMINotFound", Message: "amiSelectorTerms match no AMI"}
	st := EC2NodeClass(Class{EC2NodeClass: testClass("default"), Status: resolved(missing, ok("SecurityGroupsReady"), noAMI, ok("InstanceProfileReady"))},
		t0).Status.(apis.EC2NodeClassStatus)
	r := condOf(t, st.Conditions, "Ready")
	assert.Equal(t, metav1.ConditionFalse, r.Status)
	assert.Equal(t, "SubnetsNotFound", r.Reason, "the first condition that is not true")
	assert.Equal(t, "subnetSelectorTerms match no subnet (not ready: SubnetsReady, AMIsReady)", r.Message)
	assert.Equal(t, metav1.ConditionFalse, condOf(t, st.Conditions, "SubnetsReady").Status)
}

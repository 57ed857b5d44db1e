package driftinput

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/drift"
)

func testPool() *apis.NodePool {
	np := &apis.NodePool{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	np.Spec.Template.ObjectMeta.Labels = map[string]string{"team": "a"}
	np.Spec.Template.Spec.NodeClassRef = &apis.NodeClassReference{Group: "karpenter.k8s.aws", Kind: "EC2NodeClass", Name: "default"}
	np.Spec.Template.Spec.Requirements = []apis.NodeSelectorRequirementWithMinValues{
		{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}
	return np
}

func testClass() *apis.EC2NodeClass {
	return &apis.EC2NodeClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Spec: apis.EC2NodeClassSpec{Role: "KarpenterNodeRole-demo",
		AMISelectorTerms: []apis.AMISelectorTerm{{Alias: "al2023@latest"}}}}
}

var amd64 = []corev1.NodeSelectorRequirement{{Key: corev1.LabelArchStable, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}}}

func testResolution() nodeclass.Resolution {
	return nodeclass.Resolution{Ready: true, Status: apis.EC2NodeClassStatus{
		AMIs:                 []apis.AMIStatus{{ID: "ami-1", Requirements: amd64}},
		Subnets:              []apis.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}},
		SecurityGroups:       []apis.SecurityGroupStatus{{ID: "sg-1"}},
		CapacityReservations: []apis.CapacityReservationStatus{{ID: "cr-1"}},
		Conditions: []metav1.Condition{{Type: apis.ConditionTypeAMIsReady, Status: metav1.ConditionTrue, Reason: "AMIsReady"},
			{Type: apis.ConditionTypeSubnetsReady, Status: metav1.ConditionTrue, Reason: "SubnetsReady"}}}}
}

// choosing sets the launch path's AMI choice on in, as the caller that launches does: image, for any
// instance type.
func choosing(in Inputs, image string) Inputs {
	in.Resolution.ImageFor = func(drift.Claim) (string, bool) { return image, true }
	return in
}

// created is when stamped() was created.
var created = time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)

// stamped is a claim as a launch from testPool and testClass records it.
func stamped() state.Claim {
	return state.Claim{Name: "default-abcde", NodePool: "default", NodeClass: "default", CreatedAt: created,
		TemplateHash: apis.NodePoolTemplateHash(testPool()), TemplateHashVersion: apis.NodePoolHashVersion,
		NodeClassHash: apis.EC2NodeClassHash(testClass()), NodeClassHashVersion: apis.EC2NodeClassHashVersion,
		ImageID: "ami-1", SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-1"},
		Labels: map[string]string{corev1.LabelInstanceTypeStable: "m5.large", corev1.LabelArchStable: "amd64", "team": "a",
			apis.LabelCapacityReservationID: "cr-1"}}
}

func TestForAClaimInStepIsNotDrifted(t *testing.T) {
	got := choosing(For(stamped(), testPool(), testClass(), testResolution(), nil, Observed{}), "ami-1").Detect()
	assert.Equal(t, drift.NotDrifted, got.Verdict, "%+v", got)
	assert.Empty(t, got.Unknown)
	assert.Nil(t, got.Restamp)
}

func TestForSeesEachEdit(t *testing.T) {
	t.Run("a NodePool template label", func(t *testing.T) {
		np := testPool()
		np.Spec.Template.ObjectMeta.Labels["rollout"] = "2"
		got := For(stamped(), np, testClass(), testResolution(), nil, Observed{}).Detect()
		assert.Equal(t, drift.NodePoolDrifted, got.Reason)
		assert.Equal(t, stamped().TemplateHash, got.Details["oldTemplateHash"])
		assert.Equal(t, apis.NodePoolTemplateHash(np), got.Details["newTemplateHash"])
	})
	t.Run("a NodePool requirement", func(t *testing.T) {
		np := testPool()
		np.Spec.Template.Spec.Requirements[0].Values = []string{"arm64"}
		got := For(stamped(), np, testClass(), testResolution(), nil, Observed{}).Detect()
		assert.Equal(t, drift.RequirementsDrifted, got.Reason, "requirements are not hashed, yet drift")
		assert.Equal(t, []drift.Reason{drift.RequirementsDrifted}, got.Reasons)
	})
	t.Run("the EC2NodeClass's user data", func(t *testing.T) {
		nc := testClass()
		nc.Spec.UserData = ptr("echo hi")
		got := For(stamped(), testPool(), nc, testResolution(), nil, Observed{}).Detect()
		assert.Equal(t, drift.NodeClassDrift, got.Reason)
	})
	t.Run("the resolved AMI", func(t *testing.T) {
		res := testResolution()
		res.Status.AMIs[0].ID = "ami-2"
		got := choosing(For(stamped(), testPool(), testClass(), res, nil, Observed{}), "ami-2").Detect()
		assert.Equal(t, drift.AMIDrift, got.Reason)
		assert.Equal(t, map[string]string{"oldImageId": "ami-1", "newImageId": "ami-2"}, got.Details)
	})
	t.Run("the reservation", func(t *testing.T) {
		res := testResolution()
		res.Status.CapacityReservations = nil
		got := For(stamped(), testPool(), testClass(), res, nil, Observed{}).Detect()
		assert.Equal(t, drift.CapacityReservationDrift, got.Reason)
	})
}

// Without the launch path's AMI choice, AMIDrift is not decided (For cannot make that choice itself).
func TestForLeavesTheAMIChoiceToTheCaller(t *testing.T) {
	in := For(stamped(), testPool(), testClass(), testResolution(), nil, Observed{})
	assert.Nil(t, in.Resolution.ImageFor)
	got := in.Detect()
	assert.Equal(t, drift.Undecided, got.Verdict)
	assert.Equal(t, "no launch AMI choice to compare with", got.Undecided[drift.AMIDrift])
	assert.Len(t, got.Undecided, 1)
}

// The claim's creation and the caller's time reach InstanceTypeNotFound; which instance types the
// NodePool offers is the caller's to say, as the AMI choice is.
func TestForLeavesTheInstanceTypesToTheCaller(t *testing.T) {
	in := choosing(For(stamped(), testPool(), testClass(), testResolution(), nil, Observed{Now: created.Add(2 * time.Hour)}), "ami-1")
	assert.Equal(t, created, in.Claim.CreatedAt)
	assert.Nil(t, in.NodePool.InstanceTypes)
	got := in.Detect()
	assert.Equal(t, drift.Undecided, got.Verdict)
	assert.Equal(t, []drift.Reason{drift.InstanceTypeNotFound}, keysOf(got.Undecided))

	in.NodePool.InstanceTypes = func(string) ([]drift.Offering, bool) { return nil, false }
	got = in.Detect()
	assert.Equal(t, drift.Drifted, got.Verdict)
	assert.Equal(t, drift.InstanceTypeNotFound, got.Reason)

	in.Now = created.Add(30 * time.Minute)
	assert.Equal(t, drift.NotDrifted, in.Detect().Verdict, "a claim younger than an hour is not judged")
}

func keysOf[V any](m map[drift.Reason]V) []drift.Reason {
	out := make([]drift.Reason, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestForDecidesNothingOnAnIncompleteResolution(t *testing.T) {
	res := testResolution()
	res.Status.AMIs = nil
	res.Status.Conditions[0] = metav1.Condition{Type: apis.ConditionTypeAMIsReady, Status: metav1.ConditionFalse, Reason: "AMINotFound",
		Message: "amiSelectorTerms match no AMI"}
	got := For(stamped(), testPool(), testClass(), res, nil, Observed{}).Detect()
	assert.Equal(t, drift.Undecided, got.Verdict)
	assert.Equal(t, map[drift.Reason]string{drift.AMIDrift: "AMIsReady is False (AMINotFound: amiSelectorTerms match no AMI)"}, got.Undecided)

	got = For(stamped(), testPool(), testClass(), nodeclass.Resolution{}, errors.New("DescribeSubnets: throttled"), Observed{}).Detect()
	assert.Equal(t, drift.Undecided, got.Verdict)
	assert.Len(t, got.Undecided, 4)
	assert.Contains(t, got.Undecided[drift.SubnetDrift], "throttled")
}

func TestForFillsWhatTheClaimDidNotRecord(t *testing.T) {
	rebuilt := state.Claim{Name: "default-redep", NodePool: "default", NodeClass: "default"}
	node := map[string]string{corev1.LabelInstanceTypeStable: "m5.large", corev1.LabelArchStable: "arm64", "team": "a"}
	inst := &instance.Instance{ImageID: "ami-1", SubnetID: "subnet-z", SecurityGroupIDs: []string{"sg-1"}}
	got := choosing(For(rebuilt, testPool(), testClass(), testResolution(), nil, Observed{NodeLabels: node, Instance: inst}), "").Detect() // no AMI for arm64
	assert.Equal(t, []drift.Reason{drift.RequirementsDrifted, drift.AMIDrift, drift.SubnetDrift}, got.Reasons,
		"the Node's labels and EC2's description stand in for what the claim lacks")
	assert.NotNil(t, got.Restamp, "its unknown hashes are re-stamped")

	t.Run("a requirement on a label the Node never carried is not judged", func(t *testing.T) {
		pool := testPool()
		pool.Spec.Template.Spec.Requirements = append(pool.Spec.Template.Spec.Requirements, apis.NodeSelectorRequirementWithMinValues{
			Key: "karpenter.k8s.aws/instance-category", Operator: corev1.NodeSelectorOpIn, Values: []string{"c", "m"}})
		node := map[string]string{corev1.LabelInstanceTypeStable: "m5.large", corev1.LabelArchStable: "amd64", "team": "a"}
		in := For(rebuilt, pool, testClass(), testResolution(), nil, Observed{NodeLabels: node})
		assert.True(t, in.Claim.LabelsFromNode)
		assert.NotContains(t, in.Detect().Reasons, drift.RequirementsDrifted)
	})

	t.Run("a claim's own labels win over its Node's", func(t *testing.T) {
		in := For(stamped(), testPool(), testClass(), testResolution(), nil, Observed{NodeLabels: node})
		assert.Equal(t, "amd64", in.Claim.Labels[corev1.LabelArchStable])
		assert.Equal(t, drift.NotDrifted, choosing(in, "ami-1").Detect().Verdict, "a kubectl label on the Node is not drift")
	})
	t.Run("a reservation that ended is not drift", func(t *testing.T) {
		res := testResolution()
		res.Status.CapacityReservations = nil
		in := For(stamped(), testPool(), testClass(), res, nil, Observed{Instance: &instance.Instance{}})
		assert.Empty(t, in.Claim.CapacityReservationID, "EC2 says the instance runs in no reservation now")
		assert.Equal(t, drift.NotDrifted, choosing(in, "ami-1").Detect().Verdict)
	})
}

func TestLifetime(t *testing.T) {
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	c := state.Claim{CreatedAt: created, ExpireAfter: "2m0s"}
	np := testPool()
	np.Spec.Template.Spec.ExpireAfter = "1h"
	assert.Equal(t, drift.Lifetime{CreatedAt: created, ExpireAfter: "2m0s"}, Lifetime(c, np), "the stamp wins over a later edit")

	c.ExpireAfter = ""
	assert.Equal(t, drift.Lifetime{CreatedAt: created, ExpireAfter: "1h0m0s"}, Lifetime(c, np), "unstamped: the NodePool's")
	assert.Equal(t, "720h0m0s", Lifetime(c, testPool()).ExpireAfter, "the NodePool's default")
	np.Spec.Template.Spec.ExpireAfter = apis.Never
	assert.Equal(t, drift.ExpireNever, Lifetime(c, np).ExpireAfter)
	assert.Empty(t, Lifetime(c, nil).ExpireAfter, "no NodePool: unknown")

	expired, at := drift.Expired(Lifetime(state.Claim{CreatedAt: created, ExpireAfter: state.ExpireNever}, np), created.Add(1e6*time.Hour))
	assert.False(t, expired)
	assert.True(t, at.IsZero())
	require.Equal(t, state.ExpireNever, drift.ExpireNever, "the claim's Never and drift's are the same word")
}

func ptr[T any](v T) *T { return &v }

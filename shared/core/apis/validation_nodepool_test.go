package apis_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

type npCase = invalidCase[apis.NodePool]

func req(np *apis.NodePool, i int) *apis.NodeSelectorRequirementWithMinValues {
	return &np.Spec.Template.Spec.Requirements[i]
}

func addReq(np *apis.NodePool, r apis.NodeSelectorRequirementWithMinValues) {
	np.Spec.Template.Spec.Requirements = append(np.Spec.Template.Spec.Requirements, r)
}

func TestValidateNodePoolRejects(t *testing.T) {
	const reqs = "spec.template.spec.requirements"
	cases := []npCase{
		{"name missing", func(np *apis.NodePool) { np.Name = "" }, "metadata.name", field.ErrorTypeRequired},
		{"name not a DNS subdomain", func(np *apis.NodePool) { np.Name = "Bad_Name" }, "metadata.name", field.ErrorTypeInvalid},
		{"namespace on a cluster-scoped object", func(np *apis.NodePool) { np.Namespace = "default" }, "metadata.namespace", field.ErrorTypeForbidden},
		{"unsupported operator", func(np *apis.NodePool) { req(np, 0).Operator = "Matches" }, reqs + "[0].operator", field.ErrorTypeNotSupported},
		{"operator missing", func(np *apis.NodePool) { req(np, 1).Operator = "" }, reqs + "[1].operator", field.ErrorTypeRequired},
		{"In without values", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: "example.com/a", Operator: corev1.NodeSelectorOpIn})
		}, reqs + "[2].values", field.ErrorTypeRequired},
		{"Gt with two values", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: corev1.NodeSelectorOpGt, Values: []string{"1", "2"}})
		}, reqs + "[2].values", field.ErrorTypeInvalid},
		{"Lt with no values", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: corev1.NodeSelectorOpLt})
		}, reqs + "[2].values", field.ErrorTypeInvalid},
		{"Gte with a negative value", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: apis.NodeSelectorOpGte, Values: []string{"-1"}})
		}, reqs + "[2].values[0]", field.ErrorTypeInvalid},
		{"Lte with a non-integer", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: "karpenter.k8s.aws/instance-cpu", Operator: apis.NodeSelectorOpLte, Values: []string{"4.5"}})
		}, reqs + "[2].values[0]", field.ErrorTypeInvalid},
		{"minValues zero", func(np *apis.NodePool) { req(np, 1).MinValues = ptr(0) }, reqs + "[1].minValues", field.ErrorTypeInvalid},
		{"minValues above 50", func(np *apis.NodePool) { req(np, 1).MinValues = ptr(51) }, reqs + "[1].minValues", field.ErrorTypeInvalid},
		{"minValues above the number of values", func(np *apis.NodePool) { req(np, 1).MinValues = ptr(4) }, reqs + "[1].minValues", field.ErrorTypeInvalid},
		{"requirement key missing", func(np *apis.NodePool) { req(np, 1).Key = "" }, reqs + "[1].key", field.ErrorTypeRequired},
		{"requirement key not qualified", func(np *apis.NodePool) { req(np, 1).Key = "bad key!" }, reqs + "[1].key", field.ErrorTypeInvalid},
		{"requirement key too long", func(np *apis.NodePool) { req(np, 1).Key = strings.Repeat("a", 317) }, reqs + "[1].key", field.ErrorTypeTooLong},
		{"requirement on karpenter.sh/nodepool", func(np *apis.NodePool) { req(np, 1).Key = apis.NodePoolLabelKey }, reqs + "[1].key", field.ErrorTypeInvalid},
		{"requirement on kubernetes.io/hostname", func(np *apis.NodePool) { req(np, 1).Key = corev1.LabelHostname }, reqs + "[1].key", field.ErrorTypeInvalid},
		{"requirement in the karpenter.sh domain", func(np *apis.NodePool) { req(np, 1).Key = "karpenter.sh/custom" }, reqs + "[1].key", field.ErrorTypeInvalid},
		{"requirement in a karpenter.sh sub-domain", func(np *apis.NodePool) { req(np, 1).Key = "x.karpenter.sh/custom" }, reqs + "[1].key", field.ErrorTypeInvalid},
		{"requirement in the karpenter.k8s.aws domain", func(np *apis.NodePool) { req(np, 1).Key = "karpenter.k8s.aws/not-a-label" }, reqs + "[1].key", field.ErrorTypeInvalid},
		{"requirement on the ec2nodeclass label", func(np *apis.NodePool) { req(np, 1).Key = apis.NodeClassLabelKey }, reqs + "[1].key", field.ErrorTypeInvalid},
		{"requirement value not a label value", func(np *apis.NodePool) { req(np, 1).Values[1] = "not a value" }, reqs + "[1].values[1]", field.ErrorTypeInvalid},
		{"capacity type with no known value", func(np *apis.NodePool) { req(np, 0).Values = []string{"preemptible"} }, reqs + "[0].values", field.ErrorTypeInvalid},
		{"capacity type with fewer known values than minValues", func(np *apis.NodePool) {
			req(np, 0).Values = []string{"spot", "cheap"}
			req(np, 0).MinValues = ptr(2)
		}, reqs + "[0].values", field.ErrorTypeInvalid},
		{"tenancy with no known value", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: apis.LabelInstanceTenancy, Operator: corev1.NodeSelectorOpIn, Values: []string{"host"}})
		}, reqs + "[2].values", field.ErrorTypeInvalid},
		{"dedicated tenancy", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: apis.LabelInstanceTenancy, Operator: corev1.NodeSelectorOpIn, Values: []string{"dedicated"}})
		}, reqs + "[2].values", field.ErrorTypeInvalid},
		{"tenancy other than default", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: apis.LabelInstanceTenancy, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"default"}})
		}, reqs + "[2].values", field.ErrorTypeInvalid},
		{"no tenancy", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: apis.LabelInstanceTenancy, Operator: corev1.NodeSelectorOpDoesNotExist})
		}, reqs + "[2].operator", field.ErrorTypeInvalid},
		{"dedicated tenancy label", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels[apis.LabelInstanceTenancy] = "dedicated" },
			"spec.template.metadata.labels[" + apis.LabelInstanceTenancy + "]", field.ErrorTypeInvalid},
		{"more than 100 requirements", func(np *apis.NodePool) {
			for i := 0; i < 100; i++ {
				addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: "example.com/k", Operator: corev1.NodeSelectorOpExists})
			}
		}, reqs, field.ErrorTypeTooMany},
		{"requirements missing", func(np *apis.NodePool) { np.Spec.Template.Spec.Requirements = nil }, reqs, field.ErrorTypeRequired},
		{"label in the karpenter.sh domain", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels["karpenter.sh/team"] = "a" }, "spec.template.metadata.labels", field.ErrorTypeInvalid},
		{"label karpenter.sh/nodepool", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels[apis.NodePoolLabelKey] = "x" }, "spec.template.metadata.labels", field.ErrorTypeInvalid},
		{"label kubernetes.io/hostname", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels[corev1.LabelHostname] = "x" }, "spec.template.metadata.labels", field.ErrorTypeInvalid},
		{"label in the karpenter.k8s.aws domain", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels["karpenter.k8s.aws/team"] = "a" }, "spec.template.metadata.labels", field.ErrorTypeInvalid},
		{"label key not qualified", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels["a/b/c"] = "a" }, "spec.template.metadata.labels", field.ErrorTypeInvalid},
		{"label value invalid", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels["team"] = "-bad-" }, "spec.template.metadata.labels[team]", field.ErrorTypeInvalid},
		{"annotation key invalid", func(np *apis.NodePool) {
			np.Spec.Template.ObjectMeta.Annotations = map[string]string{"bad key": "x"}
		}, "spec.template.metadata.annotations", field.ErrorTypeInvalid},
		{"taint key missing", func(np *apis.NodePool) { np.Spec.Template.Spec.Taints[0].Key = "" }, "spec.template.spec.taints[0].key", field.ErrorTypeRequired},
		{"taint key not qualified", func(np *apis.NodePool) { np.Spec.Template.Spec.Taints[0].Key = "bad key" }, "spec.template.spec.taints[0].key", field.ErrorTypeInvalid},
		{"taint value not qualified", func(np *apis.NodePool) { np.Spec.Template.Spec.Taints[0].Value = "bad value" }, "spec.template.spec.taints[0].value", field.ErrorTypeInvalid},
		{"taint effect unknown", func(np *apis.NodePool) { np.Spec.Template.Spec.Taints[0].Effect = "NoWay" }, "spec.template.spec.taints[0].effect", field.ErrorTypeNotSupported},
		{"taint effect missing", func(np *apis.NodePool) { np.Spec.Template.Spec.Taints[0].Effect = "" }, "spec.template.spec.taints[0].effect", field.ErrorTypeRequired},
		{"startup taint effect unknown", func(np *apis.NodePool) { np.Spec.Template.Spec.StartupTaints[0].Effect = "Sometimes" }, "spec.template.spec.startupTaints[0].effect", field.ErrorTypeNotSupported},
		{"duplicate taint key and effect", func(np *apis.NodePool) {
			np.Spec.Template.Spec.Taints = append(np.Spec.Template.Spec.Taints, corev1.Taint{Key: "example.com/dedicated", Value: "b", Effect: corev1.TaintEffectNoSchedule})
		}, "spec.template.spec.taints[1]", field.ErrorTypeDuplicate},
		{"startup taint duplicating a taint", func(np *apis.NodePool) {
			np.Spec.Template.Spec.StartupTaints[0] = corev1.Taint{Key: "example.com/dedicated", Effect: corev1.TaintEffectNoSchedule}
		}, "spec.template.spec.startupTaints[0]", field.ErrorTypeDuplicate},
		{"nodeClassRef missing", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef = nil }, "spec.template.spec.nodeClassRef", field.ErrorTypeRequired},
		{"nodeClassRef group empty", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Group = "" }, "spec.template.spec.nodeClassRef.group", field.ErrorTypeRequired},
		{"nodeClassRef group with a slash", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Group = "karpenter.k8s.aws/v1" }, "spec.template.spec.nodeClassRef.group", field.ErrorTypeInvalid},
		{"nodeClassRef group of another provider", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Group = "karpenter.azure.com" }, "spec.template.spec.nodeClassRef.group", field.ErrorTypeNotSupported},
		{"nodeClassRef kind empty", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Kind = "" }, "spec.template.spec.nodeClassRef.kind", field.ErrorTypeRequired},
		{"nodeClassRef kind unknown", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Kind = "AKSNodeClass" }, "spec.template.spec.nodeClassRef.kind", field.ErrorTypeNotSupported},
		{"nodeClassRef name empty", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "" }, "spec.template.spec.nodeClassRef.name", field.ErrorTypeRequired},
		{"expireAfter in days", func(np *apis.NodePool) { np.Spec.Template.Spec.ExpireAfter = "30d" }, "spec.template.spec.expireAfter", field.ErrorTypeInvalid},
		{"expireAfter with a fraction", func(np *apis.NodePool) { np.Spec.Template.Spec.ExpireAfter = "1.5h" }, "spec.template.spec.expireAfter", field.ErrorTypeInvalid},
		{"expireAfter never in lower case", func(np *apis.NodePool) { np.Spec.Template.Spec.ExpireAfter = "never" }, "spec.template.spec.expireAfter", field.ErrorTypeInvalid},
		{"terminationGracePeriod Never", func(np *apis.NodePool) { np.Spec.Template.Spec.TerminationGracePeriod = ptr(apis.Duration("Never")) }, "spec.template.spec.terminationGracePeriod", field.ErrorTypeInvalid},
		{"terminationGracePeriod in milliseconds", func(np *apis.NodePool) { np.Spec.Template.Spec.TerminationGracePeriod = ptr(apis.Duration("500ms")) }, "spec.template.spec.terminationGracePeriod", field.ErrorTypeInvalid},
		{"consolidateAfter negative", func(np *apis.NodePool) { np.Spec.Disruption.ConsolidateAfter = "-1s" }, "spec.disruption.consolidateAfter", field.ErrorTypeInvalid},
		{"consolidationPolicy unknown", func(np *apis.NodePool) { np.Spec.Disruption.ConsolidationPolicy = "WhenUnderutilized" }, "spec.disruption.consolidationPolicy", field.ErrorTypeNotSupported},
		{"budget nodes above 100%", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[0].Nodes = "101%" }, "spec.disruption.budgets[0].nodes", field.ErrorTypeInvalid},
		{"budget nodes negative", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[0].Nodes = "-1" }, "spec.disruption.budgets[0].nodes", field.ErrorTypeInvalid},
		{"budget nodes a word", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[0].Nodes = "all" }, "spec.disruption.budgets[0].nodes", field.ErrorTypeInvalid},
		{"budget schedule without duration", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[1].Duration = nil }, "spec.disruption.budgets[1].duration", field.ErrorTypeRequired},
		{"budget duration without schedule", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[1].Schedule = nil }, "spec.disruption.budgets[1].schedule", field.ErrorTypeRequired},
		{"budget schedule with four fields", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[1].Schedule = ptr("0 9 * *") }, "spec.disruption.budgets[1].schedule", field.ErrorTypeInvalid},
		{"budget schedule out of range", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[1].Schedule = ptr("0 25 * * *") }, "spec.disruption.budgets[1].schedule", field.ErrorTypeInvalid},
		{"budget schedule unknown descriptor", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[1].Schedule = ptr("@fortnightly") }, "spec.disruption.budgets[1].schedule", field.ErrorTypeInvalid},
		{"budget schedule with a time zone", func(np *apis.NodePool) {
			np.Spec.Disruption.Budgets[1].Schedule = ptr("CRON_TZ=Europe/Paris 0 9 * * 1-5")
		}, "spec.disruption.budgets[1].schedule", field.ErrorTypeInvalid},
		{"budget duration in seconds", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[1].Duration = ptr(apis.Duration("30s")) }, "spec.disruption.budgets[1].duration", field.ErrorTypeInvalid},
		{"budget reason unknown", func(np *apis.NodePool) { np.Spec.Disruption.Budgets[1].Reasons = []apis.DisruptionReason{"Expired"} }, "spec.disruption.budgets[1].reasons[0]", field.ErrorTypeNotSupported},
		{"budget reason repeated", func(np *apis.NodePool) {
			np.Spec.Disruption.Budgets[1].Reasons = []apis.DisruptionReason{"Empty", "Empty"}
		}, "spec.disruption.budgets[1].reasons[1]", field.ErrorTypeDuplicate},
		{"more than 50 budgets", func(np *apis.NodePool) {
			for i := 0; i < 50; i++ {
				np.Spec.Disruption.Budgets = append(np.Spec.Disruption.Budgets, apis.Budget{Nodes: "1"})
			}
		}, "spec.disruption.budgets", field.ErrorTypeTooMany},
		{"weight zero", func(np *apis.NodePool) { np.Spec.Weight = ptr(int32(0)) }, "spec.weight", field.ErrorTypeInvalid},
		{"weight above 100", func(np *apis.NodePool) { np.Spec.Weight = ptr(int32(101)) }, "spec.weight", field.ErrorTypeInvalid},
		{"negative limit", func(np *apis.NodePool) { np.Spec.Limits["memory"] = resource.MustParse("-1Gi") }, "spec.limits[memory]", field.ErrorTypeInvalid},
		{"static pool with a cpu limit", func(np *apis.NodePool) { np.Spec.Replicas = ptr(int64(3)) }, "spec.limits", field.ErrorTypeForbidden},
		{"static pool with a weight", func(np *apis.NodePool) { np.Spec.Replicas = ptr(int64(3)) }, "spec.weight", field.ErrorTypeForbidden},
		{"negative replicas", func(np *apis.NodePool) { np.Spec.Replicas = ptr(int64(-1)) }, "spec.replicas", field.ErrorTypeInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			np := baseNodePool(t)
			c.mutate(np)
			assertHasError(t, apis.ValidateNodePool(np), c.path, c.typ)
		})
	}
}

func TestValidateNodePoolMessages(t *testing.T) {
	np := baseNodePool(t)
	req(np, 0).Operator = "Matches"
	errs := apis.ValidateNodePool(np)
	assert.Len(t, errs, 1)
	assert.Equal(t, `spec.template.spec.requirements[0].operator: Unsupported value: "Matches": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"`, errs[0].Error())

	np = baseNodePool(t)
	np.Spec.Template.Spec.ExpireAfter = "30d"
	errs = apis.ValidateNodePool(np)
	assert.Len(t, errs, 1)
	assert.Equal(t, `spec.template.spec.expireAfter: Invalid value: "30d": should match '^(([0-9]+(s|m|h))+|Never)$'`, errs[0].Error())
}

// TestDedicatedTenancyIsRefusedNamingTheField: Nodewright launches shared tenancy only, so a NodePool that
// asks for dedicated instances is refused at validation (it was accepted, launched shared instances and
// labelled their Nodes dedicated); one that also allows default is met by default.
func TestDedicatedTenancyIsRefusedNamingTheField(t *testing.T) {
	np := baseNodePool(t)
	addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: apis.LabelInstanceTenancy, Operator: corev1.NodeSelectorOpIn, Values: []string{"dedicated"}})
	errs := apis.ValidateNodePool(np)
	require.Len(t, errs, 1)
	assert.Equal(t, `spec.template.spec.requirements[2].values: Invalid value: ["dedicated"]: Nodewright launches shared-tenancy instances only; `+
		`dedicated tenancy is not supported, so karpenter.k8s.aws/instance-tenancy must allow "default"`, errs[0].Error())

	for _, r := range []apis.NodeSelectorRequirementWithMinValues{
		{Key: apis.LabelInstanceTenancy, Operator: corev1.NodeSelectorOpIn, Values: []string{"default", "dedicated"}},
		{Key: apis.LabelInstanceTenancy, Operator: corev1.NodeSelectorOpIn, Values: []string{"default"}},
		{Key: apis.LabelInstanceTenancy, Operator: corev1.NodeSelectorOpNotIn, Values: []string{"dedicated"}},
	} {
		np := baseNodePool(t)
		addReq(np, r)
		assert.Empty(t, apis.ValidateNodePool(np), "%v", r)
	}
	np = baseNodePool(t)
	np.Spec.Template.ObjectMeta.Labels[apis.LabelInstanceTenancy] = "default"
	assert.Empty(t, apis.ValidateNodePool(np))
}

func TestValidateNodePoolAcceptsEveryOperatorAndWellKnownLabel(t *testing.T) {
	np := baseNodePool(t)
	for _, op := range []corev1.NodeSelectorOperator{corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist} {
		addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: "example.com/x", Operator: op})
	}
	for _, op := range []corev1.NodeSelectorOperator{corev1.NodeSelectorOpGt, corev1.NodeSelectorOpLt, apis.NodeSelectorOpGte, apis.NodeSelectorOpLte} {
		addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: apis.LabelInstanceCPU, Operator: op, Values: []string{"8"}})
	}
	for key := range apis.WellKnownLabels {
		if key == apis.NodePoolLabelKey {
			continue
		}
		addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: key, Operator: corev1.NodeSelectorOpExists})
	}
	np.Spec.Template.ObjectMeta.Labels[apis.CapacityTypeLabelKey] = "spot"
	np.Spec.Template.ObjectMeta.Labels[apis.LabelInstanceFamily] = "m5"
	assert.Empty(t, apis.ValidateNodePool(np))
}

// TestNodePoolNameLeavesRoomForClaimNames: the longest accepted name still gives claim names whose every
// launch token fits CreateFleet's limit; one character more is refused, saying why.
func TestNodePoolNameLeavesRoomForClaimNames(t *testing.T) {
	np := baseNodePool(t)
	np.Name = strings.Repeat("a", apis.MaxNodePoolNameLength)
	assert.Empty(t, apis.ValidateNodePool(np))
	claim := np.Name + "-" + strings.Repeat("z", apis.NodeClaimNameSuffixLength)
	assert.LessOrEqual(t, len(claim), apis.MaxNodeClaimNameLength)
	assert.LessOrEqual(t, len(claim+"-9"), apis.MaxClientTokenLength, "the last fallback attempt's token fits too")

	np.Name += "a"
	errs := apis.ValidateNodePool(np)
	require.Len(t, errs, 1)
	assert.Equal(t, `metadata.name: Invalid value: "`+np.Name+`": must be no more than 56 characters: nodewright names each NodeClaim `+
		`<nodepool>-<5 characters> and launches it with that name and a launch-attempt suffix as EC2's CreateFleet client token, which is at most 64 characters`,
		errs[0].Error())
}

// TestBalancedConsolidationPolicyIsAccepted: Balanced is a consolidation policy Nodewright implements
// (shared/core/disruption/balanced.go), not gated in Karpenter, so a NodePool with it validates.
func TestBalancedConsolidationPolicyIsAccepted(t *testing.T) {
	np := baseNodePool(t)
	np.Spec.Disruption.ConsolidationPolicy = apis.ConsolidationPolicyBalanced
	assert.Empty(t, apis.ValidateNodePool(np))
}

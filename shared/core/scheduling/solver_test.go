package scheduling_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/core/scheduling"
	. "github.com/nodewright/nodewright/shared/core/scheduling/schedulingtest"
)

// expect describes what a plan must contain; zero fields are not checked.
type expect struct {
	claims        int
	instanceTypes []string // per claim, the launch instance type
	nodePools     []string // per claim
	zones         []string // per claim
	capacityTypes []string // per claim
	podsPerClaim  []int
	existing      map[string][]string // node → pod names
	unschedulable map[string]scheduling.Constraint
	reasonHas     []string // substrings of the first failure's reason
}

func checkPlan(t *testing.T, plan *scheduling.Plan, e expect) {
	t.Helper()
	assert.Equal(t, e.claims, len(plan.NewClaims), "claims")
	var its, pools, zones, cts []string
	var pods []int
	for _, c := range plan.NewClaims {
		its, pools, zones, cts = append(its, c.InstanceType), append(pools, c.NodePool), append(zones, c.Zone), append(cts, c.CapacityType)
		pods = append(pods, len(c.Pods))
		assert.LessOrEqual(t, len(c.InstanceTypeOptions), scheduling.MaxInstanceTypeOptions)
		assert.Contains(t, c.InstanceTypeOptions, c.InstanceType)
		assert.NotEmpty(t, c.Why)
	}
	if e.instanceTypes != nil {
		assert.Equal(t, e.instanceTypes, its, "instance types")
	}
	if e.nodePools != nil {
		assert.Equal(t, e.nodePools, pools, "node pools")
	}
	if e.zones != nil {
		assert.Equal(t, e.zones, zones, "zones")
	}
	if e.capacityTypes != nil {
		assert.Equal(t, e.capacityTypes, cts, "capacity types")
	}
	if e.podsPerClaim != nil {
		assert.Equal(t, e.podsPerClaim, pods, "pods per claim")
	}
	existing := map[string][]string{}
	for _, n := range plan.ExistingNodes {
		existing[n.Name] = n.PodNames
	}
	if e.existing == nil {
		e.existing = map[string][]string{}
	}
	assert.Equal(t, e.existing, existing, "existing placements")
	failed := map[string]scheduling.Constraint{}
	for _, f := range plan.Unschedulable {
		require.NotEmpty(t, f.Rejections, f.PodName)
		failed[f.PodName] = f.Rejections[len(f.Rejections)-1].Constraint
	}
	if e.unschedulable == nil {
		e.unschedulable = map[string]scheduling.Constraint{}
	}
	assert.Equal(t, e.unschedulable, failed, "unschedulable")
	for _, s := range e.reasonHas {
		require.NotEmpty(t, plan.Unschedulable)
		assert.Contains(t, plan.Unschedulable[0].Reason, s)
	}
}

func pools(p ...scheduling.NodePool) []scheduling.NodePool { return p }

func toleration(key string) corev1.Toleration {
	return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists}
}

func TestSolve(t *testing.T) {
	defaultPool := pools(NodePool("default"))
	one := func(o PodOptions) []*corev1.Pod {
		if o.Name == "" {
			o.Name = "p"
		}
		return []*corev1.Pod{Pod(o)}
	}
	tests := []struct {
		name string
		in   scheduling.Input
		want expect
	}{
		{
			name: "one pod gets the cheapest offering of the cheapest fitting type",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", Memory: "1Gi"}), NodePools: defaultPool},
			want: expect{claims: 1, instanceTypes: []string{"small"}, zones: []string{"us-west-2a"}, capacityTypes: []string{"spot"}},
		},
		{
			name: "pods of one deployment share a claim",
			in:   scheduling.Input{Pods: Pods(3, PodOptions{Name: "web", Owner: "web", CPU: "1", Memory: "1Gi"}), NodePools: defaultPool},
			want: expect{claims: 1, instanceTypes: []string{"arm-medium"}, podsPerClaim: []int{3}},
		},
		{
			name: "an existing node is filled first",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "n1", CPU: "4", Memory: "8Gi"}), Initialized: true}}},
			want: expect{existing: map[string][]string{"n1": {"default/p"}}},
		},
		{
			name: "an existing node's bound pods use its room",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "n1", CPU: "2", Memory: "8Gi"}), Initialized: true,
					Pods: []*corev1.Pod{Pod(PodOptions{Name: "bound", CPU: "1500m", NodeName: "n1"})}}}},
			want: expect{claims: 1, instanceTypes: []string{"small"}},
		},
		{
			name: "an existing node's daemonsets that are not running yet use its room",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: defaultPool,
				DaemonSets: []*appsv1.DaemonSet{DaemonSet("agent", "1500m", "100Mi")},
				Nodes:      []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "n1", CPU: "2", Memory: "8Gi"}), Initialized: true}}},
			// The new node needs room for the daemon too: 2.5 CPU rules out small.
			want: expect{claims: 1, instanceTypes: []string{"arm-medium"}},
		},
		{
			name: "an existing node's untolerated taint sends the pod to a new claim",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: defaultPool,
				Nodes: []scheduling.ExistingNode{{Node: Node(NodeOptions{Name: "n1", CPU: "4", Memory: "8Gi", Taints: []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}}), Initialized: true}}},
			want: expect{claims: 1},
		},
		{
			name: "an uninitialized node ignores startup and ephemeral taints",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: pools(NodePool("default", StartupTaint("example.com/booting", corev1.TaintEffectNoSchedule))),
				Nodes: []scheduling.ExistingNode{{NodePool: "default", Node: Node(NodeOptions{Name: "n1", CPU: "4", Memory: "8Gi", Taints: []corev1.Taint{
					{Key: "example.com/booting", Effect: corev1.TaintEffectNoSchedule}, {Key: scheduling.TaintNotReady, Effect: corev1.TaintEffectNoSchedule},
				}})}}},
			want: expect{existing: map[string][]string{"n1": {"default/p"}}},
		},
		{
			name: "an initialized node keeps its startup taint",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: pools(NodePool("default", StartupTaint("example.com/booting", corev1.TaintEffectNoSchedule))),
				Nodes: []scheduling.ExistingNode{{NodePool: "default", Initialized: true, Node: Node(NodeOptions{Name: "n1", CPU: "4", Memory: "8Gi", Taints: []corev1.Taint{
					{Key: "example.com/booting", Effect: corev1.TaintEffectNoSchedule},
				}})}}},
			want: expect{claims: 1},
		},
		{
			name: "an in-flight claim absorbs pods",
			in: scheduling.Input{Pods: Pods(2, PodOptions{Name: "w", Owner: "w", CPU: "1"}), NodePools: defaultPool,
				InFlight: []scheduling.InFlightClaim{{Name: "default-abc", NodePool: "default", Labels: map[string]string{scheduling.LabelZone: "us-west-2a"},
					Allocatable: scheduling.Resources{CPU: 3900, Memory: 7 << 30, Pods: 40}}}},
			want: expect{existing: map[string][]string{"default-abc": {"default/w-0", "default/w-1"}}},
		},
		{
			name: "the heaviest NodePool wins",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: pools(
				NodePool("light", Weight(10), Requirement(scheduling.LabelInstanceFamily, scheduling.OpIn, "medium")),
				NodePool("heavy", Weight(50), Requirement(scheduling.LabelInstanceFamily, scheduling.OpIn, "large")))},
			want: expect{claims: 1, nodePools: []string{"heavy"}, instanceTypes: []string{"large"}},
		},
		{
			name: "equal weights: name Z to A",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: pools(NodePool("alpha"), NodePool("zulu"))},
			want: expect{claims: 1, nodePools: []string{"zulu"}},
		},
		{
			name: "a NodePool taint the pod does not tolerate is skipped",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: pools(
				NodePool("db", Weight(100), Taint("dedicated", "db", corev1.TaintEffectNoSchedule)), NodePool("default"))},
			want: expect{claims: 1, nodePools: []string{"default"}},
		},
		{
			name: "a tolerating pod uses the tainted NodePool",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1", Tolerations: []corev1.Toleration{toleration("dedicated")}}), NodePools: pools(
				NodePool("db", Weight(100), Taint("dedicated", "db", corev1.TaintEffectNoSchedule)), NodePool("default"))},
			want: expect{claims: 1, nodePools: []string{"db"}},
		},
		{
			name: "a custom label is served by the NodePool that defines it",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1", NodeSelector: map[string]string{"team": "blue"}}), NodePools: pools(
				NodePool("default", Weight(100)), NodePool("blue", Labels(map[string]string{"team": "blue"})))},
			want: expect{claims: 1, nodePools: []string{"blue"}},
		},
		{
			name: "an undefined custom label is unschedulable",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", NodeSelector: map[string]string{"team": "blue"}}), NodePools: defaultPool},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintRequirement},
				reasonHas: []string{`nodepool default: label "team" is not defined`}},
		},
		{
			name: "a zone selector narrows the claim",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", NodeSelector: map[string]string{"failure-domain.beta.kubernetes.io/zone": "us-west-2b"}}), NodePools: defaultPool},
			want: expect{claims: 1, zones: []string{"us-west-2b"}},
		},
		{
			name: "an arch requirement picks arm64",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", NodeRequirements: []corev1.NodeSelectorRequirement{In(scheduling.LabelArch, "arm64")}}), NodePools: defaultPool},
			want: expect{claims: 1, instanceTypes: []string{"arm-medium"}},
		},
		{
			name: "an impossible preference is relaxed",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", NodePreferences: [][]corev1.NodeSelectorRequirement{{In(scheduling.LabelZone, "us-west-2z")}}}), NodePools: defaultPool},
			want: expect{claims: 1, zones: []string{"us-west-2a"}},
		},
		{
			name: "a possible preference is honoured",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", NodePreferences: [][]corev1.NodeSelectorRequirement{{In(scheduling.LabelCapacityType, "on-demand")}}}), NodePools: defaultPool},
			want: expect{claims: 1, capacityTypes: []string{"on-demand"}},
		},
		{
			name: "the next required term is used when the first is impossible",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1", NodeRequirementTerms: [][]corev1.NodeSelectorRequirement{
				{In(scheduling.LabelZone, "us-west-2z")}, {In(scheduling.LabelZone, "us-west-2b")}}}), NodePools: defaultPool},
			want: expect{claims: 1, zones: []string{"us-west-2b"}},
		},
		{
			name: "a PreferNoSchedule NodePool is avoided when another fits",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: pools(
				NodePool("soft", Weight(100), Taint("spotty", "", corev1.TaintEffectPreferNoSchedule)), NodePool("plain"))},
			want: expect{claims: 1, nodePools: []string{"plain"}},
		},
		{
			name: "a PreferNoSchedule NodePool is used as a last resort",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: pools(NodePool("soft", Taint("spotty", "", corev1.TaintEffectPreferNoSchedule)))},
			want: expect{claims: 1, nodePools: []string{"soft"}},
		},
		{
			name: "cpu limits stop new claims",
			in:   scheduling.Input{Pods: Pods(3, PodOptions{Name: "big", Owner: "big", CPU: "3", Memory: "1Gi"}), NodePools: pools(NodePool("default", Limits("cpu", "4")))},
			want: expect{claims: 1, unschedulable: map[string]scheduling.Constraint{"default/big-1": scheduling.ConstraintLimits, "default/big-2": scheduling.ConstraintLimits},
				reasonHas: []string{"limits exhausted ([cpu])"}},
		},
		{
			name: "existing nodes count against limits",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "3"}), NodePools: pools(NodePool("default", Limits("cpu", "6"))),
				Nodes: []scheduling.ExistingNode{{NodePool: "default", Initialized: true, Node: Node(NodeOptions{Name: "n1", CPU: "4", Memory: "8Gi",
					Taints: []corev1.Taint{{Key: "dedicated", Effect: corev1.TaintEffectNoSchedule}}})}}},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintLimits},
				reasonHas: []string{"instance types that fit (e.g. arm-medium) would exceed the remaining limits ([cpu])"}},
		},
		{
			name: "a nodes limit caps the claim count",
			in:   scheduling.Input{Pods: Pods(2, PodOptions{Name: "big", Owner: "big", CPU: "7"}), NodePools: pools(NodePool("default", Limits("nodes", "1")))},
			want: expect{claims: 1, unschedulable: map[string]scheduling.Constraint{"default/big-1": scheduling.ConstraintLimits}},
		},
		{
			name: "daemonset overhead is reserved on every new node",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "3500m"}), NodePools: defaultPool,
				DaemonSets: []*appsv1.DaemonSet{DaemonSet("agent", "1", "100Mi")}},
			want: expect{claims: 1, instanceTypes: []string{"large"}},
		},
		{
			name: "a daemonset that does not tolerate the NodePool adds nothing",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "3500m", Tolerations: []corev1.Toleration{toleration("dedicated")}}),
				NodePools:  pools(NodePool("db", Taint("dedicated", "", corev1.TaintEffectNoSchedule))),
				DaemonSets: []*appsv1.DaemonSet{DaemonSet("agent", "1", "100Mi")}},
			want: expect{claims: 1, instanceTypes: []string{"arm-medium"}},
		},
		{
			name: "a tolerating daemonset counts on tainted NodePools",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "3500m", Tolerations: []corev1.Toleration{toleration("dedicated")}}),
				NodePools:  pools(NodePool("db", Taint("dedicated", "", corev1.TaintEffectNoSchedule))),
				DaemonSets: []*appsv1.DaemonSet{DaemonSet("agent", "1", "100Mi", corev1.Toleration{Operator: corev1.TolerationOpExists})}},
			want: expect{claims: 1, instanceTypes: []string{"large"}},
		},
		{
			name: "pods binding the same host port need separate nodes",
			in:   scheduling.Input{Pods: Pods(2, PodOptions{Name: "hp", Owner: "hp", CPU: "100m", HostPorts: []int32{8080}}), NodePools: defaultPool},
			want: expect{claims: 2, podsPerClaim: []int{1, 1}},
		},
		{
			name: "unavailable offerings are skipped",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: defaultPool, Unavailable: scheduling.UnavailableOfferings{
				{InstanceType: "small", Zone: "us-west-2a", CapacityType: "spot"}: true, {InstanceType: "small", Zone: "us-west-2b", CapacityType: "spot"}: true}},
			want: expect{claims: 1, instanceTypes: []string{"arm-medium"}, capacityTypes: []string{"spot"}},
		},
		{
			name: "on-demand is used when the NodePool allows only on-demand",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1"}), NodePools: pools(NodePool("default", Requirement(scheduling.LabelCapacityType, scheduling.OpIn, "on-demand")))},
			want: expect{claims: 1, instanceTypes: []string{"small"}, capacityTypes: []string{"on-demand"}},
		},
		{
			name: "a pod bigger than every type names the short resource",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "64", Memory: "1Gi"}), NodePools: defaultPool},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintResources},
				reasonHas: []string{"nodepool default: no instance type has room for cpu=64 memory=1Gi pods=1", "closest large", "short on [cpu]"}},
		},
		{
			name: "a GPU pod gets the GPU type",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", Requests: corev1.ResourceList{scheduling.ResourceNVIDIAGPU: resource.MustParse("1")}}), NodePools: defaultPool},
			want: expect{claims: 1, instanceTypes: []string{"gpu"}},
		},
		{
			name: "an invalid pod is reported",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", NodeSelector: map[string]string{scheduling.LabelHostname: "n1"}}), NodePools: defaultPool},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintValidation}, reasonHas: []string{"restricted label"}},
		},
		{
			name: "a hard topology spread on a key nothing defines is reported",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", Spread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "example.com/rack", WhenUnsatisfiable: corev1.DoNotSchedule}}}), NodePools: defaultPool},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintUnsupported}, reasonHas: []string{`topology key "example.com/rack" is not supported: no NodePool, instance type or node defines values for it`}},
		},
		{
			name: "a soft topology spread is relaxed",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1", Spread: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: scheduling.LabelZone, WhenUnsatisfiable: corev1.ScheduleAnyway}}}), NodePools: defaultPool},
			want: expect{claims: 1},
		},
		{
			name: "every NodePool's reason is reported",
			in: scheduling.Input{Pods: one(PodOptions{CPU: "1", NodeSelector: map[string]string{scheduling.LabelArch: "s390x"}}), NodePools: pools(
				NodePool("db", Weight(10), Taint("dedicated", "", corev1.TaintEffectNoSchedule)), NodePool("default"))},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintOffering},
				reasonHas: []string{"nodepool db: did not tolerate taint dedicated:NoSchedule", "nodepool default: no instance type with an available offering satisfies kubernetes.io/arch In [s390x]"}},
		},
		{
			name: "no NodePool",
			in:   scheduling.Input{Pods: one(PodOptions{CPU: "1"})},
			want: expect{unschedulable: map[string]scheduling.Constraint{"default/p": scheduling.ConstraintNoNodePool}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.in.InstanceTypes == nil {
				tt.in.InstanceTypes = SmallCatalog()
			}
			plan, err := scheduling.Solve(tt.in)
			require.NoError(t, err)
			checkPlan(t, plan, tt.want)
		})
	}
}

func TestSolveMinValues(t *testing.T) {
	minFamilies := pools(NodePool("default", MinValues(scheduling.LabelInstanceFamily, scheduling.OpExists, 3)))
	small := []*corev1.Pod{Pod(PodOptions{Name: "small", CPU: "1"})}
	big := []*corev1.Pod{Pod(PodOptions{Name: "big", CPU: "5"})}

	plan, err := scheduling.Solve(scheduling.Input{Pods: small, NodePools: minFamilies, InstanceTypes: SmallCatalog()})
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 1)
	assert.GreaterOrEqual(t, len(plan.NewClaims[0].InstanceTypeOptions), 3)
	assert.False(t, plan.NewClaims[0].MinValuesRelaxed)

	plan, err = scheduling.Solve(scheduling.Input{Pods: big, NodePools: minFamilies, InstanceTypes: SmallCatalog()})
	require.NoError(t, err)
	assert.Empty(t, plan.NewClaims)
	require.Len(t, plan.Unschedulable, 1)
	assert.Equal(t, scheduling.ConstraintMinValues, plan.Unschedulable[0].Rejections[0].Constraint)
	assert.Contains(t, plan.Unschedulable[0].Reason, "minValues for karpenter.k8s.aws/instance-family needs 3 distinct values, the fitting instance types offer 2")

	plan, err = scheduling.Solve(scheduling.Input{Pods: big, NodePools: minFamilies, InstanceTypes: SmallCatalog(), MinValuesPolicy: scheduling.MinValuesBestEffort})
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 1)
	assert.True(t, plan.NewClaims[0].MinValuesRelaxed)
	assert.Equal(t, []string{"large", "gpu"}, plan.NewClaims[0].InstanceTypeOptions)
}

func TestSolveTruncatesToSixtyCheapest(t *testing.T) {
	plan, err := scheduling.Solve(scheduling.Input{Pods: []*corev1.Pod{Pod(PodOptions{CPU: "100m"})}, NodePools: pools(NodePool("default")), InstanceTypes: InstanceTypes(400)})
	require.NoError(t, err)
	require.Len(t, plan.NewClaims, 1)
	c := plan.NewClaims[0]
	require.Len(t, c.InstanceTypeOptions, scheduling.MaxInstanceTypeOptions)
	assert.Equal(t, "fake-it-0", c.InstanceTypeOptions[0])
	assert.Equal(t, "fake-it-59", c.InstanceTypeOptions[59])
	assert.Equal(t, "fake-it-0", c.InstanceType)
	assert.InDelta(t, 0.3, c.Price, 1e-9)
	assert.Contains(t, c.Why, "the 60 cheapest are offered")
	var itReq *scheduling.NodeSelectorRequirement
	for i := range c.Requirements {
		if c.Requirements[i].Key == scheduling.LabelInstanceType {
			itReq = &c.Requirements[i]
		}
	}
	require.NotNil(t, itReq)
	assert.Len(t, itReq.Values, 60)
}

func TestSolveIsDeterministic(t *testing.T) {
	pods := RandomPods(300, 7)
	pods = append(pods, DeploymentPods(MixedWorkload(1))...)
	in := scheduling.Input{Pods: pods, NodePools: pools(NodePool("default"), NodePool("arm", Weight(5), Requirement(scheduling.LabelArch, scheduling.OpIn, "arm64"))), InstanceTypes: RealisticInstanceTypes()}
	first, err := scheduling.Solve(in)
	require.NoError(t, err)
	want, err := json.Marshal(first)
	require.NoError(t, err)

	reversed := slices.Clone(pods)
	slices.Reverse(reversed)
	in.Pods = reversed
	in.NodePools = pools(in.NodePools[1], in.NodePools[0])
	types := slices.Clone(in.InstanceTypes)
	slices.Reverse(types)
	in.InstanceTypes = types
	second, err := scheduling.Solve(in)
	require.NoError(t, err)
	got, err := json.Marshal(second)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got))
}

func TestSolveEveryPodIsAccountedFor(t *testing.T) {
	pods := append(RandomPods(500, 3), Pod(PodOptions{Name: "huge", CPU: "1000"}))
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools(NodePool("default")), InstanceTypes: RealisticInstanceTypes()})
	require.NoError(t, err)
	seen := map[string]int{}
	for _, c := range plan.NewClaims {
		for _, n := range c.PodNames {
			seen[n]++
		}
		// No claim exceeds the allocatable of its launch instance type.
		for _, it := range RealisticInstanceTypes() {
			if it.Name == c.InstanceType {
				assert.True(t, c.Requests.Fits(it.Allocatable), "%s on %s", c.Requests, it.Name)
			}
		}
	}
	for _, f := range plan.Unschedulable {
		seen[f.PodName]++
	}
	assert.Len(t, seen, len(pods))
	for name, n := range seen {
		assert.Equal(t, 1, n, name)
	}
	require.Len(t, plan.Unschedulable, 1)
	assert.Equal(t, "default/huge", plan.Unschedulable[0].PodName)
}

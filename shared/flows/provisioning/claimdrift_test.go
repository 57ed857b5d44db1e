package provisioning

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/drift"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/flows/driftinput"
)

// AMI requirements as the AL2023 alias resolves them: the standard image for types without GPUs, the
// NVIDIA one for types with.
var (
	standardAMI = []corev1.NodeSelectorRequirement{{Key: scheduling.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
		{Key: scheduling.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpDoesNotExist}}
	nvidiaAMI = []corev1.NodeSelectorRequirement{{Key: scheduling.LabelArch, Operator: corev1.NodeSelectorOpIn, Values: []string{"amd64"}},
		{Key: scheduling.LabelInstanceGPUCount, Operator: corev1.NodeSelectorOpExists}}
)

// gpuType is an amd64 instance type with one GPU.
func gpuType(name string) *scheduling.InstanceType {
	res := scheduling.Resources{CPU: 4000, Memory: 16 << 30, Pods: 110}
	return scheduling.NewInstanceType(name, map[string]string{scheduling.LabelArch: "amd64", scheduling.LabelOS: "linux",
		scheduling.LabelInstanceGPUCount: "1"}, res, res,
		[]scheduling.Offering{{Zone: "us-east-1a", CapacityType: scheduling.CapacityTypeOnDemand, Price: 1, Available: true}})
}

// driftRun is a run's Launches for drift: yaml configured (poolAndClass unless edited), its class
// resolved to amis, subnet-a and sg-1, with m5.large (amd64, no GPU) and g5.xlarge (one GPU) in its
// catalog.
func driftRun(t *testing.T, yaml string, amis ...apis.AMIStatus) *Launches {
	t.Helper()
	cfg, problems, err := readConfig(context.Background(), fakeConfig{items: storedConfig(t, yaml)})
	require.NoError(t, err)
	require.Empty(t, problems)
	rc := testClass(instanceType("m5.large", "amd64", 2, 0.096, "us-east-1a"), gpuType("g5.xlarge"))
	rc.nc = cfg.nodeClasses["default"]
	rc.resolved.Status.AMIs = amis
	rc.resolved.Status.Subnets = []apis.SubnetStatus{{ID: "subnet-a", Zone: "us-east-1a"}}
	rc.resolved.Status.SecurityGroups = []apis.SecurityGroupStatus{{ID: "sg-1"}}
	l := &Launches{cfg: cfg, classes: map[string]*readyClass{"default": rc}, byPool: map[string]scheduling.NodePool{}}
	for _, p := range cfg.pools {
		l.byPool[p.Name] = p
	}
	return l
}

// launchedOn is a claim of the run's default pool launched on instanceType, stamped as a launch stamps
// it, with the AMI the launch plan put it on (the image of the plan's template for that type).
func launchedOn(t *testing.T, l *Launches, instanceType string) state.Claim {
	t.Helper()
	pool := l.byPool["default"]
	target := claimTarget{claim: scheduling.ClaimPlan{NodePool: "default", InstanceTypeOptions: []string{instanceType}},
		pool: pool, class: l.classes["default"]}
	plan, err := buildLaunchPlan(context.Background(), &fakeTemplates{}, target, instance.Request{})
	require.NoError(t, err)
	require.NotEmpty(t, plan.OnDemand, "the launch plan has an offering of %s", instanceType)
	c := state.Claim{Name: "default-abcde", NodePool: "default", NodeClass: "default", InstanceType: instanceType,
		ImageID: plan.Images[plan.OnDemand[0].LaunchTemplate], SubnetID: "subnet-a", SecurityGroupIDs: []string{"sg-1"},
		Labels: map[string]string{corev1.LabelInstanceTypeStable: instanceType, corev1.LabelArchStable: "amd64",
			apis.NodePoolLabelKey: "default", apis.CapacityTypeLabelKey: "on-demand"}}
	l.cfg.stamp(pool).stampCreated(&c)
	return c
}

func amiStatus(id string, reqs []corev1.NodeSelectorRequirement) apis.AMIStatus {
	return apis.AMIStatus{ID: id, Requirements: reqs}
}

func TestLaunchesDriftAMI(t *testing.T) {
	t.Run("a claim on the AMI its launch chose is not drifted", func(t *testing.T) {
		l := driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI), amiStatus("ami-nvidia", nvidiaAMI))
		for _, it := range []string{"m5.large", "g5.xlarge"} {
			c := launchedOn(t, l, it)
			got := l.Drift(c, driftinput.Observed{})
			assert.Equal(t, drift.NotDrifted, got.Verdict, "%s: %+v", it, got)
			assert.Empty(t, got.Undecided, it)
			assert.Nil(t, got.Restamp, it)
		}
	})
	// The case that made drift use provisioning's choice: the launch picks an AMI whose requirements a
	// matcher on the node's labels would reject (gpu-count Exists, a label the claim does not record),
	// so every such node would have looked AMI-drifted, and been rolled, forever. A type without a GPU
	// requires gpu-count absent, so it takes the standard image even when the NVIDIA one is listed
	// first, as in Karpenter.
	t.Run("gpu-count Exists on a node lacking the label: the launch's choice, not drift", func(t *testing.T) {
		l := driftRun(t, poolAndClass, amiStatus("ami-nvidia", nvidiaAMI), amiStatus("ami-standard", standardAMI))
		c := launchedOn(t, l, "m5.large")
		require.Equal(t, "ami-standard", c.ImageID, "m5.large requires gpu-count absent, so the NVIDIA image's gpu-count Exists rules it out")
		require.NotContains(t, c.Labels, scheduling.LabelInstanceGPUCount)
		got := l.Drift(c, driftinput.Observed{})
		assert.Equal(t, drift.NotDrifted, got.Verdict, "%+v", got)

		g := launchedOn(t, l, "g5.xlarge")
		require.Equal(t, "ami-nvidia", g.ImageID)
		assert.Equal(t, drift.NotDrifted, l.Drift(g, driftinput.Observed{}).Verdict, "a GPU node whose claim does not record gpu-count")
	})
	t.Run("a newer AMI resolved is drift", func(t *testing.T) {
		l := driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI), amiStatus("ami-nvidia", nvidiaAMI))
		c, g := launchedOn(t, l, "m5.large"), launchedOn(t, l, "g5.xlarge")
		require.Equal(t, "ami-nvidia", g.ImageID)
		l.classes["default"].resolved.Status.AMIs = []apis.AMIStatus{amiStatus("ami-standard-newer", standardAMI),
			amiStatus("ami-standard", standardAMI), amiStatus("ami-nvidia", nvidiaAMI)}
		got := l.Drift(c, driftinput.Observed{})
		assert.Equal(t, drift.Drifted, got.Verdict)
		assert.Equal(t, []drift.Reason{drift.AMIDrift}, got.Reasons)
		assert.Equal(t, map[string]string{"oldImageId": "ami-standard", "newImageId": "ami-standard-newer"}, got.Details)

		assert.Equal(t, drift.NotDrifted, l.Drift(g, driftinput.Observed{}).Verdict, "another instance type's AMI changing is not drift")
	})
	t.Run("a newer AMI that is deprecated is not what a launch picks", func(t *testing.T) {
		l := driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI), amiStatus("ami-nvidia", nvidiaAMI))
		c := launchedOn(t, l, "m5.large")
		newer := amiStatus("ami-standard-newer", standardAMI)
		newer.Deprecated = true
		l.classes["default"].resolved.Status.AMIs = append([]apis.AMIStatus{newer}, l.classes["default"].resolved.Status.AMIs...)
		assert.Equal(t, drift.NotDrifted, l.Drift(c, driftinput.Observed{}).Verdict)
	})
	t.Run("an instance type not in the class's catalog: undecided", func(t *testing.T) {
		l := driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI))
		c := launchedOn(t, l, "m5.large")
		delete(l.classes["default"].byName, "m5.large")
		got := l.Drift(c, driftinput.Observed{})
		assert.Equal(t, drift.Undecided, got.Verdict)
		assert.Empty(t, got.Reasons)
		assert.Len(t, got.Undecided, 1)
		assert.Contains(t, got.Undecided[drift.AMIDrift], "m5.large")
	})
}

func TestLaunchesDriftUnusableClass(t *testing.T) {
	notReady := nodeclass.Resolution{Status: apis.EC2NodeClassStatus{Conditions: []metav1.Condition{
		{Type: nodeclass.ConditionTypeReady, Status: metav1.ConditionFalse, Message: "SubnetsReady=False"}}}}
	for _, tc := range []struct {
		name string
		r    *fakeResolver
		why  string
	}{
		{"the resolution failed", &fakeResolver{err: errors.New("DescribeImages: RequestLimitExceeded")}, "RequestLimitExceeded"},
		{"the class is not ready", &fakeResolver{res: map[string]nodeclass.Resolution{"default": notReady}}, "is not ready: SubnetsReady=False"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, err := readConfig(context.Background(), fakeConfig{items: storedConfig(t, poolAndClass)})
			require.NoError(t, err)
			classes, _, _, failed, _ := prepareClasses(context.Background(), tc.r, &instancetypes.Catalog{}, nil, cfg, "1.34", nil, subnetView{})
			l := &Launches{cfg: cfg, classes: classes, classFailures: failed}
			c := launchedOn(t, driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI)), "m5.large")

			got := l.Drift(c, driftinput.Observed{})
			assert.Equal(t, drift.Undecided, got.Verdict, "%+v", got)
			assert.Empty(t, got.Reasons)
			assert.Len(t, got.Undecided, 3, "AMI, security groups and subnet (the claim is in no reservation)")
			assert.Contains(t, got.Undecided[drift.AMIDrift], tc.why)

			edited := readEdited(t, func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels = map[string]string{"rollout": "2"} })
			l = &Launches{cfg: edited, classes: classes, classFailures: failed} // a Launches is one run's configuration
			got = l.Drift(c, driftinput.Observed{})
			assert.Equal(t, drift.Drifted, got.Verdict, "what does not read the resolution is still decided")
			assert.Equal(t, []drift.Reason{drift.NodePoolDrifted}, got.Reasons)
		})
	}
}

func TestLaunchesDriftNodePoolNotConfigured(t *testing.T) {
	l := driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI))
	c := launchedOn(t, l, "m5.large")
	c.NodePool = "removed"
	got := l.Drift(c, driftinput.Observed{})
	assert.Equal(t, drift.Undecided, got.Verdict)
	assert.Empty(t, got.Reasons)
	require.Len(t, got.Undecided, len(drift.Reasons))
	assert.Contains(t, got.Undecided[drift.NodePoolDrifted], `NodePool "removed" is not configured`)
}

// readEdited is poolAndClass's configuration with its NodePool edited by edit.
func readEdited(t *testing.T, edit func(*apis.NodePool)) runConfig {
	t.Helper()
	objs := decode(t, poolAndClass)
	edit(objs.NodePools[0])
	items, err := state.ConfigItemsFrom(objs)
	require.NoError(t, err)
	cfg, problems, err := readConfig(context.Background(), fakeConfig{items: items})
	require.NoError(t, err)
	require.Empty(t, problems)
	return cfg
}

func TestLaunchesDriftNodePool(t *testing.T) {
	t.Run("a template label edit is NodePoolDrifted", func(t *testing.T) {
		l := driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI))
		c := launchedOn(t, l, "m5.large")
		l.cfg = readEdited(t, func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels = map[string]string{"rollout": "2"} })
		got := l.Drift(c, driftinput.Observed{})
		assert.Equal(t, drift.Drifted, got.Verdict)
		assert.Equal(t, []drift.Reason{drift.NodePoolDrifted}, got.Reasons)
		assert.Equal(t, c.TemplateHash, got.Details["oldTemplateHash"])
		assert.Equal(t, l.cfg.poolHash["default"], got.Details["newTemplateHash"], "the hash a launch now stamps")
	})
	t.Run("a hash-version bump re-stamps, it is not drift", func(t *testing.T) {
		l := driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI))
		c := launchedOn(t, l, "m5.large")
		c.TemplateHash, c.TemplateHashVersion = "computed-the-old-way", "v0"
		c.NodeClassHash, c.NodeClassHashVersion = "computed-the-old-way", "v0"
		got := l.Drift(c, driftinput.Observed{})
		assert.Equal(t, drift.NotDrifted, got.Verdict, "%+v", got)
		assert.Empty(t, got.Reasons)
		require.NotNil(t, got.Restamp)
		assert.Equal(t, &drift.Restamp{TemplateHash: l.cfg.poolHash["default"], TemplateHashVersion: apis.NodePoolHashVersion,
			NodeClassHash: l.cfg.classHash["default"], NodeClassHashVersion: apis.EC2NodeClassHashVersion}, got.Restamp)
	})
}

func TestLaunchesLifetime(t *testing.T) {
	created := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l := &Launches{cfg: readEdited(t, func(np *apis.NodePool) { np.Spec.Template.Spec.ExpireAfter = "24h" })}
	assert.Equal(t, drift.Lifetime{CreatedAt: created, ExpireAfter: "2m0s"},
		l.Lifetime(state.Claim{NodePool: "default", CreatedAt: created, ExpireAfter: "2m0s"}), "the stamp wins over the NodePool's")
	assert.Equal(t, drift.Lifetime{CreatedAt: created, ExpireAfter: "24h0m0s"},
		l.Lifetime(state.Claim{NodePool: "default", CreatedAt: created}), "unstamped: the NodePool's as configured")
	assert.Empty(t, l.Lifetime(state.Claim{NodePool: "removed", CreatedAt: created}).ExpireAfter, "no NodePool: unknown")
}

// catalogOf is a region catalog: each type with its zones and whether it is sold on-demand and as spot.
func catalogOf(types ...instancetypes.Type) *instancetypes.Catalog {
	return &instancetypes.Catalog{Types: types}
}

func catalogType(name string, onDemand, spot bool, zones ...string) instancetypes.Type {
	return instancetypes.Type{Info: scheduling.InstanceInfo{Name: name}, Zones: zones, OnDemand: onDemand, Spot: spot}
}

// InstanceTypeNotFound reads the run's catalog: a claim older than an hour drifts when its instance type,
// or every offering of it in the node's zone and capacity type, has left the catalog.
func TestLaunchesDriftInstanceTypeNotFound(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	obs := driftinput.Observed{Now: now}
	regional := func() *instancetypes.Catalog {
		return catalogOf(catalogType("g5.xlarge", true, true, "us-east-1a"), catalogType("m5.large", true, true, "us-east-1a", "us-east-1b"))
	}
	claim := func(t *testing.T, l *Launches, capacityType string) state.Claim {
		c := launchedOn(t, l, "m5.large")
		c.CreatedAt = now.Add(-2 * time.Hour)
		c.Labels[apis.CapacityTypeLabelKey] = capacityType
		c.Labels[corev1.LabelTopologyZone] = "us-east-1a"
		return c
	}
	run := func(t *testing.T, cat *instancetypes.Catalog) *Launches {
		l := driftRun(t, poolAndClass, amiStatus("ami-standard", standardAMI), amiStatus("ami-nvidia", nvidiaAMI))
		l.catalog = cat
		return l
	}

	t.Run("still offered", func(t *testing.T) {
		l := run(t, regional())
		got := l.Drift(claim(t, l, "on-demand"), obs)
		assert.Equal(t, drift.NotDrifted, got.Verdict, "%+v", got)
		assert.Empty(t, got.Unknown)
	})
	t.Run("gone from the catalog", func(t *testing.T) {
		l := run(t, catalogOf(catalogType("g5.xlarge", true, true, "us-east-1a")))
		got := l.Drift(claim(t, l, "on-demand"), obs)
		assert.Equal(t, drift.Drifted, got.Verdict, "%+v", got)
		assert.Equal(t, []drift.Reason{drift.InstanceTypeNotFound}, got.Reasons)
		assert.Equal(t, map[string]string{"instanceType": "m5.large"}, got.Details)
	})
	t.Run("no longer sold as spot", func(t *testing.T) {
		l := run(t, catalogOf(catalogType("m5.large", true, false, "us-east-1a", "us-east-1b")))
		got := l.Drift(claim(t, l, "spot"), obs)
		assert.Equal(t, []drift.Reason{drift.InstanceTypeNotFound}, got.Reasons)
		assert.Equal(t, map[string]string{"instanceType": "m5.large", "zone": "us-east-1a", "capacityType": "spot"}, got.Details)
		assert.Equal(t, drift.NotDrifted, l.Drift(claim(t, l, "on-demand"), obs).Verdict, "the on-demand node of the type is not")
	})
	t.Run("a reserved node is kept by the on-demand offering", func(t *testing.T) {
		l := run(t, catalogOf(catalogType("m5.large", true, false, "us-east-1a")))
		assert.Equal(t, drift.NotDrifted, l.Drift(claim(t, l, "reserved"), obs).Verdict)
	})
	// As in Karpenter, a zone that no longer offers the type is an unavailable offering, not a missing one:
	// the type is offered in every zone of the region, so the node is not rolled for it.
	t.Run("a zone that stopped offering the type is not drift", func(t *testing.T) {
		l := run(t, catalogOf(catalogType("g5.xlarge", true, true, "us-east-1a"), catalogType("m5.large", true, true, "us-east-1b")))
		assert.Equal(t, drift.NotDrifted, l.Drift(claim(t, l, "on-demand"), obs).Verdict)
	})
	t.Run("a claim younger than an hour is not judged", func(t *testing.T) {
		l := run(t, catalogOf(catalogType("g5.xlarge", true, true, "us-east-1a")))
		c := claim(t, l, "on-demand")
		c.CreatedAt = now.Add(-time.Hour)
		assert.Equal(t, drift.NotDrifted, l.Drift(c, obs).Verdict)
	})
	t.Run("without a catalog, undecided", func(t *testing.T) {
		l := run(t, nil)
		got := l.Drift(claim(t, l, "on-demand"), obs)
		assert.Equal(t, drift.Undecided, got.Verdict)
		assert.Contains(t, got.Undecided, drift.InstanceTypeNotFound)
	})
	t.Run("the catalog is indexed once per run, not per claim", func(t *testing.T) {
		l := run(t, regional())
		l.Drift(claim(t, l, "on-demand"), obs)
		first := l.offers
		require.NotNil(t, first)
		l.Drift(claim(t, l, "spot"), obs)
		assert.Same(t, first, l.offers)
	})
}

package provisioning

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
	"github.com/nodewright/nodewright/shared/core/settings"
)

func settingsItem(t *testing.T, s settings.Settings) state.ConfigItem {
	t.Helper()
	it, err := state.SettingsItem(s)
	require.NoError(t, err)
	return it
}

func TestReadConfigReadsTheStoredSettings(t *testing.T) {
	items := storedConfig(t, poolAndClass)
	cfg, problems, err := readConfig(context.Background(), fakeConfig{items: items})
	require.NoError(t, err)
	assert.Empty(t, problems)
	assert.Equal(t, settings.Default(), cfg.settings, "none stored: the defaults")

	s := settings.Default()
	s.MinValuesPolicy, s.ReservedENIs = settings.MinValuesBestEffort, 2
	cfg, problems, err = readConfig(context.Background(), fakeConfig{items: append(items, settingsItem(t, s))})
	require.NoError(t, err)
	assert.Empty(t, problems, "the settings item is a known kind")
	assert.Equal(t, s, cfg.settings)

	for name, spec := range map[string]string{"not JSON": "{", "invalid": `{"minValuesPolicy":"Loose"}`} {
		cfg, problems, err = readConfig(context.Background(), fakeConfig{items: append(items,
			state.ConfigItem{Kind: state.KindSettings, Name: state.SettingsName, Spec: spec})})
		require.NoError(t, err, name)
		assert.Equal(t, settings.Default(), cfg.settings, "%s: the defaults, and the problem said", name)
		require.Len(t, problems, 1, name)
		assert.Contains(t, problems[0], "Settings cluster", name)
	}
}

// oneTypeCatalog is m5.xlarge in us-east-1a: 16 GiB, 4 ENIs of 15 addresses (58 pods).
func oneTypeCatalog() *instancetypes.Catalog {
	return &instancetypes.Catalog{Types: []instancetypes.Type{{Info: scheduling.InstanceInfo{Name: "m5.xlarge", VCPUs: 4,
		MemoryMiB: 16384, Architecture: "amd64", MaxENIs: 4, IPv4PerENI: 15, Hypervisor: "nitro"},
		Zones: []string{"us-east-1a"}, Spot: true, OnDemand: true}}}
}

// The VM memory overhead and the reserved ENIs shape every instance type's capacity, and without the
// ReservedCapacity gate a class's capacity reservations give no reserved offering.
func TestStoredSettingsShapeTheInstanceTypes(t *testing.T) {
	cfg, _, err := readConfig(context.Background(), fakeConfig{items: storedConfig(t, poolAndClass)})
	require.NoError(t, err)
	reserved := nodeclass.CapacityReservation{Available: 2}
	reserved.ID, reserved.InstanceType, reserved.AvailabilityZone = "cr-0123456789abcdef0", "m5.xlarge", "us-east-1a"
	r := &fakeResolver{res: map[string]nodeclass.Resolution{"default": {Ready: true,
		Subnets: []nodeclass.Subnet{{ID: "subnet-a", Zone: "us-east-1a"}}, CapacityReservations: []nodeclass.CapacityReservation{reserved}}}}
	typeWith := func(s settings.Settings) *scheduling.InstanceType {
		cfg.settings = s
		classes, _, problems, _, _ := prepareClasses(context.Background(), r, oneTypeCatalog(), flatPrices{"m5.xlarge": 0.192}, cfg, "1.34", nil, subnetView{})
		require.Empty(t, problems)
		it := classes["default"].byName["m5.xlarge"]
		require.NotNil(t, it)
		return it
	}
	hasReserved := func(it *scheduling.InstanceType) bool {
		for _, o := range it.Offerings {
			if o.CapacityType == scheduling.CapacityTypeReserved {
				return true
			}
		}
		return false
	}
	def := typeWith(settings.Default())
	assert.Equal(t, int64(58), def.Capacity.Pods)
	assert.Equal(t, int64(16384-1229)<<20, def.Capacity.Memory, "7.5 % of 16 GiB, rounded up to whole MiB")
	assert.True(t, hasReserved(def), "ReservedCapacity is on by default, as Karpenter's")

	s := settings.Default()
	s.VMMemoryOverheadPercent, s.ReservedENIs, s.FeatureGates.ReservedCapacity = 0.1, 1, false
	set := typeWith(s)
	assert.Equal(t, int64(3*14+2), set.Capacity.Pods, "one ENI kept out of the pod density")
	assert.Equal(t, int64(16384-1639)<<20, set.Capacity.Memory)
	assert.False(t, hasReserved(set), "without the gate the reservations are ignored")
}

// settingsWorld is newTestProvisioner over yaml's configuration and the stored settings s.
func settingsWorld(t *testing.T, cluster ClusterReader, yaml string, s *settings.Settings) testWorld {
	t.Helper()
	st := newStateStore(t)
	items := storedConfig(t, yaml)
	_, err := st.ApplyConfig(context.Background(), items, false)
	require.NoError(t, err)
	if s != nil {
		_, err = st.PutConfig(context.Background(), settingsItem(t, *s))
		require.NoError(t, err)
	}
	ec2 := &fakeEC2Capacity{capacity: map[instance.Offering]bool{
		{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "spot"}:      true,
		{InstanceType: "m5.xlarge", Zone: "us-east-1a", CapacityType: "on-demand"}: true}}
	resolved := nodeclass.Resolution{Ready: true, Subnets: []nodeclass.Subnet{{ID: "subnet-a", Zone: "us-east-1a"}},
		Status: testClass().resolved.Status}
	p := New(Config{}, Dependencies{Store: st, Cluster: cluster,
		NodeClasses: &fakeResolver{res: map[string]nodeclass.Resolution{"default": resolved}},
		Prices:      flatPrices{"m5.xlarge": 0.192}, Templates: &fakeTemplates{}, Launcher: ec2,
		Now: time.Now, Rand: rand.New(rand.NewPCG(7, 7))})
	p.catalog = oneTypeCatalog()
	return testWorld{store: st, ec2: ec2, p: p}
}

// minValuesPool asks for two instance types where the catalog has one, from a class with a fleet context.
const minValuesPool = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: kubernetes.io/arch, operator: In, values: [amd64]}
        - {key: node.kubernetes.io/instance-type, operator: Exists, minValues: 2}
` + nodeClassRef + `---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  amiFamily: AL2023
  role: KarpenterNodeRole-demo
  context: ctx-0123
  amiSelectorTerms: [{tags: {team: platform}}]
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

// MIN_VALUES_POLICY: Strict leaves the pod pending; BestEffort launches with minValues lowered, records
// the claim relaxed (its Node gets karpenter.sh/nodeclaim-min-values-relaxed) and, as Karpenter, leaves
// the class's CreateFleet context out of the launch.
func TestMinValuesPolicyFromTheStoredSettings(t *testing.T) {
	ctx := context.Background()
	snap := func() *kube.Snapshot { return pendingSnapshot(pod("a", nil)) }

	strict := settingsWorld(t, fakeCluster{snap: snap()}, minValuesPool, nil)
	rep, err := strict.p.Run(ctx, "run-1")
	require.NoError(t, err)
	assert.Empty(t, rep.Claims, "Strict by default")
	require.Len(t, rep.Unschedulable, 1)

	best := settings.Default()
	best.MinValuesPolicy = settings.MinValuesBestEffort
	w := settingsWorld(t, fakeCluster{snap: snap()}, minValuesPool, &best)
	rep, err = w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1, rep.Unschedulable)
	require.Len(t, w.ec2.requests, 1)
	assert.Empty(t, w.ec2.requests[0].Context, "a relaxed claim launches without the fleet context")
	c, err := w.store.GetClaim(ctx, rep.Claims[0].Name)
	require.NoError(t, err)
	require.NotNil(t, c.MinValuesRelaxed)
	assert.True(t, *c.MinValuesRelaxed)
}

// A claim that kept its minValues launches with the class's context and is recorded not relaxed.
func TestAClaimThatKeptItsMinValuesKeepsTheFleetContext(t *testing.T) {
	ctx := context.Background()
	best := settings.Default()
	best.MinValuesPolicy = settings.MinValuesBestEffort
	yaml := strings.Replace(minValuesPool, "minValues: 2", "minValues: 1", 1)
	w := settingsWorld(t, fakeCluster{snap: pendingSnapshot(pod("a", nil))}, yaml, &best)
	rep, err := w.p.Run(ctx, "run-1")
	require.NoError(t, err)
	require.Len(t, rep.Claims, 1)
	require.Len(t, w.ec2.requests, 1)
	assert.Equal(t, "ctx-0123", w.ec2.requests[0].Context)
	c, err := w.store.GetClaim(ctx, rep.Claims[0].Name)
	require.NoError(t, err)
	require.NotNil(t, c.MinValuesRelaxed)
	assert.False(t, *c.MinValuesRelaxed)
}

// PREFERENCE_POLICY: Respect launches what a pod prefers when it can (on-demand here); Ignore drops the
// preference and launches the cheapest (spot).
func TestPreferencePolicyFromTheStoredSettings(t *testing.T) {
	prefersOnDemand := func() *kube.Snapshot {
		p := pod("a", nil)
		p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{
			Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{
				Key: scheduling.LabelCapacityType, Operator: corev1.NodeSelectorOpIn, Values: []string{"on-demand"}}}}}}}}
		return pendingSnapshot(p)
	}
	for policy, want := range map[string]string{settings.PreferencesRespect: "on-demand", settings.PreferencesIgnore: "spot"} {
		s := settings.Default()
		s.PreferencePolicy = policy
		w := settingsWorld(t, fakeCluster{snap: prefersOnDemand()}, poolAndClass, &s)
		rep, err := w.p.Run(context.Background(), "run-1")
		require.NoError(t, err)
		require.Len(t, rep.Claims, 1, policy)
		assert.Equal(t, want, rep.Claims[0].CapacityType, policy)
	}
}

package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// Pinned hashes: if one of these changes, stored hashes would read as drift. Either the change is a
// mistake, or the hash version must be bumped along with the new value.
const (
	pinnedBaseNodePoolHash     = "ebb9f5fa94a2d464"
	pinnedBaseEC2NodeClassHash = "2ee5a109acc9165b"
)

func TestHashVersions(t *testing.T) {
	assert.Equal(t, "v1", apis.NodePoolHashVersion)
	assert.Equal(t, "v1", apis.EC2NodeClassHashVersion)
}

func TestNodePoolTemplateHashPinned(t *testing.T) {
	assert.Equal(t, pinnedBaseNodePoolHash, apis.NodePoolTemplateHash(baseNodePool(t)))
}

func TestEC2NodeClassHashPinned(t *testing.T) {
	assert.Equal(t, pinnedBaseEC2NodeClassHash, apis.EC2NodeClassHash(baseEC2NodeClass(t)))
}

func TestNodePoolTemplateHashIgnoresOrderAndDefaulting(t *testing.T) {
	a := decodeOne(t, `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: a}
spec:
  template:
    metadata:
      labels: {x: "1", y: "2"}
      annotations: {a: "1", b: "2"}
    spec:
      requirements: []
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: default}
      taints:
        - {key: a, effect: NoSchedule}
        - {key: b, value: v, effect: NoExecute}
      terminationGracePeriod: 1h
`).NodePools[0]
	b := decodeOne(t, `
kind: NodePool
apiVersion: karpenter.sh/v1
spec:
  disruption: {consolidateAfter: 0s, consolidationPolicy: WhenEmptyOrUnderutilized, budgets: [{nodes: 10%}]}
  template:
    spec:
      expireAfter: 720h
      terminationGracePeriod: 60m
      taints:
        - {effect: NoExecute, value: v, key: b}
        - {effect: NoSchedule, key: a}
      nodeClassRef: {name: default, kind: EC2NodeClass, group: karpenter.k8s.aws}
      requirements: []
    metadata:
      annotations: {b: "2", a: "1"}
      labels: {y: "2", x: "1"}
metadata: {name: b}
`).NodePools[0]
	before := a.DeepCopy()
	assert.Equal(t, apis.NodePoolTemplateHash(a), apis.NodePoolTemplateHash(b))
	assert.Equal(t, before, a, "hashing must not default or change its argument")
	a.SetDefaults()
	assert.Equal(t, apis.NodePoolTemplateHash(a), apis.NodePoolTemplateHash(b), "defaulted and not yet defaulted hash alike")
}

func TestNodePoolTemplateHashChangesWithEachHashedField(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*apis.NodePool)
	}{
		{"label added", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels["new"] = "x" }},
		{"label value", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Labels["team"] = "b" }},
		{"annotation", func(np *apis.NodePool) { np.Spec.Template.ObjectMeta.Annotations = map[string]string{"a": "b"} }},
		{"taint value", func(np *apis.NodePool) { np.Spec.Template.Spec.Taints[0].Value = "b" }},
		{"taint effect", func(np *apis.NodePool) { np.Spec.Template.Spec.Taints[0].Effect = corev1.TaintEffectNoExecute }},
		{"taint removed", func(np *apis.NodePool) { np.Spec.Template.Spec.Taints = nil }},
		{"taint moved to startup taints", func(np *apis.NodePool) {
			np.Spec.Template.Spec.StartupTaints = append(np.Spec.Template.Spec.StartupTaints, np.Spec.Template.Spec.Taints...)
			np.Spec.Template.Spec.Taints = nil
		}},
		{"startup taint key", func(np *apis.NodePool) { np.Spec.Template.Spec.StartupTaints[0].Key = "example.com/other" }},
		{"nodeClassRef name", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Name = "other" }},
		{"nodeClassRef kind", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Kind = "Other" }},
		{"nodeClassRef group", func(np *apis.NodePool) { np.Spec.Template.Spec.NodeClassRef.Group = "other.io" }},
		{"expireAfter", func(np *apis.NodePool) { np.Spec.Template.Spec.ExpireAfter = "721h" }},
		{"expireAfter Never", func(np *apis.NodePool) { np.Spec.Template.Spec.ExpireAfter = apis.Never }},
		{"terminationGracePeriod", func(np *apis.NodePool) { np.Spec.Template.Spec.TerminationGracePeriod = ptr(apis.Duration("2h")) }},
		{"terminationGracePeriod removed", func(np *apis.NodePool) { np.Spec.Template.Spec.TerminationGracePeriod = nil }},
	}
	base := apis.NodePoolTemplateHash(baseNodePool(t))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			np := baseNodePool(t)
			c.mutate(np)
			assert.NotEqual(t, base, apis.NodePoolTemplateHash(np))
		})
	}
}

func TestNodePoolTemplateHashIgnoresUnhashedFields(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*apis.NodePool)
	}{
		{"requirements", func(np *apis.NodePool) { np.Spec.Template.Spec.Requirements[0].Values = []string{"spot"} }},
		{"requirement added", func(np *apis.NodePool) {
			addReq(np, apis.NodeSelectorRequirementWithMinValues{Key: "kubernetes.io/arch", Operator: corev1.NodeSelectorOpIn, Values: []string{"arm64"}})
		}},
		{"budgets", func(np *apis.NodePool) { np.Spec.Disruption.Budgets = []apis.Budget{{Nodes: "1"}} }},
		{"consolidation", func(np *apis.NodePool) {
			np.Spec.Disruption.ConsolidationPolicy = apis.ConsolidationPolicyWhenEmpty
			np.Spec.Disruption.ConsolidateAfter = "10m"
		}},
		{"limits", func(np *apis.NodePool) { np.Spec.Limits["memory"] = resource.MustParse("1Ti") }},
		{"weight", func(np *apis.NodePool) { np.Spec.Weight = ptr(int32(90)) }},
		{"name", func(np *apis.NodePool) { np.Name = "renamed" }},
		{"empty annotation map", func(np *apis.NodePool) {
			np.Spec.Template.ObjectMeta.Annotations = map[string]string{}
		}},
		{"duration spelled differently", func(np *apis.NodePool) {
			np.Spec.Template.Spec.ExpireAfter = "719h60m"
			np.Spec.Template.Spec.TerminationGracePeriod = ptr(apis.Duration("3600s"))
		}},
	}
	base := apis.NodePoolTemplateHash(baseNodePool(t))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			np := baseNodePool(t)
			c.mutate(np)
			assert.Equal(t, base, apis.NodePoolTemplateHash(np))
		})
	}
}

func TestEC2NodeClassHashIgnoresOrderAndDefaulting(t *testing.T) {
	a := decodeOne(t, `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: a}
spec:
  role: r
  subnetSelectorTerms: [{id: subnet-1}]
  securityGroupSelectorTerms: [{id: sg-1}]
  amiSelectorTerms: [{alias: al2023@latest}]
  tags: {a: "1", b: "2"}
  kubelet: {maxPods: 110, evictionHard: {memory.available: 5%, nodefs.available: 10%}}
  blockDeviceMappings:
    - {deviceName: /dev/xvda, ebs: {volumeSize: 1024Gi}}
    - {deviceName: /dev/xvdb, ebs: {volumeSize: 20Gi, volumeType: gp3}}
`).EC2NodeClasses[0]
	b := decodeOne(t, `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: b}
spec:
  amiFamily: AL2023
  metadataOptions: {httpTokens: required, httpPutResponseHopLimit: 1, httpEndpoint: enabled, httpProtocolIPv6: disabled}
  blockDeviceMappings:
    - {ebs: {volumeType: gp3, volumeSize: 20Gi}, deviceName: /dev/xvdb}
    - {deviceName: /dev/xvda, ebs: {volumeSize: 1Ti}}
  kubelet: {evictionHard: {nodefs.available: 10%, memory.available: 5%}, maxPods: 110.0}
  tags: {b: "2", a: "1"}
  amiSelectorTerms: [{alias: al2023@latest}]
  securityGroupSelectorTerms: [{tags: {any: thing}}]
  subnetSelectorTerms: [{id: subnet-2}]
  role: r
  detailedMonitoring: false
`).EC2NodeClasses[0]
	before := a.DeepCopy()
	assert.Equal(t, apis.EC2NodeClassHash(a), apis.EC2NodeClassHash(b))
	assert.Equal(t, before, a, "hashing must not default or change its argument")
}

func TestEC2NodeClassHashChangesWithEachHashedField(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*apis.EC2NodeClass)
	}{
		{"role", func(nc *apis.EC2NodeClass) { nc.Spec.Role = "other" }},
		{"instance profile", func(nc *apis.EC2NodeClass) {
			nc.Spec.Role = ""
			nc.Spec.InstanceProfile = ptr("KarpenterNodeRole-test")
		}},
		{"user data", func(nc *apis.EC2NodeClass) { nc.Spec.UserData = ptr("echo hi") }},
		{"tags", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["team"] = "b" }},
		{"kubelet", func(nc *apis.EC2NodeClass) { nc.Spec.Kubelet["maxPods"] = []byte("100") }},
		{"block device size", func(nc *apis.EC2NodeClass) { nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = ptr("51Gi") }},
		{"block device encryption", func(nc *apis.EC2NodeClass) { nc.Spec.BlockDeviceMappings[0].EBS.Encrypted = ptr(true) }},
		{"root volume flag", func(nc *apis.EC2NodeClass) { nc.Spec.BlockDeviceMappings[0].RootVolume = false }},
		{"instance store policy", func(nc *apis.EC2NodeClass) { nc.Spec.InstanceStorePolicy = ptr(apis.InstanceStorePolicyRAID0) }},
		{"detailed monitoring", func(nc *apis.EC2NodeClass) { nc.Spec.DetailedMonitoring = ptr(true) }},
		{"public IP", func(nc *apis.EC2NodeClass) { nc.Spec.AssociatePublicIPAddress = ptr(true) }},
		{"metadata hop limit", func(nc *apis.EC2NodeClass) { nc.Spec.MetadataOptions.HTTPPutResponseHopLimit = ptr(int64(2)) }},
		{"metadata tokens", func(nc *apis.EC2NodeClass) { nc.Spec.MetadataOptions.HTTPTokens = ptr("optional") }},
		{"context", func(nc *apis.EC2NodeClass) { nc.Spec.Context = ptr("ctx") }},
		{"ami family resolved", func(nc *apis.EC2NodeClass) { nc.Spec.AMIFamily = ptr(apis.AMIFamilyCustom) }},
		{"alias family", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "bottlerocket@latest" }},
		{"placement group", func(nc *apis.EC2NodeClass) {
			nc.Spec.PlacementGroupSelector = &apis.PlacementGroupSelector{Name: ptr("pg")}
		}},
		{"network interfaces", func(nc *apis.EC2NodeClass) {
			nc.Spec.NetworkInterfaces = []*apis.NetworkInterface{{InterfaceType: apis.InterfaceTypeInterface}}
		}},
		{"connection tracking", func(nc *apis.EC2NodeClass) {
			nc.Spec.ConnectionTracking = &apis.ConnectionTracking{UDPTimeout: ptr(int32(40))}
		}},
		{"cpu options", func(nc *apis.EC2NodeClass) {
			nc.Spec.CPUOptions = &apis.CPUOptions{NestedVirtualization: ptr("enabled")}
		}},
	}
	base := apis.EC2NodeClassHash(baseEC2NodeClass(t))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc := baseEC2NodeClass(t)
			c.mutate(nc)
			assert.NotEqual(t, base, apis.EC2NodeClassHash(nc))
		})
	}
	t.Run("CA bundle", func(t *testing.T) {
		nc := baseEC2NodeClass(t)
		assert.NotEqual(t, base, apis.EC2NodeClassHashWithCABundle(nc, "LS0tLS1CRUdJTi..."))
		assert.Equal(t, base, apis.EC2NodeClassHashWithCABundle(nc, ""))
	})
}

func TestEC2NodeClassHashIgnoresDynamicFields(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*apis.EC2NodeClass)
	}{
		{"subnets", func(nc *apis.EC2NodeClass) { nc.Spec.SubnetSelectorTerms = []apis.SubnetSelectorTerm{{ID: "subnet-9"}} }},
		{"security groups", func(nc *apis.EC2NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms = []apis.SecurityGroupSelectorTerm{{Name: "sg"}}
		}},
		{"capacity reservations", func(nc *apis.EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{ID: "cr-1"}}
		}},
		{"ami version", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "al2023@v20240625" }},
		{"explicit family equal to the alias's", func(nc *apis.EC2NodeClass) { nc.Spec.AMIFamily = ptr(apis.AMIFamilyAL2023) }},
		{"ip prefix count", func(nc *apis.EC2NodeClass) { nc.Spec.IPPrefixCount = ptr(int32(2)) }},
		{"explicit false", func(nc *apis.EC2NodeClass) {
			nc.Spec.DetailedMonitoring = ptr(false)
			nc.Spec.AssociatePublicIPAddress = ptr(false)
		}},
		{"metadata options left to defaults", func(nc *apis.EC2NodeClass) { nc.Spec.MetadataOptions = nil }},
		{"status", func(nc *apis.EC2NodeClass) { nc.Status.InstanceProfile = "p" }},
	}
	base := apis.EC2NodeClassHash(baseEC2NodeClass(t))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc := baseEC2NodeClass(t)
			c.mutate(nc)
			assert.Equal(t, base, apis.EC2NodeClassHash(nc))
		})
	}
}

package provisioning

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// decode reads, defaults and validates manifests, failing the test on any problem.
func decode(t *testing.T, yaml string) apis.Objects {
	t.Helper()
	objs, err := apis.Decode("test.yaml", []byte(yaml))
	require.NoError(t, err)
	require.Empty(t, apis.DefaultAndValidate(objs))
	return objs
}

const nodeClassRef = `
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
`

func intp(v int) *int { return &v }

func TestNodePoolsFrom(t *testing.T) {
	cases := []struct {
		name string
		yaml string
		want []scheduling.NodePool
	}{
		{
			name: "minimal pool gets weight 0 and the node class label",
			yaml: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  template:
    spec:
      requirements:
        - {key: karpenter.sh/capacity-type, operator: In, values: [spot]}` + nodeClassRef,
			want: []scheduling.NodePool{{
				Name:         "default",
				Labels:       map[string]string{scheduling.LabelEC2NodeClass: "default"},
				Requirements: []scheduling.NodeSelectorRequirement{{Key: scheduling.LabelCapacityType, Operator: scheduling.OpIn, Values: []string{"spot"}}},
			}},
		},
		{
			name: "every field converted",
			yaml: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  weight: 42
  limits: {cpu: "100", nvidia.com/gpu: "8"}
  template:
    metadata:
      labels: {team: ml}
      annotations: {example.com/owner: ml-platform}
    spec:
      taints:
        - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
      startupTaints:
        - {key: node.example.com/warming, effect: NoExecute}
      requirements:
        - {key: node.kubernetes.io/instance-type, operator: Exists, minValues: 3}
        - {key: karpenter.k8s.aws/instance-family, operator: NotIn, values: [g4dn]}
        - {key: karpenter.k8s.aws/instance-cpu, operator: Gt, values: ["3"]}
        - {key: karpenter.k8s.aws/instance-memory, operator: Lte, values: ["262144"]}
        - {key: karpenter.k8s.aws/instance-gpu-count, operator: Gte, values: ["1"]}
        - {key: karpenter.k8s.aws/instance-local-nvme, operator: DoesNotExist}` + nodeClassRef,
			want: []scheduling.NodePool{{
				Name:          "gpu",
				Weight:        42,
				Labels:        map[string]string{"team": "ml", scheduling.LabelEC2NodeClass: "default"},
				Annotations:   map[string]string{"example.com/owner": "ml-platform"},
				Taints:        []corev1.Taint{{Key: "nvidia.com/gpu", Value: "true", Effect: corev1.TaintEffectNoSchedule}},
				StartupTaints: []corev1.Taint{{Key: "node.example.com/warming", Effect: corev1.TaintEffectNoExecute}},
				Requirements: []scheduling.NodeSelectorRequirement{
					{Key: scheduling.LabelInstanceType, Operator: scheduling.OpExists, MinValues: intp(3)},
					{Key: scheduling.LabelInstanceFamily, Operator: scheduling.OpNotIn, Values: []string{"g4dn"}},
					{Key: scheduling.LabelInstanceCPU, Operator: scheduling.OpGt, Values: []string{"3"}},
					{Key: scheduling.LabelInstanceMemory, Operator: scheduling.OpLte, Values: []string{"262144"}},
					{Key: scheduling.LabelInstanceGPUCount, Operator: scheduling.OpGte, Values: []string{"1"}},
					{Key: scheduling.LabelInstanceLocalNVMe, Operator: scheduling.OpDoesNotExist},
				},
				Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100"), "nvidia.com/gpu": resource.MustParse("8")},
			}},
		},
		{
			name: "sorted by name",
			yaml: `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: zeta}
spec:
  template:
    spec:
      requirements: []` + nodeClassRef + `
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: alpha}
spec:
  template:
    spec:
      requirements: []` + nodeClassRef,
			want: []scheduling.NodePool{
				{Name: "alpha", Labels: map[string]string{scheduling.LabelEC2NodeClass: "default"}},
				{Name: "zeta", Labels: map[string]string{scheduling.LabelEC2NodeClass: "default"}},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NodePoolsFrom(decode(t, tc.yaml))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNodePoolsFromSolves(t *testing.T) {
	// A converted pool is one the scheduler accepts: its requirements parse and its limits are read.
	pools, err := NodePoolsFrom(decode(t, `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: default}
spec:
  limits: {cpu: "4"}
  template:
    spec:
      requirements:
        - {key: karpenter.k8s.aws/instance-cpu, operator: Lte, values: ["8"]}`+nodeClassRef))
	require.NoError(t, err)
	_, err = scheduling.Solve(scheduling.Input{NodePools: pools})
	assert.NoError(t, err)
}

func TestNodePoolsFromLeavesOutStaticPools(t *testing.T) {
	// Validation refuses static NodePools for now; the converter still never provisions for one.
	replicas := int64(3)
	objs := apis.Objects{NodePools: []*apis.NodePool{{}, {}}}
	objs.NodePools[0].Name, objs.NodePools[0].Spec.Replicas = "fixed", &replicas
	objs.NodePools[1].Name = "dynamic"
	got, err := NodePoolsFrom(objs)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "dynamic", got[0].Name)
}

func TestNodePoolsFromRejectsWhatTheSchedulerCannotParse(t *testing.T) {
	// Validation would refuse this; the converter must still not hand it on silently.
	objs := apis.Objects{NodePools: []*apis.NodePool{{}}}
	objs.NodePools[0].Name = "broken"
	objs.NodePools[0].Spec.Template.Spec.Requirements = []apis.NodeSelectorRequirementWithMinValues{
		{Key: scheduling.LabelInstanceCPU, Operator: corev1.NodeSelectorOpGt, Values: []string{"four"}},
	}
	_, err := NodePoolsFrom(objs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NodePool broken: spec.template.spec.requirements[0]")
}

const nodeClassHead = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata: {name: default}
spec:
  role: NodeRole
  subnetSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
  securityGroupSelectorTerms: [{tags: {karpenter.sh/discovery: demo}}]
`

func int32p(v int32) *int32 { return &v }

func TestNodeClassConfigFrom(t *testing.T) {
	gib := int64(1) << 30
	cases := []struct {
		name string
		spec string
		want scheduling.NodeClassConfig
	}{
		{
			name: "alias only",
			spec: "  amiSelectorTerms: [{alias: al2023@latest}]\n",
			want: scheduling.NodeClassConfig{AMIFamily: scheduling.AMIFamilyAL2023},
		},
		{
			name: "kubelet settings",
			spec: `  amiSelectorTerms: [{alias: bottlerocket@latest}]
  kubelet:
    maxPods: 110
    podsPerCore: 4
    kubeReserved: {cpu: 200m, memory: 1Gi, pid: "1000"}
    systemReserved: {memory: 512Mi, ephemeral-storage: 1Gi}
    evictionHard: {memory.available: 5%, nodefs.available: 10%}
`,
			want: scheduling.NodeClassConfig{AMIFamily: scheduling.AMIFamilyBottlerocket, Kubelet: scheduling.KubeletConfig{
				MaxPods: int32p(110), PodsPerCore: int32p(4),
				KubeReserved:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("200m"), corev1.ResourceMemory: resource.MustParse("1Gi")},
				SystemReserved: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourceEphemeralStorage: resource.MustParse("1Gi")},
				EvictionHard:   map[string]string{"memory.available": "5%", "nodefs.available": "10%"},
			}},
		},
		{
			name: "root volume marked rootVolume",
			spec: `  amiSelectorTerms: [{alias: al2023@latest}]
  blockDeviceMappings:
    - {deviceName: /dev/xvda, ebs: {volumeSize: 50Gi}}
    - {deviceName: /dev/xvdb, rootVolume: true, ebs: {volumeSize: 200Gi}}
`,
			want: scheduling.NodeClassConfig{AMIFamily: scheduling.AMIFamilyAL2023, RootVolumeBytes: 200 * gib},
		},
		{
			name: "root volume by the family's device",
			spec: `  amiSelectorTerms: [{alias: bottlerocket@latest}]
  blockDeviceMappings:
    - {deviceName: /dev/xvda, ebs: {volumeSize: 4Gi}}
    - {deviceName: /dev/xvdb, ebs: {volumeSize: 80Gi}}
`,
			want: scheduling.NodeClassConfig{AMIFamily: scheduling.AMIFamilyBottlerocket, RootVolumeBytes: 80 * gib},
		},
		{
			name: "custom family takes the last mapping",
			spec: `  amiFamily: Custom
  amiSelectorTerms: [{id: ami-0123456789abcdef0}]
  blockDeviceMappings:
    - {deviceName: /dev/sda1, ebs: {volumeSize: 30Gi}}
    - {deviceName: /dev/sdb, ebs: {volumeSize: 60Gi}}
`,
			want: scheduling.NodeClassConfig{AMIFamily: scheduling.AMIFamilyCustom, RootVolumeBytes: 60 * gib},
		},
		{
			name: "instance store RAID0",
			spec: `  amiSelectorTerms: [{alias: al2@latest}]
  instanceStorePolicy: RAID0
`,
			want: scheduling.NodeClassConfig{AMIFamily: scheduling.AMIFamilyAL2, InstanceStoreRAID0: true},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			objs := decode(t, nodeClassHead+tc.spec)
			require.Len(t, objs.EC2NodeClasses, 1)
			got, err := NodeClassConfigFrom(objs.EC2NodeClasses[0])
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestNodeClassConfigChangesAllocatable(t *testing.T) {
	objs := decode(t, nodeClassHead+"  amiSelectorTerms: [{alias: al2023@latest}]\n  kubelet: {maxPods: 20}\n")
	cfg, err := NodeClassConfigFrom(objs.EC2NodeClasses[0])
	require.NoError(t, err)
	info := scheduling.InstanceInfo{Name: "m5.xlarge", VCPUs: 4, MemoryMiB: 16384, Architecture: "amd64", MaxENIs: 4, IPv4PerENI: 15}
	it, err := scheduling.NewAWSInstanceType(info, cfg, nil)
	require.NoError(t, err)
	assert.Equal(t, int64(20), it.Allocatable.Pods)
}

func TestNodeClassConfigFromErrors(t *testing.T) {
	_, err := NodeClassConfigFrom(nil)
	assert.Error(t, err)

	nc := &apis.EC2NodeClass{}
	nc.Name = "bad"
	size := "lots"
	nc.Spec.BlockDeviceMappings = []*apis.BlockDeviceMapping{{RootVolume: true, EBS: &apis.BlockDevice{VolumeSize: &size}}}
	_, err = NodeClassConfigFrom(nc)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `EC2NodeClass bad: root volume size "lots"`)
}

package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

const baseNodePoolYAML = `
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: base
spec:
  template:
    metadata:
      labels: {team: a}
    spec:
      requirements:
        - key: karpenter.sh/capacity-type
          operator: In
          values: ["spot", "on-demand"]
        - key: karpenter.k8s.aws/instance-category
          operator: In
          values: ["c", "m", "r"]
          minValues: 2
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: base}
      taints:
        - {key: example.com/dedicated, value: a, effect: NoSchedule}
      startupTaints:
        - {key: example.com/agent-not-ready, effect: NoExecute}
      terminationGracePeriod: 1h
  disruption:
    budgets:
      - nodes: 10%
      - nodes: "0"
        schedule: "0 9 * * 1-5"
        duration: 8h
        reasons: [Drifted]
  limits:
    cpu: "100"
  weight: 5
`

const baseEC2NodeClassYAML = `
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: base
spec:
  role: KarpenterNodeRole-test
  subnetSelectorTerms:
    - tags: {karpenter.sh/discovery: test}
  securityGroupSelectorTerms:
    - tags: {karpenter.sh/discovery: test}
  amiSelectorTerms:
    - alias: al2023@latest
  blockDeviceMappings:
    - deviceName: /dev/xvda
      rootVolume: true
      ebs: {volumeSize: 50Gi, volumeType: gp3}
  kubelet:
    maxPods: 110
    evictionHard: {memory.available: 5%}
  tags: {team: a}
`

// decodeOne decodes a manifest that must hold exactly one object and no errors.
func decodeOne(t *testing.T, manifest string) apis.Objects {
	t.Helper()
	objs, err := apis.Decode("test.yaml", []byte(manifest))
	require.NoError(t, err)
	require.Equal(t, 1, len(objs.NodePools)+len(objs.EC2NodeClasses))
	return objs
}

func baseNodePool(t *testing.T) *apis.NodePool {
	t.Helper()
	np := decodeOne(t, baseNodePoolYAML).NodePools[0]
	np.SetDefaults()
	require.Empty(t, apis.ValidateNodePool(np), "the base NodePool must be valid")
	return np
}

func baseEC2NodeClass(t *testing.T) *apis.EC2NodeClass {
	t.Helper()
	nc := decodeOne(t, baseEC2NodeClassYAML).EC2NodeClasses[0]
	nc.SetDefaults()
	require.Empty(t, apis.ValidateEC2NodeClass(nc), "the base EC2NodeClass must be valid")
	return nc
}

// invalidCase is one way to break an object and the error that must follow.
type invalidCase[T any] struct {
	name   string
	mutate func(*T)
	path   string
	typ    field.ErrorType
}

// assertHasError checks that errs hold an error at path of type typ.
func assertHasError(t *testing.T, errs field.ErrorList, path string, typ field.ErrorType) {
	t.Helper()
	for _, e := range errs {
		if e.Field == path && e.Type == typ {
			return
		}
	}
	assert.Failf(t, "expected error not found", "want %s at %q; got:\n%s", typ, path, errs.ToAggregate())
}

func ptr[T any](v T) *T { return &v }

package apis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestRestrictedLabelReason(t *testing.T) {
	cases := []struct {
		key        string
		restricted bool
	}{
		{"team", false},
		{"example.com/team", false},
		{"karpenter.sh/capacity-type", false},
		{"karpenter.k8s.aws/instance-family", false},
		{"topology.k8s.aws/zone-id", false},
		{"kubernetes.io/arch", false},
		{"beta.kubernetes.io/arch", false},
		{"failure-domain.beta.kubernetes.io/zone", false},
		{"karpenter.sh/nodepool", true},
		{"kubernetes.io/hostname", true},
		{"karpenter.sh/initialized", true},
		{"sub.karpenter.sh/x", true},
		{"karpenter.k8s.aws/ec2nodeclass", true},
		{"karpenter.k8s.aws/anything", true},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			assert.Equal(t, c.restricted, apis.RestrictedLabelReason(c.key) != "", apis.RestrictedLabelReason(c.key))
		})
	}
}

func TestLabelDomain(t *testing.T) {
	assert.Equal(t, "karpenter.sh", apis.LabelDomain("karpenter.sh/nodepool"))
	assert.Equal(t, "", apis.LabelDomain("team"))
}

func TestKarpenterOwnedKeys(t *testing.T) {
	assert.Equal(t, "karpenter.sh/disrupted", apis.DisruptedNoScheduleTaint.Key)
	assert.Equal(t, "NoSchedule", string(apis.DisruptedNoScheduleTaint.Effect))
	assert.Equal(t, "karpenter.sh/unregistered", apis.UnregisteredNoExecuteTaint.Key)
	assert.Equal(t, "NoExecute", string(apis.UnregisteredNoExecuteTaint.Effect))
	assert.Equal(t, "karpenter.sh/do-not-disrupt", apis.DoNotDisruptAnnotationKey)
	assert.Equal(t, "karpenter.sh/termination", apis.TerminationFinalizer)
	assert.Equal(t, "node.kubernetes.io/exclude-from-external-load-balancers", apis.ExcludeFromLoadBalancersLabelKey)
	assert.Equal(t, "karpenter.k8s.aws/ec2nodeclass-hash-version", apis.EC2NodeClassHashVersionAnnotationKey)
}

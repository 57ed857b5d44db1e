package launchtemplate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/apis"
)

func TestRegisterTaintsAddUnregisteredOnce(t *testing.T) {
	tests := []struct {
		name          string
		taints, start []corev1.Taint
		want          []string
	}{
		{"none", nil, nil, []string{"karpenter.sh/unregistered:NoExecute"}},
		{"pool and startup taints first", []corev1.Taint{{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule}},
			[]corev1.Taint{{Key: "b", Effect: corev1.TaintEffectNoExecute}},
			[]string{"a=1:NoSchedule", "b:NoExecute", "karpenter.sh/unregistered:NoExecute"}},
		{"already present", []corev1.Taint{apis.UnregisteredNoExecuteTaint}, nil, []string{"karpenter.sh/unregistered:NoExecute"}},
		{"duplicates keep the first", []corev1.Taint{{Key: "a", Value: "1", Effect: corev1.TaintEffectNoSchedule}},
			[]corev1.Taint{{Key: "a", Value: "2", Effect: corev1.TaintEffectNoSchedule}, {Key: "a", Effect: corev1.TaintEffectNoExecute}},
			[]string{"a=1:NoSchedule", "a:NoExecute", "karpenter.sh/unregistered:NoExecute"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, taint := range (Options{Taints: tt.taints, StartupTaints: tt.start}).registerTaints() {
				got = append(got, taint.ToString())
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNodeLabelsLeaveOutWhatTheKubeletMayNotSet(t *testing.T) {
	o := Options{Labels: map[string]string{
		"karpenter.sh/nodepool": "p", "team": "x", "example.com/a": "b",
		"kubernetes.io/arch": "amd64", "node.kubernetes.io/instance-type": "m5.large", "k8s.io/x": "y", "sub.k8s.io/y": "z",
		"node-restriction.kubernetes.io/z": "w",
	}}
	assert.Equal(t, "--node-labels=example.com/a=b,karpenter.sh/nodepool=p,team=x", o.labelsFlag())
	assert.Empty(t, Options{}.labelsFlag())
}

func TestKubeletResolvesMaxPodsAndClusterDNS(t *testing.T) {
	o := Options{Cluster: Cluster{DNSIP: "10.0.0.10"}, KubeletConfig: kubelet(t, map[string]any{"maxPods": 20})}
	k, err := o.kubelet()
	require.NoError(t, err)
	assert.Equal(t, int32(20), *k.MaxPods)
	assert.Equal(t, []string{"10.0.0.10"}, k.ClusterDNS, "the cluster DNS address fills an unset clusterDNS")

	o.MaxPods = ptr(int32(58))
	o.KubeletConfig = kubelet(t, map[string]any{"maxPods": 20, "clusterDNS": []string{"169.254.20.10"}})
	k, err = o.kubelet()
	require.NoError(t, err)
	assert.Equal(t, int32(58), *k.MaxPods, "Options.MaxPods wins")
	assert.Equal(t, []string{"169.254.20.10"}, k.ClusterDNS, "the node class's clusterDNS wins")
	raw, err := o.rawKubelet()
	require.NoError(t, err)
	assert.JSONEq(t, "58", string(raw["maxPods"]))
	assert.JSONEq(t, `["169.254.20.10"]`, string(raw["clusterDNS"]))
	assert.JSONEq(t, "20", string(o.KubeletConfig["maxPods"]), "the caller's map is not changed")
}

package apis_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// kubelet builds a KubeletConfiguration from a JSON object.
func kubelet(t *testing.T, doc string) apis.KubeletConfiguration {
	t.Helper()
	var kc apis.KubeletConfiguration
	require.NoError(t, json.Unmarshal([]byte(doc), &kc))
	return kc
}

func TestValidateKubeletRejects(t *testing.T) {
	cases := []struct {
		name, doc, path string
		typ             field.ErrorType
	}{
		{"field nodewright does not pass through", `{"registerWithTaints": []}`, "spec.kubelet.registerWithTaints", field.ErrorTypeForbidden},
		{"unknown field", `{"maxPodz": 10}`, "spec.kubelet.maxPodz", field.ErrorTypeForbidden},
		{"maxPods expression", `{"maxPods": "max_pods * 2"}`, "spec.kubelet.maxPods", field.ErrorTypeForbidden},
		{"maxPods negative", `{"maxPods": -1}`, "spec.kubelet.maxPods", field.ErrorTypeInvalid},
		{"maxPods not an integer", `{"maxPods": 1.5}`, "spec.kubelet.maxPods", field.ErrorTypeInvalid},
		{"podsPerCore negative", `{"podsPerCore": -2}`, "spec.kubelet.podsPerCore", field.ErrorTypeInvalid},
		{"clusterDNS not a list", `{"clusterDNS": "10.0.0.10"}`, "spec.kubelet.clusterDNS", field.ErrorTypeInvalid},
		{"clusterDNS not an IP", `{"clusterDNS": ["dns.local"]}`, "spec.kubelet.clusterDNS[0]", field.ErrorTypeInvalid},
		{"systemReserved unknown resource", `{"systemReserved": {"gpu": "1"}}`, "spec.kubelet.systemReserved[gpu]", field.ErrorTypeNotSupported},
		{"kubeReserved negative", `{"kubeReserved": {"cpu": "-100m"}}`, "spec.kubelet.kubeReserved[cpu]", field.ErrorTypeInvalid},
		{"kubeReserved expression", `{"kubeReserved": {"memory": "memory_mib * 0.1"}}`, "spec.kubelet.kubeReserved[memory]", field.ErrorTypeForbidden},
		{"kubeReserved not a map", `{"kubeReserved": ["cpu"]}`, "spec.kubelet.kubeReserved", field.ErrorTypeInvalid},
		{"evictionHard unknown signal", `{"evictionHard": {"memory.free": "5%"}}`, "spec.kubelet.evictionHard[memory.free]", field.ErrorTypeNotSupported},
		{"evictionHard percentage above 100", `{"evictionHard": {"memory.available": "101%"}}`, "spec.kubelet.evictionHard[memory.available]", field.ErrorTypeInvalid},
		{"evictionHard not a quantity", `{"evictionHard": {"memory.available": "lots"}}`, "spec.kubelet.evictionHard[memory.available]", field.ErrorTypeInvalid},
		{"evictionSoft negative", `{"evictionSoft": {"memory.available": "-1Gi"}, "evictionSoftGracePeriod": {"memory.available": "1m"}}`, "spec.kubelet.evictionSoft[memory.available]", field.ErrorTypeInvalid},
		{"evictionSoft without grace period", `{"evictionSoft": {"memory.available": "1Gi"}}`, "spec.kubelet.evictionSoftGracePeriod[memory.available]", field.ErrorTypeRequired},
		{"grace period without evictionSoft", `{"evictionSoftGracePeriod": {"nodefs.available": "1m"}}`, "spec.kubelet.evictionSoft[nodefs.available]", field.ErrorTypeRequired},
		{"grace period not a duration", `{"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "a minute"}}`, "spec.kubelet.evictionSoftGracePeriod[memory.available]", field.ErrorTypeInvalid},
		{"grace period overflows", `{"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "2562048h"}}`, "spec.kubelet.evictionSoftGracePeriod[memory.available]", field.ErrorTypeInvalid},
		{"grace period negative", `{"evictionSoft": {"memory.available": "1Gi"}, "evictionSoftGracePeriod": {"memory.available": "-1m"}}`, "spec.kubelet.evictionSoftGracePeriod[memory.available]", field.ErrorTypeInvalid},
		{"evictionMaxPodGracePeriod negative", `{"evictionMaxPodGracePeriod": -5}`, "spec.kubelet.evictionMaxPodGracePeriod", field.ErrorTypeInvalid},
		{"image GC high above 100", `{"imageGCHighThresholdPercent": 101}`, "spec.kubelet.imageGCHighThresholdPercent", field.ErrorTypeInvalid},
		{"image GC low negative", `{"imageGCLowThresholdPercent": -1}`, "spec.kubelet.imageGCLowThresholdPercent", field.ErrorTypeInvalid},
		{"image GC high not above low", `{"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 50}`, "spec.kubelet.imageGCHighThresholdPercent", field.ErrorTypeInvalid},
		{"cpuCFSQuota not a boolean", `{"cpuCFSQuota": "yes"}`, "spec.kubelet.cpuCFSQuota", field.ErrorTypeInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assertHasError(t, apis.ValidateKubelet(kubelet(t, c.doc), field.NewPath("spec", "kubelet")), c.path, c.typ)
		})
	}
}

func TestValidateKubeletAcceptsNull(t *testing.T) {
	assert.Empty(t, apis.ValidateKubelet(kubelet(t, `{"maxPods": null, "clusterDNS": null}`), field.NewPath("spec", "kubelet")))
}

func TestKubeletParse(t *testing.T) {
	kc := kubelet(t, `{"maxPods": 58, "clusterDNS": ["10.100.0.10"], "kubeReserved": {"cpu": "100m"}, "cpuCFSQuota": false}`)
	require.Empty(t, apis.ValidateKubelet(kc, field.NewPath("spec", "kubelet")))
	k, err := kc.Parse()
	require.NoError(t, err)
	assert.Equal(t, apis.Kubelet{
		MaxPods:      ptr(int32(58)),
		ClusterDNS:   []string{"10.100.0.10"},
		KubeReserved: map[string]string{"cpu": "100m"},
		CPUCFSQuota:  ptr(false),
	}, k)
}

func TestValidateKubeletDurationMessages(t *testing.T) {
	doc := `{"evictionSoft": {"memory.available": "1Gi", "nodefs.available": "10%%"}, "evictionSoftGracePeriod": {"memory.available": %q, "nodefs.available": "1m30s"}}`
	cases := []struct{ grace, msg string }{
		{"2562048h", `spec.kubelet.evictionSoftGracePeriod[memory.available]: Invalid value: "2562048h": is longer than the longest duration nodewright can time (2562047h47m16s, about 292 years)`},
		{"9999999999999999999ns", `spec.kubelet.evictionSoftGracePeriod[memory.available]: Invalid value: "9999999999999999999ns": is longer than the longest duration nodewright can time (2562047h47m16s, about 292 years)`},
		{"a minute", `spec.kubelet.evictionSoftGracePeriod[memory.available]: Invalid value: "a minute": must be a duration such as 1m30s`},
	}
	for _, c := range cases {
		t.Run(c.grace, func(t *testing.T) {
			errs := apis.ValidateKubelet(kubelet(t, fmt.Sprintf(doc, c.grace)), field.NewPath("spec", "kubelet"))
			require.Len(t, errs, 1)
			assert.Equal(t, c.msg, errs[0].Error())
		})
	}
	assert.Empty(t, apis.ValidateKubelet(kubelet(t, fmt.Sprintf(doc, "2562047h")), field.NewPath("spec", "kubelet")))
}

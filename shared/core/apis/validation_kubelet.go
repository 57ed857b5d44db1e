package apis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Karpenter's spec.kubelet is an open map of upstream KubeletConfiguration fields. Karpenter itself reads
// a handful of them (to compute allocatable capacity and to write them into user data for every AMI
// family); the others it only passes through, for AL2023. Nodewright reads and passes through the same
// handful, with the same rules, and refuses the rest until its user data passes them through.

// Kubelet fields Nodewright reads.
const (
	KubeletClusterDNS                  = "clusterDNS"
	KubeletMaxPods                     = "maxPods"
	KubeletPodsPerCore                 = "podsPerCore"
	KubeletSystemReserved              = "systemReserved"
	KubeletKubeReserved                = "kubeReserved"
	KubeletEvictionHard                = "evictionHard"
	KubeletEvictionSoft                = "evictionSoft"
	KubeletEvictionSoftGracePeriod     = "evictionSoftGracePeriod"
	KubeletEvictionMaxPodGracePeriod   = "evictionMaxPodGracePeriod"
	KubeletImageGCHighThresholdPercent = "imageGCHighThresholdPercent"
	KubeletImageGCLowThresholdPercent  = "imageGCLowThresholdPercent"
	KubeletCPUCFSQuota                 = "cpuCFSQuota"
)

// KubeletFields lists the kubelet fields an EC2NodeClass may set.
var KubeletFields = []string{KubeletClusterDNS, KubeletMaxPods, KubeletPodsPerCore, KubeletSystemReserved,
	KubeletKubeReserved, KubeletEvictionHard, KubeletEvictionSoft, KubeletEvictionSoftGracePeriod,
	KubeletEvictionMaxPodGracePeriod, KubeletImageGCHighThresholdPercent, KubeletImageGCLowThresholdPercent,
	KubeletCPUCFSQuota}

// EvictionSignals are the keys eviction maps accept.
var EvictionSignals = []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available", "imagefs.inodesFree", "pid.available"}

// ReservedResources are the keys kubeReserved and systemReserved accept.
var ReservedResources = []string{"cpu", "memory", "ephemeral-storage", "pid"}

// Kubelet is the typed view of the kubelet fields Nodewright reads.
type Kubelet struct {
	ClusterDNS                  []string          `json:"clusterDNS,omitempty"`
	MaxPods                     *int32            `json:"maxPods,omitempty"`
	PodsPerCore                 *int32            `json:"podsPerCore,omitempty"`
	SystemReserved              map[string]string `json:"systemReserved,omitempty"`
	KubeReserved                map[string]string `json:"kubeReserved,omitempty"`
	EvictionHard                map[string]string `json:"evictionHard,omitempty"`
	EvictionSoft                map[string]string `json:"evictionSoft,omitempty"`
	EvictionSoftGracePeriod     map[string]string `json:"evictionSoftGracePeriod,omitempty"`
	EvictionMaxPodGracePeriod   *int32            `json:"evictionMaxPodGracePeriod,omitempty"`
	ImageGCHighThresholdPercent *int32            `json:"imageGCHighThresholdPercent,omitempty"`
	ImageGCLowThresholdPercent  *int32            `json:"imageGCLowThresholdPercent,omitempty"`
	CPUCFSQuota                 *bool             `json:"cpuCFSQuota,omitempty"`
}

// Parse returns the typed view of a valid kubelet configuration.
func (kc KubeletConfiguration) Parse() (Kubelet, error) {
	var k Kubelet
	if len(kc) == 0 {
		return k, nil
	}
	data, err := json.Marshal(kc)
	if err != nil {
		return k, err
	}
	return k, json.Unmarshal(data, &k)
}

// ValidateKubelet checks spec.kubelet: only the fields Nodewright reads, each of its type, eviction maps
// keyed by signal with percentage or quantity values, soft thresholds paired with grace periods, reserved
// resources that can be reserved and are not negative, percentages within 0–100 with the GC high
// threshold above the low one, and nothing negative that counts. CEL expressions in maxPods,
// kubeReserved and systemReserved (Karpenter's NodeClassCEL gate) are refused as not supported yet.
func ValidateKubelet(kc KubeletConfiguration, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range sortedKeys(kc) {
		if !slices.Contains(KubeletFields, name) {
			errs = append(errs, notSupportedYet(path.Child(name), "kubelet fields other than "+strings.Join(KubeletFields, ", ")))
		}
	}
	if v, ok := kc[KubeletClusterDNS]; ok {
		var ips []string
		if decodeKubeletField(v, &ips, path.Child(KubeletClusterDNS), "a list of IP addresses", &errs) {
			for i, ip := range ips {
				if net.ParseIP(ip) == nil {
					errs = append(errs, field.Invalid(path.Child(KubeletClusterDNS).Index(i), ip, "must be a valid IP address"))
				}
			}
		}
	}
	if v, ok := kc[KubeletMaxPods]; ok {
		if isJSONString(v) {
			errs = append(errs, notSupportedYet(path.Child(KubeletMaxPods), "CEL expressions (Karpenter feature gate NodeClassCEL); give an integer"))
		} else {
			validateKubeletInt(v, path.Child(KubeletMaxPods), 0, -1, &errs)
		}
	}
	validateKubeletInt(kc[KubeletPodsPerCore], path.Child(KubeletPodsPerCore), 0, -1, &errs)
	validateKubeletInt(kc[KubeletEvictionMaxPodGracePeriod], path.Child(KubeletEvictionMaxPodGracePeriod), 0, -1, &errs)
	high, highOK := validateKubeletInt(kc[KubeletImageGCHighThresholdPercent], path.Child(KubeletImageGCHighThresholdPercent), 0, 100, &errs)
	low, lowOK := validateKubeletInt(kc[KubeletImageGCLowThresholdPercent], path.Child(KubeletImageGCLowThresholdPercent), 0, 100, &errs)
	if highOK && lowOK && high <= low {
		errs = append(errs, field.Invalid(path.Child(KubeletImageGCHighThresholdPercent), high,
			fmt.Sprintf("must be greater than imageGCLowThresholdPercent (%d)", low)))
	}
	if v, ok := kc[KubeletCPUCFSQuota]; ok {
		var b bool
		decodeKubeletField(v, &b, path.Child(KubeletCPUCFSQuota), "a boolean", &errs)
	}
	for _, name := range []string{KubeletKubeReserved, KubeletSystemReserved} {
		m, ok := kubeletStringMap(kc, name, path, &errs)
		if !ok {
			continue
		}
		for _, key := range sortedKeys(m) {
			p := path.Child(name).Key(key)
			if !slices.Contains(ReservedResources, key) {
				errs = append(errs, field.NotSupported(p, key, ReservedResources))
			}
			q, err := resource.ParseQuantity(m[key])
			switch {
			case err != nil:
				errs = append(errs, notSupportedYet(p, "CEL expressions (Karpenter feature gate NodeClassCEL); give a resource quantity"))
			case q.Sign() < 0:
				errs = append(errs, field.Invalid(p, m[key], "can't be a negative resource quantity"))
			}
		}
	}
	for _, name := range []string{KubeletEvictionHard, KubeletEvictionSoft} {
		m, ok := kubeletStringMap(kc, name, path, &errs)
		if !ok {
			continue
		}
		for _, key := range sortedKeys(m) {
			p := path.Child(name).Key(key)
			validateEvictionSignal(key, p, &errs)
			if msg := evictionThresholdProblem(m[key]); msg != "" {
				errs = append(errs, field.Invalid(p, m[key], msg))
			}
		}
	}
	grace, _ := kubeletStringMap(kc, KubeletEvictionSoftGracePeriod, path, &errs)
	for _, key := range sortedKeys(grace) {
		p := path.Child(KubeletEvictionSoftGracePeriod).Key(key)
		validateEvictionSignal(key, p, &errs)
		if d, problem := goDurationProblem(grace[key]); problem != "" {
			errs = append(errs, field.Invalid(p, grace[key], problem))
		} else if d < 0 {
			errs = append(errs, field.Invalid(p, grace[key], "can't be a negative duration"))
		}
	}
	soft := map[string]string{}
	if raw, ok := kc[KubeletEvictionSoft]; ok {
		_ = json.Unmarshal(raw, &soft)
	}
	for _, key := range sortedKeys(soft) {
		if _, ok := grace[key]; !ok {
			errs = append(errs, field.Required(path.Child(KubeletEvictionSoftGracePeriod).Key(key), "every evictionSoft signal needs a grace period"))
		}
	}
	for _, key := range sortedKeys(grace) {
		if _, ok := soft[key]; !ok {
			errs = append(errs, field.Required(path.Child(KubeletEvictionSoft).Key(key), "every evictionSoftGracePeriod signal needs a soft eviction threshold"))
		}
	}
	return errs
}

func validateEvictionSignal(key string, p *field.Path, errs *field.ErrorList) {
	if !slices.Contains(EvictionSignals, key) {
		*errs = append(*errs, field.NotSupported(p, key, EvictionSignals))
	}
}

// evictionThresholdProblem says what is wrong with an eviction threshold: it must be a percentage within
// 0–100% or a non-negative quantity.
func evictionThresholdProblem(v string) string {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		if f, err := strconv.ParseFloat(pct, 64); err != nil || f < 0 || f > 100 {
			return "must be a percentage between 0% and 100% or a resource quantity"
		}
		return ""
	}
	q, err := resource.ParseQuantity(v)
	if err != nil {
		return "must be a percentage between 0% and 100% or a resource quantity"
	}
	if q.Sign() < 0 {
		return "can't be a negative resource quantity"
	}
	return ""
}

// decodeKubeletField decodes raw into v, reporting a type error as Invalid.
func decodeKubeletField(raw json.RawMessage, v any, p *field.Path, want string, errs *field.ErrorList) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		*errs = append(*errs, field.Invalid(p, string(raw), "must be "+want))
		return false
	}
	return true
}

// validateKubeletInt checks an optional int32 field against lo and hi (hi < 0: no upper bound).
func validateKubeletInt(raw json.RawMessage, p *field.Path, lo, hi int64, errs *field.ErrorList) (int64, bool) {
	if raw == nil {
		return 0, false
	}
	var n int32
	if !decodeKubeletField(raw, &n, p, "an integer", errs) {
		return 0, false
	}
	v := int64(n)
	switch {
	case hi < 0 && v < lo:
		*errs = append(*errs, field.Invalid(p, v, fmt.Sprintf("must be greater than or equal to %d", lo)))
		return v, false
	case hi >= 0 && (v < lo || v > hi):
		*errs = append(*errs, field.Invalid(p, v, fmt.Sprintf("must be between %d and %d, inclusive", lo, hi)))
		return v, false
	}
	return v, true
}

func kubeletStringMap(kc KubeletConfiguration, name string, path *field.Path, errs *field.ErrorList) (map[string]string, bool) {
	raw, ok := kc[name]
	if !ok {
		return nil, false
	}
	var m map[string]string
	if !decodeKubeletField(raw, &m, path.Child(name), "a map of strings to strings", errs) {
		return nil, false
	}
	return m, true
}

func isJSONString(raw json.RawMessage) bool {
	return bytes.HasPrefix(bytes.TrimSpace(raw), []byte(`"`))
}

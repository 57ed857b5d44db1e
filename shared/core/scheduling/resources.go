package scheduling

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Resources is a compact resource vector: CPU in millicores, memory and ephemeral storage in bytes,
// pods as a count, and extended resources (GPUs, ENIs, ...) as integer counts. The solver works on this
// form instead of resource.Quantity maps because it adds and compares millions of them per solve.
type Resources struct {
	CPU              int64            `json:"cpuMillis,omitempty"`
	Memory           int64            `json:"memoryBytes,omitempty"`
	EphemeralStorage int64            `json:"ephemeralStorageBytes,omitempty"`
	Pods             int64            `json:"pods,omitempty"`
	Extended         map[string]int64 `json:"extended,omitempty"`
}

// ResourcesFromList converts a ResourceList. Hugepages and other resources are kept as extended
// resources by name. Values are clamped to [0, MaxQuantity] (see boundedValue); callers that take
// user input check it first with CheckResourceList, ValidatePodResources or ValidateNodeResources.
func ResourcesFromList(l corev1.ResourceList) Resources {
	var r Resources
	for name, q := range l {
		r.set(name, q)
	}
	return r
}

func (r *Resources) set(name corev1.ResourceName, q resource.Quantity) {
	v := boundedValue(name, q)
	switch name {
	case corev1.ResourceCPU:
		r.CPU = v
	case corev1.ResourceMemory:
		r.Memory = v
	case corev1.ResourceEphemeralStorage:
		r.EphemeralStorage = v
	case corev1.ResourcePods:
		r.Pods = v
	default:
		if v == 0 {
			return
		}
		if r.Extended == nil {
			r.Extended = map[string]int64{}
		}
		r.Extended[string(name)] = v
	}
}

// List converts back to a ResourceList, omitting zero values.
func (r Resources) List() corev1.ResourceList {
	l := corev1.ResourceList{}
	if r.CPU != 0 {
		l[corev1.ResourceCPU] = *resource.NewMilliQuantity(r.CPU, resource.DecimalSI)
	}
	if r.Memory != 0 {
		l[corev1.ResourceMemory] = *resource.NewQuantity(r.Memory, resource.BinarySI)
	}
	if r.EphemeralStorage != 0 {
		l[corev1.ResourceEphemeralStorage] = *resource.NewQuantity(r.EphemeralStorage, resource.BinarySI)
	}
	if r.Pods != 0 {
		l[corev1.ResourcePods] = *resource.NewQuantity(r.Pods, resource.DecimalSI)
	}
	for k, v := range r.Extended {
		if v != 0 {
			l[corev1.ResourceName(k)] = *resource.NewQuantity(v, resource.DecimalSI)
		}
	}
	return l
}

// Add returns r + o.
func (r Resources) Add(o Resources) Resources {
	out := Resources{CPU: r.CPU + o.CPU, Memory: r.Memory + o.Memory, EphemeralStorage: r.EphemeralStorage + o.EphemeralStorage, Pods: r.Pods + o.Pods}
	out.Extended = mergeExtended(r.Extended, o.Extended, func(a, b int64) int64 { return a + b })
	return out
}

// Sub returns r − o; values may become negative.
func (r Resources) Sub(o Resources) Resources {
	out := Resources{CPU: r.CPU - o.CPU, Memory: r.Memory - o.Memory, EphemeralStorage: r.EphemeralStorage - o.EphemeralStorage, Pods: r.Pods - o.Pods}
	out.Extended = mergeExtended(r.Extended, o.Extended, func(a, b int64) int64 { return a - b })
	return out
}

// Max returns the element-wise maximum of r and o.
func (r Resources) Max(o Resources) Resources {
	out := Resources{CPU: max(r.CPU, o.CPU), Memory: max(r.Memory, o.Memory), EphemeralStorage: max(r.EphemeralStorage, o.EphemeralStorage), Pods: max(r.Pods, o.Pods)}
	out.Extended = mergeExtended(r.Extended, o.Extended, func(a, b int64) int64 { return max(a, b) })
	return out
}

// Fits reports whether r ≤ capacity in every dimension. A resource absent from capacity counts as zero.
func (r Resources) Fits(capacity Resources) bool {
	if r.CPU > capacity.CPU || r.Memory > capacity.Memory || r.EphemeralStorage > capacity.EphemeralStorage || r.Pods > capacity.Pods {
		return false
	}
	if len(r.Extended) == 0 {
		return true
	}
	for k, v := range r.Extended {
		if v > capacity.Extended[k] {
			return false
		}
	}
	return true
}

// fitsWith reports whether r + extra fits capacity, as r.Add(extra).Fits(capacity) does, without
// building the sum (a hot path of the solver).
func (r Resources) fitsWith(extra, capacity Resources) bool {
	if r.CPU+extra.CPU > capacity.CPU || r.Memory+extra.Memory > capacity.Memory ||
		r.EphemeralStorage+extra.EphemeralStorage > capacity.EphemeralStorage || r.Pods+extra.Pods > capacity.Pods {
		return false
	}
	for k, v := range r.Extended {
		if v+extra.Extended[k] > capacity.Extended[k] {
			return false
		}
	}
	for k, v := range extra.Extended {
		if _, ok := r.Extended[k]; !ok && v > capacity.Extended[k] {
			return false
		}
	}
	return true
}

// Exceeding names the resources where r > capacity, sorted.
func (r Resources) Exceeding(capacity Resources) []string {
	var out []string
	if r.CPU > capacity.CPU {
		out = append(out, string(corev1.ResourceCPU))
	}
	if r.EphemeralStorage > capacity.EphemeralStorage {
		out = append(out, string(corev1.ResourceEphemeralStorage))
	}
	if r.Memory > capacity.Memory {
		out = append(out, string(corev1.ResourceMemory))
	}
	if r.Pods > capacity.Pods {
		out = append(out, string(corev1.ResourcePods))
	}
	for k, v := range r.Extended {
		if v > capacity.Extended[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// IsZero reports whether every value is zero.
func (r Resources) IsZero() bool {
	if r.CPU != 0 || r.Memory != 0 || r.EphemeralStorage != 0 || r.Pods != 0 {
		return false
	}
	for _, v := range r.Extended {
		if v != 0 {
			return false
		}
	}
	return true
}

// String renders the non-zero values, e.g. "cpu=1500m memory=2Gi pods=3".
func (r Resources) String() string {
	var parts []string
	if r.CPU != 0 {
		parts = append(parts, "cpu="+resource.NewMilliQuantity(r.CPU, resource.DecimalSI).String())
	}
	if r.Memory != 0 {
		parts = append(parts, "memory="+resource.NewQuantity(r.Memory, resource.BinarySI).String())
	}
	if r.EphemeralStorage != 0 {
		parts = append(parts, "ephemeral-storage="+resource.NewQuantity(r.EphemeralStorage, resource.BinarySI).String())
	}
	if r.Pods != 0 {
		parts = append(parts, fmt.Sprintf("pods=%d", r.Pods))
	}
	for _, k := range sortedKeys(r.Extended) {
		if r.Extended[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s=%d", k, r.Extended[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

func mergeExtended(a, b map[string]int64, f func(a, b int64) int64) map[string]int64 {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	out := make(map[string]int64, len(a)+len(b))
	for k, v := range a {
		out[k] = f(v, b[k])
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			out[k] = f(0, v)
		}
	}
	return out
}

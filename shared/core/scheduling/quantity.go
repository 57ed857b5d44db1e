package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxQuantity bounds every resource value the solver accepts, in its own units (millicores for CPU,
// bytes for memory and storage, counts otherwise): 2^53, about 9·10^12 cores or 8 PiB. Any real
// request or capacity is many orders of magnitude below it, every value up to it is exact as a float64
// (the catalog file writes MiB as floats), and 1,024 such values still add up without overflowing
// int64, so sums over a node's pods stay exact.
const MaxQuantity int64 = 1 << 53

// quantityScale is the unit a resource is counted in: CPU in millicores, everything else in units.
func quantityScale(name corev1.ResourceName) resource.Scale {
	if name == corev1.ResourceCPU {
		return resource.Milli
	}
	return 0
}

// maxQuantityString is MaxQuantity as a quantity of the named resource: "9007199254740992m" of CPU,
// "8Pi" of memory and storage.
func maxQuantityString(name corev1.ResourceName) string {
	switch name {
	case corev1.ResourceCPU:
		return resource.NewMilliQuantity(MaxQuantity, resource.DecimalSI).String()
	case corev1.ResourceMemory, corev1.ResourceEphemeralStorage:
		return resource.NewQuantity(MaxQuantity, resource.BinarySI).String()
	}
	return resource.NewQuantity(MaxQuantity, resource.DecimalSI).String()
}

// maxMillis and maxUnits are MaxQuantity as quantities, for comparisons.
var (
	maxMillis = *resource.NewMilliQuantity(MaxQuantity, resource.DecimalSI)
	maxUnits  = *resource.NewQuantity(MaxQuantity, resource.DecimalSI)
)

// CheckQuantity says why q cannot be a value of the named resource: it is negative, or larger than
// MaxQuantity in the solver's unit (which also catches values that would overflow int64 and wrap).
func CheckQuantity(name corev1.ResourceName, q resource.Quantity) error {
	if q.Sign() < 0 {
		return fmt.Errorf("%s is negative", q.String())
	}
	if !withinMax(name, q) {
		return fmt.Errorf("%s is too large (at most %s)", q.String(), maxQuantityString(name))
	}
	return nil
}

func withinMax(name corev1.ResourceName, q resource.Quantity) bool {
	if name == corev1.ResourceCPU {
		return q.Cmp(maxMillis) <= 0
	}
	return q.Cmp(maxUnits) <= 0
}

// CheckResourceList checks every quantity of l with CheckQuantity and names the first bad one, in name
// order, as field.name (e.g. "resources.requests.cpu: -1 is negative").
func CheckResourceList(field string, l corev1.ResourceList) error {
	var first corev1.ResourceName
	var firstErr error
	for name, q := range l {
		if err := CheckQuantity(name, q); err != nil && (firstErr == nil || name < first) {
			first, firstErr = name, err
		}
	}
	if firstErr != nil {
		return fmt.Errorf("%s.%s: %w", field, first, firstErr)
	}
	return nil
}

// ValidatePodResources checks the requests and limits of every container and init container and the
// pod overhead, and that the sum of what they request stays within MaxQuantity, so that PodRequests
// (whose init-container peak is at most that sum) cannot overflow. The error names the container and
// the field. It allocates nothing for a valid pod without extended resources: the solver calls it for
// every pod.
func ValidatePodResources(pod *corev1.Pod) error {
	var total podTotal
	for _, cs := range []struct {
		kind string
		list []corev1.Container
	}{{"container", pod.Spec.Containers}, {"init container", pod.Spec.InitContainers}} {
		for i := range cs.list {
			c := &cs.list[i]
			if err := CheckResourceList("resources.requests", c.Resources.Requests); err != nil {
				return fmt.Errorf("%s %s: %w", cs.kind, c.Name, err)
			}
			if err := CheckResourceList("resources.limits", c.Resources.Limits); err != nil {
				return fmt.Errorf("%s %s: %w", cs.kind, c.Name, err)
			}
			for name, q := range c.Resources.Requests {
				total.add(name, q)
			}
			for name, q := range c.Resources.Limits {
				if _, ok := c.Resources.Requests[name]; !ok {
					total.add(name, q)
				}
			}
		}
	}
	if err := CheckResourceList("overhead", pod.Spec.Overhead); err != nil {
		return err
	}
	for name, q := range pod.Spec.Overhead {
		total.add(name, q)
	}
	limit := Resources{CPU: MaxQuantity, Memory: MaxQuantity, EphemeralStorage: MaxQuantity, Pods: MaxQuantity}
	if len(total.sum.Extended) > 0 {
		limit.Extended = map[string]int64{}
		for k := range total.sum.Extended {
			limit.Extended[k] = MaxQuantity
		}
	}
	if over := total.sum.Exceeding(limit); len(over) > 0 {
		name := corev1.ResourceName(over[0])
		return fmt.Errorf("requests of all containers and overhead add up to more than %s of %s", maxQuantityString(name), name)
	}
	return nil
}

// podTotal adds a pod's requests, saturating just above MaxQuantity.
type podTotal struct {
	sum Resources
}

func (t *podTotal) add(name corev1.ResourceName, q resource.Quantity) {
	v := boundedValue(name, q)
	var cur *int64
	switch name {
	case corev1.ResourceCPU:
		cur = &t.sum.CPU
	case corev1.ResourceMemory:
		cur = &t.sum.Memory
	case corev1.ResourceEphemeralStorage:
		cur = &t.sum.EphemeralStorage
	case corev1.ResourcePods:
		cur = &t.sum.Pods
	default:
		if t.sum.Extended == nil {
			t.sum.Extended = map[string]int64{}
		}
		t.sum.Extended[string(name)] = min(t.sum.Extended[string(name)]+v, MaxQuantity+1)
		return
	}
	// Both terms are at most MaxQuantity+1, so the sum cannot overflow.
	*cur = min(*cur+v, MaxQuantity+1)
}

// ValidateNodeResources checks a Node's status.capacity and status.allocatable.
func ValidateNodeResources(node *corev1.Node) error {
	if err := CheckResourceList("status.capacity", node.Status.Capacity); err != nil {
		return err
	}
	return CheckResourceList("status.allocatable", node.Status.Allocatable)
}

// boundedValue is q in the resource's unit, clamped to [0, MaxQuantity]. Inputs that reach the solver
// unchecked (objects read from the cluster) thus never wrap around: an overflowing request counts as
// the largest one and fits nowhere, instead of becoming 0 or negative.
func boundedValue(name corev1.ResourceName, q resource.Quantity) int64 {
	if q.Sign() <= 0 {
		return 0
	}
	if !withinMax(name, q) {
		return MaxQuantity
	}
	return q.ScaledValue(quantityScale(name))
}

// maxUsed caps sums of requests (PodRequests, a node's bound pods). Each term is at most maxUsed, so a
// sum capped after every addition never overflows int64, however many containers or pods it adds.
const maxUsed = 1 << 62

// clampedTo caps every value of r at limit. It changes r's Extended map in place: call it on fresh sums.
func (r Resources) clampedTo(limit int64) Resources {
	r.CPU, r.Memory, r.EphemeralStorage, r.Pods = min(r.CPU, limit), min(r.Memory, limit), min(r.EphemeralStorage, limit), min(r.Pods, limit)
	for k, v := range r.Extended {
		r.Extended[k] = min(v, limit)
	}
	return r
}

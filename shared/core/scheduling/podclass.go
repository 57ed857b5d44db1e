package scheduling

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podClass is a set of pods the solver treats as interchangeable: same namespace, same controller and
// the same scheduling-relevant spec. Placement decisions and rejections are computed once per class.
type podClass struct {
	key       string
	pods      []*corev1.Pod
	requests  Resources
	hostPorts []HostPort
	tols      []corev1.Toleration
	steps     []classStep
	invalid   *Rejection
	// next indexes the first pod not yet placed or failed; step the current relaxation step.
	next, step int

	// attach are the CSI attachments of the pods that have any, when some node limits them
	// (volumelimits.go).
	attach map[*corev1.Pod][]attachment
	// offSettling is set for pods settling nodes do not take (SolveJob.Settling): they never share a
	// class with pods that settling nodes take, so what one pod of a class is refused holds for all.
	offSettling bool
}

// classStep is one relaxation step with a signature that identifies its requirements, the topology
// preferences it still enforces, and its topology (nil when none concerns the class).
type classStep struct {
	Attempt
	sig string
	// base is sig before topology narrowed the step to a zone.
	base string
	soft softTerms
	topo *classTopology
	// own are the requirements of the pod's own node selection, without its volumes', for
	// nodeAffinityPolicy Honor (volume topology does not narrow spread domains).
	own Requirements
}

// classKey identifies pods with the same scheduling behaviour.
func classKey(pod *corev1.Pod, requests Resources) string {
	var b strings.Builder
	b.WriteString(pod.Namespace)
	b.WriteByte('|')
	if ref := metav1.GetControllerOf(pod); ref != nil {
		b.WriteString(ref.Kind + "/" + string(ref.UID) + "/" + ref.Name)
	} else {
		// Pods without a controller are never merged.
		b.WriteString("pod/" + pod.Name + "/" + string(pod.UID))
	}
	b.WriteByte('|')
	b.WriteString(requests.String())
	spec := struct {
		NodeSelector map[string]string                 `json:"ns,omitempty"`
		Affinity     *corev1.Affinity                  `json:"a,omitempty"`
		Tolerations  []corev1.Toleration               `json:"t,omitempty"`
		Spread       []corev1.TopologySpreadConstraint `json:"s,omitempty"`
		Ports        []HostPort                        `json:"p,omitempty"`
		Labels       map[string]string                 `json:"l,omitempty"`
	}{pod.Spec.NodeSelector, pod.Spec.Affinity, pod.Spec.Tolerations, pod.Spec.TopologySpreadConstraints, PodHostPorts(pod), pod.Labels}
	if spec.NodeSelector != nil || spec.Affinity != nil || spec.Tolerations != nil || spec.Spread != nil || spec.Ports != nil || spec.Labels != nil {
		data, _ := json.Marshal(spec)
		b.WriteByte('|')
		b.Write(data)
	}
	return b.String()
}

// comparePods orders pods deterministically: creation time, then namespace/name, then UID.
func comparePods(a, b *corev1.Pod) int {
	return cmp.Or(a.CreationTimestamp.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
}

// buildClasses groups pods into classes and orders them largest first (CPU, then memory), as
// first-fit-decreasing needs, with a deterministic tie-break independent of input order.
// keys, when not nil, memoizes what buildClasses derives from a pod alone (a Prepared's solves
// place the same pod objects again and again). keptOff, when not nil, tells the pods settling nodes
// do not take; they form classes of their own.
func buildClasses(pods []*corev1.Pod, vols *volumeIndex, preferNoSchedule, ignorePreferences bool, keys *podKeys, keptOff func(*corev1.Pod) bool) []*podClass {
	byKey := map[string]*podClass{}
	var offKey map[string]*podClass // the classes of pods kept off settling nodes, by key
	for _, pod := range pods {
		req, key := keys.of(pod)
		var volumeReqs []Requirements
		var volumeErr error
		if vols != nil && len(pod.Spec.Volumes) > 0 {
			// Pods of one controller may hold different claims (a StatefulSet's volumes live in
			// different zones): what the volumes require is part of the class.
			volumeReqs, volumeErr = vols.requirements(pod)
			if volumeErr != nil {
				key += "|volumes error " + volumeErr.Error()
			} else if len(volumeReqs) > 0 {
				key += "|volumes " + volumeKey(volumeReqs)
			}
		}
		classes, off := byKey, keptOff != nil && keptOff(pod)
		if off {
			if offKey == nil {
				offKey = map[string]*podClass{}
			}
			classes = offKey
		}
		c, ok := classes[key]
		if !ok {
			c = newPodClass(key, pod, req, preferNoSchedule, ignorePreferences)
			c.applyVolumes(volumeReqs, volumeErr)
			c.offSettling = off
			classes[key] = c
		}
		c.pods = append(c.pods, pod)
	}
	out := make([]*podClass, 0, len(byKey)+len(offKey))
	for _, classes := range []map[string]*podClass{byKey, offKey} {
		for _, c := range classes {
			slices.SortFunc(c.pods, comparePods)
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b *podClass) int {
		return cmp.Or(cmp.Compare(b.requests.CPU, a.requests.CPU), cmp.Compare(b.requests.Memory, a.requests.Memory),
			comparePods(a.pods[0], b.pods[0]), cmp.Compare(a.key, b.key), compareBool(a.offSettling, b.offSettling))
	})
	return out
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func newPodClass(key string, pod *corev1.Pod, req Resources, preferNoSchedule, ignorePreferences bool) *podClass {
	c := &podClass{key: key, requests: req, hostPorts: PodHostPorts(pod), tols: pod.Spec.Tolerations}
	if err := ValidatePod(pod); err != nil {
		c.invalid = &Rejection{Constraint: ConstraintValidation, Detail: err.Error()}
		return c
	}
	if detail := unsupportedConstraint(pod); detail != "" {
		c.invalid = &Rejection{Constraint: ConstraintUnsupported, Detail: detail}
		return c
	}
	steps, err := buildSteps(pod, preferNoSchedule, ignorePreferences)
	if err != nil {
		c.invalid = &Rejection{Constraint: ConstraintValidation, Detail: err.Error()}
		return c
	}
	c.steps = steps
	return c
}

// applyVolumes narrows every relaxation step to what the pods' volumes require, or marks the class
// unschedulable when its volumes cannot be resolved.
func (c *podClass) applyVolumes(alternatives []Requirements, err error) {
	if c.invalid != nil {
		return
	}
	if err != nil {
		c.invalid = &Rejection{Constraint: ConstraintVolume, Detail: err.Error()}
		return
	}
	steps, err := withVolumeAlternatives(c.steps, alternatives)
	if err != nil {
		c.invalid = &Rejection{Constraint: ConstraintRequirement, Detail: err.Error()}
		return
	}
	c.steps = steps
}

// withoutPreferences returns a copy of the pod without preferred node affinity (PREFERENCE_POLICY=Ignore).
func withoutPreferences(pod *corev1.Pod) *corev1.Pod {
	aff := pod.Spec.Affinity
	if aff == nil || aff.NodeAffinity == nil || len(aff.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return pod
	}
	out := pod.DeepCopy()
	out.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution = nil
	return out
}

// unsupportedConstraint names a hard pod constraint this solver does not model, so that such pods are
// reported instead of being placed wrongly. Topology and pod-affinity forms are checked by topology.
func unsupportedConstraint(pod *corev1.Pod) string {
	if len(pod.Spec.ResourceClaims) > 0 {
		return "dynamic resource allocation claims are not supported (Karpenter ignores DRA by default)"
	}
	return ""
}

// podKeys memoizes, per pod object, its requests and its class key before volumes (classKey, and
// the invalid-resources mark). Both are pure functions of the pod. It is safe for concurrent use;
// a nil *podKeys memoizes nothing.
type podKeys struct {
	mu    sync.Mutex
	byPod map[*corev1.Pod]podKey
}

type podKey struct {
	req Resources
	key string
}

func (k *podKeys) of(pod *corev1.Pod) (Resources, string) {
	if k != nil {
		k.mu.Lock()
		e, ok := k.byPod[pod]
		k.mu.Unlock()
		if ok {
			return e.req, e.key
		}
	}
	req := PodRequests(pod)
	key := classKey(pod, req)
	if err := ValidatePodResources(pod); err != nil {
		// Requests are clamped into range, so a pod with bad ones could look like a valid pod.
		key += "|invalid resources " + err.Error()
	}
	if k != nil {
		k.mu.Lock()
		k.byPod[pod] = podKey{req: req, key: key}
		k.mu.Unlock()
	}
	return req, key
}

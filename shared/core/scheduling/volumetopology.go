package scheduling

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
)

// bindCompletedAnnotation is set by the PV controller once a claim's binding is complete.
const bindCompletedAnnotation = "pv.kubernetes.io/bind-completed"

// maxVolumeAlternatives bounds how many OR-combinations of volume topology terms a pod may expand to.
const maxVolumeAlternatives = 16

// volumeIndex resolves a pod's volumes to the node requirements their storage imposes.
type volumeIndex struct {
	claims  map[string]*corev1.PersistentVolumeClaim // by namespace/name
	volumes map[string]*corev1.PersistentVolume
	classes map[string]*storagev1.StorageClass
	// defaultClass is the class annotated as the default (when several are, the greatest name, so the choice is deterministic).
	defaultClass string
	// limits are the nodes' CSI volume limits by node name (volumelimits.go), nil when none has one.
	limits map[string][]driverLimit
}

// defaultClassAnnotation marks the cluster's default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

func newVolumeIndex(in Input) *volumeIndex {
	v := &volumeIndex{
		claims:  make(map[string]*corev1.PersistentVolumeClaim, len(in.PersistentVolumeClaims)),
		volumes: make(map[string]*corev1.PersistentVolume, len(in.PersistentVolumes)),
		classes: make(map[string]*storagev1.StorageClass, len(in.StorageClasses)),
		limits:  csiLimits(in.CSINodes),
	}
	for _, c := range in.PersistentVolumeClaims {
		v.claims[c.Namespace+"/"+c.Name] = c
	}
	for _, pv := range in.PersistentVolumes {
		v.volumes[pv.Name] = pv
	}
	for _, sc := range in.StorageClasses {
		v.classes[sc.Name] = sc
		if sc.Annotations[defaultClassAnnotation] == "true" && sc.Name > v.defaultClass {
			v.defaultClass = sc.Name
		}
	}
	return v
}

// VolumeTopologyError says why a pod's volumes keep it from being provisioned for.
type VolumeTopologyError struct {
	Volume string
	Detail string
}

func (e *VolumeTopologyError) Error() string {
	return fmt.Sprintf("volume %q: %s", e.Volume, e.Detail)
}

// requirements returns the alternatives (OR) of node requirements under which every volume of the
// pod can be attached: a bound volume's node affinity, or for a claim still waiting for its first
// consumer, its StorageClass's allowedTopologies. nil means the volumes do not restrict the node. An
// error means the pod cannot be provisioned for until its volumes change (missing, lost or deleting
// claims and volumes, classes that bind immediately or do not exist).
//
// Hostname terms are dropped, as Karpenter does: a new node can never satisfy them, and a local
// volume's node is an existing one that kube-scheduler handles.
func (v *volumeIndex) requirements(pod *corev1.Pod) ([]Requirements, error) {
	alternatives := []Requirements{{}}
	for i := range pod.Spec.Volumes {
		terms, err := v.volumeTerms(pod, &pod.Spec.Volumes[i])
		if err != nil {
			return nil, err
		}
		if len(terms) == 0 {
			continue
		}
		next := make([]Requirements, 0, len(alternatives)*len(terms))
		for _, a := range alternatives {
			for _, t := range terms {
				next = append(next, a.Intersection(t))
			}
		}
		if len(next) > maxVolumeAlternatives {
			next = next[:maxVolumeAlternatives]
		}
		alternatives = next
	}
	if len(alternatives) == 1 && len(alternatives[0]) == 0 {
		return nil, nil
	}
	return alternatives, nil
}

// volumeTerms returns the OR-ed requirement terms of one pod volume, nil when it imposes none.
func (v *volumeIndex) volumeTerms(pod *corev1.Pod, vol *corev1.Volume) ([]Requirements, error) {
	var claimName string
	var ephemeralClass *string
	ephemeral := false
	switch {
	case vol.PersistentVolumeClaim != nil:
		claimName = vol.PersistentVolumeClaim.ClaimName
	case vol.Ephemeral != nil:
		// A generic ephemeral volume's claim is named after the pod and volume; until the ephemeral
		// volume controller creates it, the template's class decides.
		claimName = pod.Name + "-" + vol.Name
		ephemeral = true
		if t := vol.Ephemeral.VolumeClaimTemplate; t != nil {
			ephemeralClass = t.Spec.StorageClassName
		}
	default:
		return nil, nil
	}
	fail := func(format string, args ...any) ([]Requirements, error) {
		return nil, &VolumeTopologyError{Volume: vol.Name, Detail: fmt.Sprintf(format, args...)}
	}
	pvc, ok := v.claims[pod.Namespace+"/"+claimName]
	if !ok {
		if ephemeral {
			return v.classTerms(vol.Name, ephemeralClass)
		}
		return fail("persistentvolumeclaim %s/%s not found", pod.Namespace, claimName)
	}
	if pvc.DeletionTimestamp != nil {
		return fail("persistentvolumeclaim %s/%s is being deleted", pod.Namespace, claimName)
	}
	if pvc.Status.Phase == corev1.ClaimLost {
		return fail("persistentvolumeclaim %s/%s lost its persistent volume", pod.Namespace, claimName)
	}
	if name := pvc.Spec.VolumeName; name != "" {
		if pvc.Annotations[bindCompletedAnnotation] == "" {
			return fail("persistentvolumeclaim %s/%s is not fully bound to persistent volume %s yet", pod.Namespace, claimName, name)
		}
		pv, ok := v.volumes[name]
		if !ok {
			return fail("persistent volume %s of claim %s/%s not found", name, pod.Namespace, claimName)
		}
		if pv.DeletionTimestamp != nil {
			return fail("persistent volume %s of claim %s/%s is being deleted", name, pod.Namespace, claimName)
		}
		return persistentVolumeTerms(vol.Name, pv)
	}
	return v.classTerms(vol.Name, pvc.Spec.StorageClassName)
}

// classTerms returns the allowedTopologies of the StorageClass an unbound claim will be provisioned
// from, which must bind when its first consumer is scheduled. A nil class is the cluster's default
// class; an empty one means the claim only binds to pre-provisioned volumes.
func (v *volumeIndex) classTerms(volume string, name *string) ([]Requirements, error) {
	class := ""
	if name == nil {
		class = v.defaultClass
		if class == "" {
			return nil, &VolumeTopologyError{Volume: volume, Detail: "unbound claim names no storage class and the cluster has no default storage class"}
		}
	} else {
		class = *name
	}
	if class == "" {
		return nil, &VolumeTopologyError{Volume: volume, Detail: "unbound claim has an empty storage class, so no volume can be provisioned for it"}
	}
	sc, ok := v.classes[class]
	if !ok {
		return nil, &VolumeTopologyError{Volume: volume, Detail: fmt.Sprintf("storage class %s not found", class)}
	}
	if sc.VolumeBindingMode == nil || *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		return nil, &VolumeTopologyError{Volume: volume, Detail: fmt.Sprintf("storage class %s binds immediately; waiting for the volume to be provisioned and bound", class)}
	}
	var out []Requirements
	for _, term := range sc.AllowedTopologies {
		reqs := Requirements{}
		for _, e := range term.MatchLabelExpressions {
			if NormalizeLabel(e.Key) == LabelHostname {
				continue
			}
			reqs.Add(&Requirement{Key: NormalizeLabel(e.Key), values: sortedUnique(e.Values)})
		}
		out = append(out, reqs)
	}
	return dropUnconstrained(out), nil
}

// persistentVolumeTerms returns the node-affinity terms of a bound volume.
func persistentVolumeTerms(volume string, pv *corev1.PersistentVolume) ([]Requirements, error) {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return nil, nil
	}
	var out []Requirements
	for _, term := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms {
		term.MatchExpressions = slices.DeleteFunc(slices.Clone(term.MatchExpressions), func(e corev1.NodeSelectorRequirement) bool {
			return NormalizeLabel(e.Key) == LabelHostname
		})
		reqs, err := RequirementsFromNodeSelector(term)
		if err != nil {
			return nil, &VolumeTopologyError{Volume: volume, Detail: fmt.Sprintf("persistent volume %s node affinity: %v", pv.Name, err)}
		}
		out = append(out, reqs)
	}
	return dropUnconstrained(out), nil
}

// dropUnconstrained returns nil when some term is empty (it allows every node), and the terms
// otherwise.
func dropUnconstrained(terms []Requirements) []Requirements {
	for _, t := range terms {
		if len(t) == 0 {
			return nil
		}
	}
	return terms
}

// volumeKey renders volume alternatives for a pod class key.
func volumeKey(alternatives []Requirements) string {
	parts := make([]string, len(alternatives))
	for i, a := range alternatives {
		parts[i] = "(" + a.String() + ")"
	}
	return strings.Join(parts, " or ")
}

// withVolumeAlternatives returns the relaxation steps with each step repeated per volume alternative
// (alternatives are not relaxations: each is tried, in order, before the next preference is given up).
// Combinations where the pod's own node selection rules out the volumes' are left out; if none is
// left, the error names the conflict. Each step's own requirements stay the pod's: volume zones do not
// narrow topology spread domains.
func withVolumeAlternatives(steps []classStep, alternatives []Requirements) ([]classStep, error) {
	if len(alternatives) == 0 {
		return steps, nil
	}
	out := make([]classStep, 0, len(steps)*len(alternatives))
	var conflict error
	for _, st := range steps {
		for _, a := range alternatives {
			if err := st.Requirements.Intersects(a); err != nil {
				if conflict == nil {
					conflict = fmt.Errorf("the pod's node selection rules out where its volumes can attach (%s): %w", a, err)
				}
				continue
			}
			s := st
			s.Requirements = st.Requirements.Intersection(a)
			s.sig = s.Requirements.String()
			s.base = s.sig
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, conflict
	}
	return out, nil
}

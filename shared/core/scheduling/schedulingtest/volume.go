package schedulingtest

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WithClaims adds a volume per named PersistentVolumeClaim to the pod and returns it.
func WithClaims(pod *corev1.Pod, claims ...string) *corev1.Pod {
	for _, c := range claims {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: c,
			VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	return pod
}

// BoundClaim builds a claim in namespace "default" bound to the named PersistentVolume.
func BoundClaim(name, volume string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: map[string]string{"pv.kubernetes.io/bind-completed": "yes"}},
		Spec:       corev1.PersistentVolumeClaimSpec{VolumeName: volume},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
}

// PendingClaim builds an unbound claim in namespace "default" of the named StorageClass.
func PendingClaim(name, class string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       corev1.PersistentVolumeClaimSpec{StorageClassName: &class},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
	}
}

// ZonalVolume builds a PersistentVolume whose node affinity requires key In zones, one OR-term per
// entry of terms.
func ZonalVolume(name, key string, terms ...[]string) *corev1.PersistentVolume {
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}
	sel := &corev1.NodeSelector{}
	for _, zones := range terms {
		sel.NodeSelectorTerms = append(sel.NodeSelectorTerms, corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: key, Operator: corev1.NodeSelectorOpIn, Values: zones}}})
	}
	pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: sel}
	return pv
}

// StorageClass builds a class with the binding mode and, when zones are given, allowedTopologies on
// topology.kubernetes.io/zone.
func StorageClass(name string, mode storagev1.VolumeBindingMode, zones ...string) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &mode}
	if len(zones) > 0 {
		sc.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: "topology.kubernetes.io/zone", Values: zones}}}}
	}
	return sc
}

// CSIVolume builds a PersistentVolume provisioned by the named CSI driver, without node affinity.
func CSIVolume(name, driver string) *corev1.PersistentVolume {
	return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "vol-" + name}}}}
}

// CSINode builds the CSINode of the named node with an allocatable volume count per driver.
func CSINode(node string, counts map[string]int32) *storagev1.CSINode {
	csi := &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	for _, driver := range slices.Sorted(maps.Keys(counts)) {
		n := counts[driver]
		csi.Spec.Drivers = append(csi.Spec.Drivers, storagev1.CSINodeDriver{Name: driver, NodeID: node,
			Allocatable: &storagev1.VolumeNodeResources{Count: &n}})
	}
	return csi
}

package scalebench

import (
	"crypto/sha256"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Volume is a StatefulSet pod's bound PVC and the EBS PV that the CSI provisioner made for it, complete
// as the API server holds them once bound: uids, creation stamps, managedFields and status.
func Volume(namespace, claim, zone, volumeID string, created time.Time) (*corev1.PersistentVolumeClaim, *corev1.PersistentVolume) {
	pvName := "pvc-" + volumeID[4:]
	class := "gp3"
	size := resource.MustParse("20Gi")
	at := metav1.NewTime(created.Truncate(time.Second))
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: namespace, UID: nameUID("pvc/" + namespace + "/" + claim), CreationTimestamp: at,
			Annotations: map[string]string{
				"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
				"volume.beta.kubernetes.io/storage-provisioner": "ebs.csi.aws.com", "volume.kubernetes.io/selected-node": "",
				"volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com"}, Finalizers: []string{"kubernetes.io/pvc-protection"}},
		Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}, StorageClassName: &class,
			VolumeName: pvName, Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}}},
		Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Capacity: corev1.ResourceList{corev1.ResourceStorage: size}},
	}
	pvc.ManagedFields = []metav1.ManagedFieldsEntry{
		entry(managerController, metav1.ManagedFieldsOperationUpdate, "", created, fieldsOfObject(struct {
			Metadata metav1.ObjectMeta                `json:"metadata"`
			Spec     corev1.PersistentVolumeClaimSpec `json:"spec"`
		}{metav1.ObjectMeta{Annotations: pvc.Annotations, Finalizers: pvc.Finalizers}, pvc.Spec})),
		entry(managerController, metav1.ManagedFieldsOperationUpdate, "status", created, fieldsOfObject(struct {
			Status corev1.PersistentVolumeClaimStatus `json:"status"`
		}{pvc.Status})),
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pvName, UID: nameUID("pv/" + pvName), CreationTimestamp: at,
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": "ebs.csi.aws.com",
				"volume.kubernetes.io/provisioner-deletion-secret-name": "", "volume.kubernetes.io/provisioner-deletion-secret-namespace": ""},
			Finalizers: []string{"kubernetes.io/pv-protection", "external-provisioner.volume.kubernetes.io/finalizer"}},
		Spec: corev1.PersistentVolumeSpec{Capacity: corev1.ResourceList{corev1.ResourceStorage: size}, AccessModes: pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete, StorageClassName: class, VolumeMode: ptr(corev1.PersistentVolumeFilesystem),
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: namespace, Name: claim, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: volumeID, FSType: "ext4",
				VolumeAttributes: map[string]string{"storage.kubernetes.io/csiProvisionerIdentity": "1732000000000-7483-ebs.csi.aws.com"}}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: "topology.kubernetes.io/zone", Operator: corev1.NodeSelectorOpIn, Values: []string{zone}}}}}}}},
		Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeBound, LastPhaseTransitionTime: &at},
	}
	pv.ManagedFields = []metav1.ManagedFieldsEntry{
		entry("csi-provisioner", metav1.ManagedFieldsOperationUpdate, "", created, fieldsOfObject(struct {
			Metadata metav1.ObjectMeta           `json:"metadata"`
			Spec     corev1.PersistentVolumeSpec `json:"spec"`
		}{metav1.ObjectMeta{Annotations: pv.Annotations, Finalizers: pv.Finalizers}, pv.Spec})),
		entry(managerController, metav1.ManagedFieldsOperationUpdate, "status", created, fieldsOfObject(struct {
			Status corev1.PersistentVolumeStatus `json:"status"`
		}{pv.Status})),
	}
	return pvc, pv
}

// nameUID is a UUID-shaped uid derived from name: the same volume gets the same uid in every load.
func nameUID(name string) types.UID {
	h := sha256.Sum256([]byte(name))
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16]))
}

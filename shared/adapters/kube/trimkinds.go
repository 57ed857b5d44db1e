package kube

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrimMeta drops what no decision reads from the metadata of any object: managedFields (often half of a
// small object's bytes) and kubectl's last-applied copy. It is the whole trim of the kinds a Snapshotter
// reads beside Nodes and pods, whose decisions read their spec and status (PVCs, PVs, StorageClasses,
// CSINodes, PDBs, Namespaces); a DaemonSet is trimmed further (TrimDaemonSet).
//
// A trimmed object must never be written back (Update would erase what was dropped): callers patch.
func TrimMeta(o metav1.Object) {
	o.SetManagedFields(nil)
	if a := o.GetAnnotations(); a != nil {
		delete(a, lastApplied)
	}
}

// TrimDaemonSet drops what no decision reads from a DaemonSet: its metadata as TrimMeta does, and from its
// pod template what TrimPod drops from each container (environment, command, probes, mounts, limits folded
// into requests, …) and the ephemeral containers. A daemon's overhead and placement are computed from the
// template as from a pod, so the template keeps what a trimmed pod keeps.
func TrimDaemonSet(ds *appsv1.DaemonSet) {
	TrimMeta(ds)
	spec := &ds.Spec.Template.Spec
	for i := range spec.InitContainers {
		trimContainer(&spec.InitContainers[i])
	}
	for i := range spec.Containers {
		trimContainer(&spec.Containers[i])
	}
	spec.EphemeralContainers = nil
	delete(ds.Spec.Template.Annotations, lastApplied)
}

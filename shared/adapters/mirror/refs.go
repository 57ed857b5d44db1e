package mirror

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// UID is the UID of the writer's mirror of name, as its LIST or a later run's watch reported it; empty
// while it is not known (a mirror created this run is learned at the next run's catch-up).
func (w *Writer) UID(name string) types.UID {
	e, _ := w.memo.get(name)
	return e.uid
}

// ObjectRef names a mirror for an Event: `kubectl describe` finds an object's Events by kind, name and
// UID, so an Event about a mirror carries its UID.
func ObjectRef(k Kind, name string, uid types.UID) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: APIVersion, Kind: k.Kind, Name: name, UID: uid}
}

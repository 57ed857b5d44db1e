package kube

import (
	"cmp"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// object is a decoded API object the views keep (*corev1.Pod, *corev1.Node).
type object[T any] interface {
	*T
	metav1.Object
	Unmarshal([]byte) error
}

// view is the last known state of one kind of object: every object by namespace/name, at revision rv.
// Objects are never changed once they are in the view: a change replaces the pointer, so a snapshot
// handed out earlier keeps the objects it was given.
type view[T any, PT object[T]] struct {
	rv    string
	items map[string]PT
	// sorted is items in namespace/name order (the API server's list order); nil after a change.
	sorted []PT
	// listTook and listBytes are how long the last whole list took and how large its responses were.
	listTook  time.Duration
	listBytes int64
}

func objectKey(o metav1.Object) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns + "/" + o.GetName()
	}
	return o.GetName()
}

// reset replaces the view with a whole list read at rv.
func (v *view[T, PT]) reset(items []PT, rv string) {
	v.items = make(map[string]PT, len(items)+len(items)/10)
	for _, o := range items {
		v.items[objectKey(o)] = o
	}
	v.rv, v.sorted = rv, nil
}

func (v *view[T, PT]) put(o PT) {
	v.items[objectKey(o)] = o
	v.sorted = nil
}

func (v *view[T, PT]) remove(o PT) {
	delete(v.items, objectKey(o))
	v.sorted = nil
}

// known says whether the view holds a whole list.
func (v *view[T, PT]) known() bool { return v.items != nil && v.rv != "" }

// forget drops the view: the next read lists the kind whole.
func (v *view[T, PT]) forget() { v.items, v.sorted, v.rv = nil, nil, "" }

// list returns the objects in namespace/name order. The slice is shared by every caller until the view
// changes: callers must not modify it.
func (v *view[T, PT]) list() []PT {
	if v.sorted == nil {
		v.sorted = make([]PT, 0, len(v.items))
		for _, o := range v.items {
			v.sorted = append(v.sorted, o)
		}
		slices.SortFunc(v.sorted, func(a, b PT) int {
			if c := cmp.Compare(a.GetNamespace(), b.GetNamespace()); c != 0 {
				return c
			}
			return cmp.Compare(a.GetName(), b.GetName())
		})
	}
	return v.sorted
}

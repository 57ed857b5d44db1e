package kube

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"
)

// kind is one of the kinds a Snapshotter reads beside the pods (DaemonSets, PDBs, PVCs, PVs,
// StorageClasses, CSINodes, Namespaces): over a real REST client it is kept as a view, as Nodes and pods
// are, so a warm function reads only what changed; over a fake clientset it is listed whole each time.
type kind[T any, PT object[T]] struct {
	// resource is the kind's plural resource name; namespace "" reads every namespace.
	resource, namespace string
	rest                rest.Interface
	list                pageLister[T]
	watch               func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	trim                func(PT)
}

// read brings the kind up to date in v and returns its objects in namespace/name order (shared with the
// view and with earlier snapshots: callers must not modify them). catchUp says when it is caught up with
// a watch rather than listed whole.
func (k kind[T, PT]) read(ctx context.Context, catchUp catchUpRule, v *view[T, PT], pageSize int64) ([]PT, ReadMode, error) {
	if rc := restClient(k.rest); rc != nil {
		probe := func(ctx context.Context, opts metav1.ListOptions) (string, error) {
			_, meta, err := k.list(ctx, opts)
			return meta.ResourceVersion, err
		}
		mode, err := v.refresh(ctx, restSource(rc, k.resource, k.namespace, pageSize, catchUp, metav1.ListOptions{}, probe, k.watch, k.trim))
		if err != nil {
			return nil, "", err
		}
		return v.list(), mode, nil
	}
	pages, _, err := listAll(ctx, k.resource, pageSize, metav1.ListOptions{}, k.list)
	if err != nil {
		return nil, "", err
	}
	all := flatten(pages)
	out := make([]PT, len(all))
	for i := range all {
		out[i] = PT(&all[i])
		k.trim(out[i])
	}
	return out, ReadListed, nil
}

// typedList adapts a clientset's typed List (which returns a *XList) to a pageLister.
func typedList[T any, L any](list func(ctx context.Context, opts metav1.ListOptions) (L, error), parts func(L) ([]T, metav1.ListMeta)) pageLister[T] {
	return func(ctx context.Context, opts metav1.ListOptions) ([]T, metav1.ListMeta, error) {
		l, err := list(ctx, opts)
		if err != nil {
			return nil, metav1.ListMeta{}, err
		}
		items, meta := parts(l)
		return items, meta, nil
	}
}

package kube

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// NodeView lists the cluster's Nodes for a function that reads nothing else (the lifecycle): paginated,
// trimmed (TrimNode), and kept between calls, so a warm function reads only the Nodes that changed, as a
// Snapshotter does. It satisfies the List method of a clientset's CoreV1().Nodes().
type NodeView struct {
	client kubernetes.Interface
	opts   SnapshotOptions
	mu     sync.Mutex
	nodes  view[corev1.Node, *corev1.Node]
	// last is how the last List brought the Nodes up to date.
	last ReadMode
}

// NewNodeView returns a NodeView reading through client; of opts, PageSize, NodeSelector and WatchAfter
// apply.
func NewNodeView(client kubernetes.Interface, opts SnapshotOptions) *NodeView {
	if opts.PageSize <= 0 {
		opts.PageSize = DefaultPageSize
	}
	return &NodeView{client: client, opts: opts}
}

// List returns every Node as of now. It takes no list options of its own (selectors belong to the view):
// any other than the zero value is refused. The Nodes must not be modified, nor written back with Update
// (they are trimmed): change them with patches.
func (v *NodeView) List(ctx context.Context, opts metav1.ListOptions) (*corev1.NodeList, error) {
	if opts.LabelSelector != "" || opts.FieldSelector != "" || opts.ResourceVersion != "" || opts.Limit != 0 || opts.Continue != "" {
		return nil, fmt.Errorf("listing nodes through the node view: list options are not supported (%+v)", opts)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	trim := func(n *corev1.Node) {
		if !v.opts.Untrimmed {
			TrimNode(n)
		}
	}
	nodes, rv, mode, err := readNodes(ctx, v.client, &v.nodes, v.opts, trim)
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	v.last = mode
	return &corev1.NodeList{ListMeta: metav1.ListMeta{ResourceVersion: rv}, Items: nodes}, nil
}

// LastRead says how the last List brought the Nodes up to date.
func (v *NodeView) LastRead() ReadMode {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.last
}

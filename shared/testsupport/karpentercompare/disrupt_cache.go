package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
)

// newCachedClient is the client Karpenter's operator gives its controllers: reads from an informer
// cache with the field indexes Karpenter registers (pods by node, nodes and NodeClaims by provider
// ID, NodeClaims and NodePools by node class), writes to the API server. Writes wait until the cache
// has them, so that the next reconcile reads what was written, as a running operator eventually does.
func newCachedClient(ctx context.Context, cfg *rest.Config) (client.Client, error) {
	c, err := cache.New(cfg, cache.Options{Scheme: scheme.Scheme})
	if err != nil {
		return nil, err
	}
	indexes := []struct {
		obj   client.Object
		field string
		value func(client.Object) string
	}{
		{&corev1.Pod{}, "spec.nodeName", func(o client.Object) string { return o.(*corev1.Pod).Spec.NodeName }},
		{&corev1.Node{}, "spec.providerID", func(o client.Object) string { return o.(*corev1.Node).Spec.ProviderID }},
		{&karpv1.NodeClaim{}, "status.providerID", func(o client.Object) string { return o.(*karpv1.NodeClaim).Status.ProviderID }},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.group", func(o client.Object) string { return claimClass(o).Group }},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.kind", func(o client.Object) string { return claimClass(o).Kind }},
		{&karpv1.NodeClaim{}, "spec.nodeClassRef.name", func(o client.Object) string { return claimClass(o).Name }},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.group", func(o client.Object) string { return poolClass(o).Group }},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.kind", func(o client.Object) string { return poolClass(o).Kind }},
		{&karpv1.NodePool{}, "spec.template.spec.nodeClassRef.name", func(o client.Object) string { return poolClass(o).Name }},
	}
	for _, ix := range indexes {
		value := ix.value
		if err := c.IndexField(ctx, ix.obj, ix.field, func(o client.Object) []string { return []string{value(o)} }); err != nil {
			return nil, fmt.Errorf("indexing %s: %w", ix.field, err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return nil, fmt.Errorf("informer cache did not sync")
	}
	kube, err := client.New(cfg, client.Options{Scheme: scheme.Scheme, Cache: &client.CacheOptions{Reader: c}})
	if err != nil {
		return nil, err
	}
	return &syncingClient{Client: kube}, nil
}

func claimClass(o client.Object) karpv1.NodeClassReference {
	if ref := o.(*karpv1.NodeClaim).Spec.NodeClassRef; ref != nil {
		return *ref
	}
	return karpv1.NodeClassReference{}
}

func poolClass(o client.Object) karpv1.NodeClassReference {
	if ref := o.(*karpv1.NodePool).Spec.Template.Spec.NodeClassRef; ref != nil {
		return *ref
	}
	return karpv1.NodeClassReference{}
}

// syncingClient is a cache-reading client whose writes return once the cache holds them.
type syncingClient struct {
	client.Client
}

func (c *syncingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if err := c.Client.Create(ctx, obj, opts...); err != nil {
		return err
	}
	return c.synced(ctx, obj)
}

func (c *syncingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	if err := c.Client.Update(ctx, obj, opts...); err != nil {
		return err
	}
	return c.synced(ctx, obj)
}

func (c *syncingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if err := c.Client.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	return c.synced(ctx, obj)
}

func (c *syncingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if err := c.Client.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	return c.gone(ctx, obj)
}

func (c *syncingClient) Status() client.SubResourceWriter {
	return &syncingStatusWriter{SubResourceWriter: c.Client.Status(), c: c}
}

type syncingStatusWriter struct {
	client.SubResourceWriter
	c *syncingClient
}

func (w *syncingStatusWriter) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	if err := w.SubResourceWriter.Update(ctx, obj, opts...); err != nil {
		return err
	}
	return w.c.synced(ctx, obj)
}

func (w *syncingStatusWriter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if err := w.SubResourceWriter.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	return w.c.synced(ctx, obj)
}

// cacheWait bounds how long a write waits for the cache.
const cacheWait = 30 * time.Second

// synced waits until the cache holds obj at its written resource version or later.
func (c *syncingClient) synced(ctx context.Context, obj client.Object) error {
	want, err := strconv.ParseUint(obj.GetResourceVersion(), 10, 64)
	if err != nil {
		return nil // not a number: nothing to compare
	}
	cached := obj.DeepCopyObject().(client.Object)
	deadline := time.Now().Add(cacheWait)
	for {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(obj), cached)
		if err == nil {
			if got, _ := strconv.ParseUint(cached.GetResourceVersion(), 10, 64); got >= want {
				return nil
			}
		} else if !apierrors.IsNotFound(err) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: the cache did not see resource version %d in %s", client.ObjectKeyFromObject(obj), want, cacheWait)
		}
		time.Sleep(time.Millisecond)
	}
}

// gone waits until the cache no longer holds obj, or holds it with a deletion timestamp.
func (c *syncingClient) gone(ctx context.Context, obj client.Object) error {
	cached := obj.DeepCopyObject().(client.Object)
	deadline := time.Now().Add(cacheWait)
	for {
		err := c.Client.Get(ctx, client.ObjectKeyFromObject(obj), cached)
		if apierrors.IsNotFound(err) || (err == nil && cached.GetDeletionTimestamp() != nil) {
			return nil
		}
		if err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: still in the cache %s after its deletion", client.ObjectKeyFromObject(obj), cacheWait)
		}
		time.Sleep(time.Millisecond)
	}
}

package mirror

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

// Client is the API of one mirrored kind over a real API server: server-side apply as FieldManager
// through the dynamic client (JSON: custom resources have no protobuf form), lists and watches through
// the metadata client (metadata only, whatever the objects hold).
type Client struct {
	objects dynamic.NamespaceableResourceInterface
	meta    metadata.ResourceInterface
	manager string
}

var _ API = (*Client)(nil)

// NewClient returns the API of kind's mirrors for cfg's identity; fieldManager names the writer in the
// objects' managed fields (nodewright-<function>).
func NewClient(cfg *rest.Config, kind Kind, fieldManager string) (*Client, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the mirror client: %w", err)
	}
	meta, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building the mirror metadata client: %w", err)
	}
	return &Client{objects: dyn.Resource(kind.Resource()), meta: meta.Resource(kind.Resource()), manager: fieldManager}, nil
}

func (c *Client) ListMetadata(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	return c.meta.List(ctx, opts)
}

func (c *Client) WatchMetadata(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.meta.Watch(ctx, opts)
}

func (c *Client) Apply(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	out, err := c.objects.Apply(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: c.manager, Force: true})
	if err != nil {
		return "", err
	}
	return out.GetResourceVersion(), nil
}

func (c *Client) ApplyStatus(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	out, err := c.objects.ApplyStatus(ctx, obj.GetName(), obj, metav1.ApplyOptions{FieldManager: c.manager, Force: true})
	if err != nil {
		return "", err
	}
	return out.GetResourceVersion(), nil
}

func (c *Client) Replace(ctx context.Context, object, status *unstructured.Unstructured) (string, error) {
	var err error
	for attempt := 0; attempt < replaceAttempts; attempt++ {
		var rv string
		rv, err = c.replaceOnce(ctx, object, status)
		if !apierrors.IsConflict(err) {
			return rv, err
		}
	}
	return "", err
}

// replaceAttempts bounds the GETs of a Replace: each update is made over the revision just read, and
// another function's write between the two (the Follower's, or its server-side applies) makes it
// conflict; the Replace then reads the mirror again and writes over the new revision.
const replaceAttempts = 3

// replaceOnce is one GET and the updates of the object and of its status over what it read.
func (c *Client) replaceOnce(ctx context.Context, object, status *unstructured.Unstructured) (string, error) {
	cur, err := c.objects.Get(ctx, object.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if _, err := c.Apply(ctx, object); err != nil {
			return "", err
		}
		return c.ApplyStatus(ctx, status)
	}
	if err != nil {
		return "", err
	}
	if newer(cur, object) {
		return "", ErrSuperseded
	}
	object = object.DeepCopy()
	object.SetResourceVersion(cur.GetResourceVersion())
	out, err := c.objects.Update(ctx, object, metav1.UpdateOptions{FieldManager: c.manager})
	if err != nil {
		return "", err
	}
	status = status.DeepCopy()
	status.SetResourceVersion(out.GetResourceVersion())
	out, err = c.objects.UpdateStatus(ctx, status, metav1.UpdateOptions{FieldManager: c.manager})
	if err != nil {
		return "", err
	}
	return out.GetResourceVersion(), nil
}

// Get reads one mirror whole.
func (c *Client) Get(ctx context.Context, name string) (*unstructured.Unstructured, error) {
	return c.objects.Get(ctx, name, metav1.GetOptions{})
}

// Update and UpdateStatus write obj (its object, or its status) over the revision it carries: a
// conflict (409) when the mirror changed since.
func (c *Client) Update(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	out, err := c.objects.Update(ctx, obj, metav1.UpdateOptions{FieldManager: c.manager})
	if err != nil {
		return "", err
	}
	return out.GetResourceVersion(), nil
}

func (c *Client) UpdateStatus(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	out, err := c.objects.UpdateStatus(ctx, obj, metav1.UpdateOptions{FieldManager: c.manager})
	if err != nil {
		return "", err
	}
	return out.GetResourceVersion(), nil
}

func (c *Client) Delete(ctx context.Context, name string) error {
	return c.objects.Delete(ctx, name, metav1.DeleteOptions{})
}

// NewConfigStatusWriter returns the writer of the NodePool and EC2NodeClass mirrors over cfg's identity
// (the disruption function's), with the writers' default bounds, publishing its Events through events.
func NewConfigStatusWriter(cfg *rest.Config, fieldManager string, events EventPublisher) (*StatusWriter, error) {
	pools, err := NewClient(cfg, NodePools, fieldManager)
	if err != nil {
		return nil, err
	}
	classes, err := NewClient(cfg, EC2NodeClasses, fieldManager)
	if err != nil {
		return nil, err
	}
	return NewStatusWriter(NewWriter(NodePools, pools, Options{}), NewWriter(EC2NodeClasses, classes, Options{}), events), nil
}

// NewClaimFollower returns the Follower of the NodeClaim mirrors over cfg's identity (the disruption,
// interruption or termination function's), with the default bounds.
func NewClaimFollower(cfg *rest.Config, fieldManager string) (*Follower, error) {
	client, err := NewClient(cfg, NodeClaims, fieldManager)
	if err != nil {
		return nil, err
	}
	return NewFollower(client, FollowOptions{}, nil), nil
}

package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/nodewright/nodewright/shared/adapters/crash"
)

// This file reads paginated lists. Two paths give the same result:
//
//   - listAll goes through the typed clientset, page by page. It serves the small kinds and any
//     kubernetes.Interface without a REST client (the fake clientset in unit tests).
//   - streamList serves the large lists (Nodes, pods) over a real REST client. It reads each response
//     into a reused buffer, takes the list out of the protobuf envelope without copying it, decodes the
//     continue token first (ListMeta precedes the items on the wire) and asks for the next page before it
//     decodes this page's items, so the API server encodes page n+1 while this process decodes page n.
//     Items are decoded straight into one slice, so pages are never joined afterwards.

// pageLister lists one page of a kind.
type pageLister[T any] func(ctx context.Context, opts metav1.ListOptions) ([]T, metav1.ListMeta, error)

// listAll reads every page of a list and returns the pages as the API server sent them (no copy) with
// the revision the list was read at. An expired continuation restarts the list unpaginated.
func listAll[T any](ctx context.Context, what string, pageSize int64, base metav1.ListOptions,
	list pageLister[T]) ([][]T, string, error) {
	opts := base
	opts.Limit = pageSize
	var pages [][]T
	for {
		items, meta, err := list(ctx, opts)
		if apierrors.IsResourceExpired(err) && opts.Continue != "" {
			full := base
			full.Limit = 0
			items, meta, err = list(ctx, full)
			if err != nil {
				return nil, "", fmt.Errorf("listing %s again after its continuation expired: %w", what, mapError(err))
			}
			return [][]T{items}, meta.ResourceVersion, nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("listing %s: %w", what, mapError(err))
		}
		pages = append(pages, items)
		if meta.Continue == "" {
			return pages, meta.ResourceVersion, nil
		}
		opts.Continue = meta.Continue
	}
}

// flatten joins pages into one slice; a single page is returned as is.
func flatten[T any](pages [][]T) []T {
	switch len(pages) {
	case 0:
		return nil
	case 1:
		return pages[0]
	}
	n := 0
	for _, p := range pages {
		n += len(p)
	}
	out := make([]T, 0, n)
	for _, p := range pages {
		out = append(out, p...)
	}
	return out
}

// restClient returns the clientset's real REST client, or nil for a fake.
func restClient(i rest.Interface) *rest.RESTClient {
	if rc, ok := i.(*rest.RESTClient); ok && rc != nil {
		return rc
	}
	return nil
}

// protoItem is a generated API type that decodes itself from protobuf.
type protoItem[T any] interface {
	*T
	Unmarshal([]byte) error
}

// listRequest names what streamList lists.
type listRequest struct {
	client    *rest.RESTClient
	resource  string
	namespace string
	what      string
	pageSize  int64
	base      metav1.ListOptions
	// capacity is how many items to make room for at once (a hint from the previous snapshot).
	capacity int
}

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

type fetched struct {
	buf *bytes.Buffer
	err error
}

// streamList reads every page of the list into one slice, pipelining requests with decoding. trim, when
// not nil, is called on each page's items as soon as they are decoded.
func streamList[T any, PT protoItem[T]](ctx context.Context, r listRequest, trim func([]T)) ([]T, string, error) {
	items := make([]T, 0, r.capacity)
	start := 0
	rv, _, err := streamInto[T, PT](ctx, r, func() PT {
		var zero T
		items = append(items, zero)
		return PT(&items[len(items)-1])
	}, func() {
		items, start = items[:0], 0
	}, func() {
		if trim != nil {
			trim(items[start:])
		}
		start = len(items)
	})
	if err != nil {
		return nil, "", err
	}
	return items, rv, nil
}

// streamInto reads every page of the list, pipelining requests with decoding: next gives the object each
// item is decoded into, restart forgets what was decoded (an expired continuation restarts the list
// unpaginated) and pageDone is called after each page. It returns the list's revision and the bytes of
// the responses it decoded.
func streamInto[T any, PT protoItem[T]](ctx context.Context, r listRequest, next func() PT, restart, pageDone func()) (rv string, read int64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts := r.base
	opts.Limit = r.pageSize
	pending := r.fetch(ctx, opts)
	for {
		page := <-pending
		if apierrors.IsResourceExpired(page.err) && opts.Continue != "" {
			full := r.base
			full.Limit = 0
			page = <-r.fetch(ctx, full)
			if page.err != nil {
				return "", read, fmt.Errorf("listing %s again after its continuation expired: %w", r.what, mapError(page.err))
			}
			restart()
			read = int64(page.buf.Len())
			meta, err := decodeInto[T, PT](page.buf.Bytes(), next)
			bodyBuffers.Put(page.buf)
			if err != nil {
				return "", read, fmt.Errorf("decoding %s: %w", r.what, err)
			}
			pageDone()
			return meta.ResourceVersion, read, nil
		}
		if page.err != nil {
			return "", read, fmt.Errorf("listing %s: %w", r.what, mapError(page.err))
		}
		body := page.buf.Bytes()
		read += int64(len(body))
		meta, err := decodeListMeta(body)
		if err == nil && meta.Continue != "" {
			opts.Continue = meta.Continue
			pending = r.fetch(ctx, opts)
		}
		if err == nil {
			_, err = decodeInto[T, PT](body, next)
		}
		bodyBuffers.Put(page.buf)
		if err != nil {
			return "", read, fmt.Errorf("decoding %s: %w", r.what, err)
		}
		pageDone()
		if meta.Continue == "" {
			return meta.ResourceVersion, read, nil
		}
	}
}

// fetch starts one list request and delivers its whole body (or why not: a panic of the request is
// delivered as a *crash.PanicError, not left to end the process).
func (r listRequest) fetch(ctx context.Context, opts metav1.ListOptions) <-chan fetched {
	out := make(chan fetched, 1)
	go func() {
		buf, err := r.fetchBody(ctx, opts)
		out <- fetched{buf: buf, err: err}
	}()
	return out
}

// fetchBody reads one list response into a pooled buffer.
func (r listRequest) fetchBody(ctx context.Context, opts metav1.ListOptions) (_ *bytes.Buffer, err error) {
	defer crash.Capture(&err)
	req := r.client.Get().Resource(r.resource).VersionedParams(&opts, scheme.ParameterCodec)
	if r.namespace != "" {
		req = req.Namespace(r.namespace)
	}
	body, err := req.Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	buf := bodyBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	hint := bodySizeHint(r.resource, opts.Limit)
	if hint > buf.Cap() {
		// A page read into a buffer that doubles as it goes leaves about twice the page in garbage (a
		// 42 MB page of pods: 64 MB of buffers); one of the size of the kind's last page leaves none.
		buf.Grow(hint + hint/8)
	}
	if _, err := buf.ReadFrom(body); err != nil {
		bodyBuffers.Put(buf)
		return nil, err
	}
	noteBodySize(r.resource, opts.Limit, buf.Len())
	return buf, nil
}

// bodySizes keeps the size of the largest page read of each resource (by resource and page size), so
// the next page of that kind is read into a buffer large enough for it (a list's last page is smaller,
// so the latest size would undersize the next list's pages).
var bodySizes sync.Map

type bodySizeKey struct {
	resource string
	limit    int64
}

func bodySizeHint(resource string, limit int64) int {
	if limit == 1 {
		return 0 // revision probes
	}
	if n, ok := bodySizes.Load(bodySizeKey{resource, limit}); ok {
		return n.(int)
	}
	return 0
}

func noteBodySize(resource string, limit int64, n int) {
	if limit == 1 {
		return
	}
	k := bodySizeKey{resource, limit}
	if old, ok := bodySizes.Load(k); !ok || old.(int) < n {
		bodySizes.Store(k, n)
	}
}

// protobufMagic starts every Kubernetes protobuf response, before the runtime.Unknown envelope.
var protobufMagic = []byte("k8s\x00")

var errMalformedList = errors.New("malformed list response")

// listBytes returns the encoded list inside a protobuf response (a sub-slice, not a copy), or nil when
// the response is JSON.
func listBytes(body []byte) ([]byte, error) {
	if !bytes.HasPrefix(body, protobufMagic) {
		return nil, nil
	}
	var raw []byte
	var encoding string
	for b := body[len(protobufMagic):]; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errMalformedList
		}
		b = b[n:]
		switch {
		case num == 2 && typ == protowire.BytesType: // runtime.Unknown.raw
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, errMalformedList
			}
			raw, b = v, b[n:]
		case num == 3 && typ == protowire.BytesType: // runtime.Unknown.contentEncoding
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, errMalformedList
			}
			encoding, b = string(v), b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, errMalformedList
			}
			b = b[n:]
		}
	}
	if encoding != "" {
		return nil, fmt.Errorf("%w: content encoding %q", errMalformedList, encoding)
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: no list in the envelope", errMalformedList)
	}
	return raw, nil
}

// listFields calls visit for each top-level field of an encoded list: 1 is its ListMeta, 2 an item.
func listFields(list []byte, visit func(num protowire.Number, value []byte) error) error {
	for b := list; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return errMalformedList
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return errMalformedList
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return errMalformedList
		}
		b = b[n:]
		if err := visit(num, v); err != nil {
			return err
		}
	}
	return nil
}

// decodeListMeta reads only the list's metadata (continue token and revision).
func decodeListMeta(body []byte) (metav1.ListMeta, error) {
	var meta metav1.ListMeta
	raw, err := listBytes(body)
	if err != nil {
		return meta, err
	}
	if raw == nil {
		var list struct {
			Metadata metav1.ListMeta `json:"metadata"`
		}
		err := json.Unmarshal(body, &list)
		return list.Metadata, err
	}
	err = listFields(raw, func(num protowire.Number, v []byte) error {
		if num == 1 {
			return meta.Unmarshal(v)
		}
		return nil
	})
	return meta, err
}

// decodePage appends the page's items to items.
func decodePage[T any, PT protoItem[T]](items []T, body []byte) ([]T, metav1.ListMeta, error) {
	meta, err := decodeInto[T, PT](body, func() PT {
		var zero T
		items = append(items, zero)
		return PT(&items[len(items)-1])
	})
	return items, meta, err
}

// decodeInto decodes the page's items, each into the object next gives.
func decodeInto[T any, PT protoItem[T]](body []byte, next func() PT) (metav1.ListMeta, error) {
	raw, err := listBytes(body)
	if err != nil {
		return metav1.ListMeta{}, err
	}
	if raw == nil {
		var list struct {
			Metadata metav1.ListMeta `json:"metadata"`
			Items    []T             `json:"items"`
		}
		if err := json.Unmarshal(body, &list); err != nil {
			return metav1.ListMeta{}, err
		}
		for i := range list.Items {
			*next() = list.Items[i]
		}
		return list.Metadata, nil
	}
	var meta metav1.ListMeta
	err = listFields(raw, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			return meta.Unmarshal(v)
		case 2:
			return next().Unmarshal(v)
		}
		return nil
	})
	return meta, err
}

package apis

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// Origin is where an object was read from.
type Origin struct {
	// File is the name given to Decode ("-" for standard input).
	File string
	// Document is the 1-based position of the document in the file, counting documents that hold
	// anything (even only a comment) and not the empty ones between two separators.
	Document int
	// Item is the 0-based index in a List's items, or -1 for an object that is a document by itself.
	Item int
}

// String gives "file: document 2" or "file: document 2, items[3]".
func (o Origin) String() string {
	s := fmt.Sprintf("%s: document %d", o.File, o.Document)
	if o.Item >= 0 {
		s += fmt.Sprintf(", items[%d]", o.Item)
	}
	return s
}

// Objects are the NodePools, EC2NodeClasses and NodeOverlays read from one or more manifests, in reading
// order.
type Objects struct {
	NodePools      []*NodePool
	EC2NodeClasses []*EC2NodeClass
	NodeOverlays   []*NodeOverlay
}

// Append adds other's objects after o's.
func (o *Objects) Append(other Objects) {
	o.NodePools = append(o.NodePools, other.NodePools...)
	o.EC2NodeClasses = append(o.EC2NodeClasses, other.EC2NodeClasses...)
	o.NodeOverlays = append(o.NodeOverlays, other.NodeOverlays...)
}

// DecodeError is one problem found while decoding a document.
type DecodeError struct {
	Origin Origin
	Err    error
}

func (e *DecodeError) Error() string { return e.Origin.String() + ": " + e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

// DecodeErrors are all the problems found in a manifest, in reading order.
type DecodeErrors []*DecodeError

func (es DecodeErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Decode reads every NodePool, EC2NodeClass and NodeOverlay in data: YAML with any number of
// "---"-separated documents, or a stream of JSON objects, where each document is an object or a List of
// objects (kind List, NodePoolList, EC2NodeClassList or NodeOverlayList). Decoding is strict: unknown and duplicated fields, values of the wrong type, and
// unsupported apiVersion or kind are errors. Empty documents are skipped. name labels the errors.
//
// Decode goes on past a bad document, so the returned Objects hold every document that decoded; the error,
// if not nil, is a DecodeErrors. Decode neither defaults nor validates.
func Decode(name string, data []byte) (Objects, error) {
	d := decoder{file: name}
	docs, err := splitDocuments(data)
	for i, doc := range docs {
		d.document(i+1, doc)
	}
	if err != nil {
		d.fail(Origin{File: name, Document: len(docs) + 1, Item: -1}, err)
	}
	if len(d.errs) > 0 {
		return d.out, d.errs
	}
	return d.out, nil
}

// splitDocuments returns each document of data as JSON. A document that is not valid YAML carries its
// error so that the documents after it still decode; an error splitting the stream itself ends it.
func splitDocuments(data []byte) ([]docText, error) {
	trimmed := bytes.TrimLeft(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		return splitJSON(trimmed)
	}
	var docs []docText
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		j, err := yaml.YAMLToJSONStrict(doc)
		if err != nil {
			docs = append(docs, docText{err: fmt.Errorf("invalid YAML: %w", err)})
			continue
		}
		docs = append(docs, docText{json: j})
	}
}

func splitJSON(data []byte) ([]docText, error) {
	var docs []docText
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, fmt.Errorf("invalid JSON: %w", err)
		}
		docs = append(docs, docText{json: raw})
	}
}

// docText is one document as JSON, or why it could not be converted.
type docText struct {
	json []byte
	err  error
}

type decoder struct {
	file string
	out  Objects
	errs DecodeErrors
}

func (d *decoder) fail(o Origin, err error) {
	d.errs = append(d.errs, &DecodeError{Origin: o, Err: err})
}

// typeMeta is read first to pick the Go type.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// list is any List kind: its items are decoded one by one.
type list struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   map[string]any    `json:"metadata,omitempty"`
	Items      []json.RawMessage `json:"items"`
}

func (d *decoder) document(n int, doc docText) {
	o := Origin{File: d.file, Document: n, Item: -1}
	if doc.err != nil {
		d.fail(o, doc.err)
		return
	}
	data := bytes.TrimSpace(doc.json)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		return
	}
	var tm typeMeta
	if data[0] != '{' || json.Unmarshal(data, &tm) != nil {
		d.fail(o, fmt.Errorf("a document must be an object with apiVersion and kind, not %s", describeJSON(data)))
		return
	}
	if !isList(tm) {
		d.object(o, tm, data)
		return
	}
	var l list
	if !d.strict(o, data, &l) {
		return
	}
	itemKind := strings.TrimSuffix(tm.Kind, "List")
	for i, item := range l.Items {
		itemOrigin := Origin{File: d.file, Document: n, Item: i}
		var itm typeMeta
		if len(item) == 0 || item[0] != '{' || json.Unmarshal(item, &itm) != nil {
			d.fail(itemOrigin, fmt.Errorf("a list item must be an object with apiVersion and kind, not %s", describeJSON(item)))
			continue
		}
		if tm.Kind != "List" && itm.Kind == "" && itm.APIVersion == "" {
			// Items of a typed list may leave their type to the list.
			itm = typeMeta{APIVersion: tm.APIVersion, Kind: itemKind}
			item = withTypeMeta(item, itm)
		}
		if isList(itm) {
			d.fail(itemOrigin, fmt.Errorf("a %s may not hold another list (%s)", tm.Kind, itm.Kind))
			continue
		}
		if tm.Kind != "List" && itm.Kind != itemKind {
			d.fail(itemOrigin, fmt.Errorf("a %s may only hold %s objects, not kind %q", tm.Kind, itemKind, itm.Kind))
			continue
		}
		d.object(itemOrigin, itm, item)
	}
}

func isList(tm typeMeta) bool {
	switch {
	case tm.APIVersion == "v1" && tm.Kind == "List":
		return true
	case tm.APIVersion == NodePoolAPIVersion && tm.Kind == KindNodePool+"List":
		return true
	case tm.APIVersion == EC2NodeClassAPIVersion && tm.Kind == KindEC2NodeClass+"List":
		return true
	case tm.APIVersion == NodeOverlayAPIVersion && tm.Kind == KindNodeOverlay+"List":
		return true
	}
	return false
}

// withTypeMeta sets apiVersion and kind on a JSON object.
func withTypeMeta(item json.RawMessage, tm typeMeta) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(item, &m); err != nil || m == nil {
		return item
	}
	m["apiVersion"], _ = json.Marshal(tm.APIVersion)
	m["kind"], _ = json.Marshal(tm.Kind)
	out, err := json.Marshal(m)
	if err != nil {
		return item
	}
	return out
}

func (d *decoder) object(o Origin, tm typeMeta, data []byte) {
	want := map[string]string{KindNodePool: NodePoolAPIVersion, KindEC2NodeClass: EC2NodeClassAPIVersion, KindNodeOverlay: NodeOverlayAPIVersion}
	switch {
	case tm.Kind == "":
		d.fail(o, errors.New("kind is required: want NodePool (karpenter.sh/v1), EC2NodeClass (karpenter.k8s.aws/v1) or NodeOverlay (karpenter.sh/v1alpha1)"))
		return
	case want[tm.Kind] == "":
		d.fail(o, fmt.Errorf("unsupported kind %q (apiVersion %q): nodewright reads NodePool (karpenter.sh/v1), EC2NodeClass (karpenter.k8s.aws/v1) and NodeOverlay (karpenter.sh/v1alpha1)", tm.Kind, tm.APIVersion))
		return
	case tm.APIVersion != want[tm.Kind]:
		d.fail(o, fmt.Errorf("unsupported apiVersion %q for kind %s: want %s", tm.APIVersion, tm.Kind, want[tm.Kind]))
		return
	}
	switch tm.Kind {
	case KindNodePool:
		np := &NodePool{}
		if d.strict(o, data, np) {
			np.Origin = o
			d.out.NodePools = append(d.out.NodePools, np)
		}
	case KindEC2NodeClass:
		nc := &EC2NodeClass{}
		if d.strict(o, data, nc) {
			nc.Origin = o
			d.out.EC2NodeClasses = append(d.out.EC2NodeClasses, nc)
		}
	case KindNodeOverlay:
		no := &NodeOverlay{}
		if d.strict(o, data, no) {
			no.Origin = o
			d.out.NodeOverlays = append(d.out.NodeOverlays, no)
		}
	}
}

// strict decodes data into v, reporting unknown and duplicated fields (with their paths) and type errors.
func (d *decoder) strict(o Origin, data []byte, v any) bool {
	strictErrs, err := sjson.UnmarshalStrict(data, v, sjson.DisallowDuplicateFields, sjson.DisallowUnknownFields)
	if err != nil {
		d.fail(o, err)
		return false
	}
	for _, e := range strictErrs {
		d.fail(o, fmt.Errorf("strict decoding error: %w", e))
	}
	return len(strictErrs) == 0
}

// describeJSON names the kind of JSON value data holds, for error messages.
func describeJSON(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "nothing"
	}
	switch data[0] {
	case '{':
		return "an object with a malformed apiVersion or kind"
	case '[':
		return "a list"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

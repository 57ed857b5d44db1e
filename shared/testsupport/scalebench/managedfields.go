package scalebench

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fieldSet builds a managedFields FieldsV1 document ({"f:metadata":{"f:labels":{"f:app":{}}}}) from
// dotted paths, as the API server records which fields a manager owns.
type fieldSet map[string]fieldSet

// add records a path such as "metadata", "labels", "app.kubernetes.io/name": each segment becomes an
// "f:" key (segments starting with "k:" or "v:" are kept as they are: list keys and set values).
func (f fieldSet) add(path ...string) fieldSet {
	cur := f
	for _, seg := range path {
		if !strings.HasPrefix(seg, "k:") && !strings.HasPrefix(seg, "v:") && seg != "." {
			seg = "f:" + seg
		}
		next, ok := cur[seg]
		if !ok {
			next = fieldSet{}
			cur[seg] = next
		}
		cur = next
	}
	return f
}

// json writes the set as the API server stores it: keys sorted, "." marking an owned list element.
func (f fieldSet) json() []byte {
	var b strings.Builder
	f.write(&b)
	return []byte(b.String())
}

func (f fieldSet) write(b *strings.Builder) {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(k, `"`, `\"`))
		b.WriteString(`":`)
		f[k].write(b)
	}
	b.WriteByte('}')
}

// entry is one managedFields entry.
func entry(manager string, op metav1.ManagedFieldsOperationType, subresource string, at time.Time, f fieldSet) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(at.Truncate(time.Second))
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", Time: &t, FieldsType: "FieldsV1",
		FieldsV1: &metav1.FieldsV1{Raw: f.json()}, Subresource: subresource}
}

// listKeys are the merge keys of the keyed lists in pod objects (by field name), as the API server's
// structured-merge schema has them; other lists of objects are atomic and owned whole.
var listKeys = map[string][]string{
	"containers": {"name"}, "initContainers": {"name"}, "env": {"name"}, "ports": {"containerPort", "protocol"},
	"volumeMounts": {"mountPath"}, "volumes": {"name"}, "ownerReferences": {"uid"}, "conditions": {"type"},
	"podIPs": {"ip"}, "hostIPs": {"ip"}, "topologySpreadConstraints": {"topologyKey", "whenUnsatisfiable"},
}

// fieldsOf is the field set of a JSON-decoded value (maps of any, slices, scalars) as the API server
// records an update that set every field in it: map keys become "f:" entries, keyed lists "k:" entries,
// and everything else (scalars, atomic lists) a leaf.
func fieldsOf(v any, name string) fieldSet {
	out := fieldSet{}
	switch x := v.(type) {
	case map[string]any:
		for k, child := range x {
			out["f:"+k] = fieldsOf(child, k)
		}
	case []any:
		keys, keyed := listKeys[name]
		if !keyed {
			return out
		}
		for _, item := range x {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			var b strings.Builder
			b.WriteString("k:{")
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				val, _ := json.Marshal(m[k])
				b.WriteString(`"` + k + `":` + string(val))
			}
			b.WriteByte('}')
			f := fieldsOf(m, "")
			f["."] = fieldSet{}
			out[b.String()] = f
		}
	}
	return out
}

// fieldsOfObject is fieldsOf for a typed object (its JSON form); nil when it cannot be encoded.
func fieldsOfObject(obj any) fieldSet {
	b, err := json.Marshal(obj)
	if err != nil {
		return fieldSet{}
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return fieldSet{}
	}
	return fieldsOf(v, "")
}

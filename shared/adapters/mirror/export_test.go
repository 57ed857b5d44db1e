package mirror

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// ReplacementOf is what a Writer's replace of the NodeClaim mirror o hands to API.Replace: the object
// (without its hash) and the status.
func ReplacementOf(o Object) (obj, status *unstructured.Unstructured, err error) {
	w := Writer{kind: NodeClaims}
	if obj, err = w.object(o, ""); err != nil {
		return nil, nil, err
	}
	status, err = w.status(o)
	return obj, status, err
}

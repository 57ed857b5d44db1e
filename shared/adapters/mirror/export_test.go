package mirror

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// ReplacementOf is what a Writer's replace of the NodeClaim mirror o hands to API.Replace.
func ReplacementOf(o Object) (obj, status *unstructured.Unstructured, err error) {
	return (&Writer{kind: NodeClaims}).replacement(o)
}

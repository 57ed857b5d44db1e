package mirror

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hashes are the hashes of a mirror's two writes: its labels and spec (the object) and its status
// (conditions' times left out: a condition's time is written with its status, and a later record of the
// same status at another time does not rewrite the mirror). Written together as HashAnnotation,
// "<object>.<status>".
type hashes struct{ object, status string }

func (h hashes) String() string { return h.object + "." + h.status }

// parseHashes reads HashAnnotation; ok is false when it is missing or not of the writer's making.
func parseHashes(s string) (hashes, bool) {
	o, st, ok := strings.Cut(s, ".")
	if !ok || len(o) != hashLen || len(st) != hashLen {
		return hashes{}, false
	}
	return hashes{object: o, status: st}, true
}

const hashLen = 16

func hashOf(o Object) (hashes, error) {
	obj, err := digest(struct {
		Labels map[string]string `json:"labels"`
		Spec   any               `json:"spec"`
		// Finalizers are left out when there are none, so mirrors without any hash as before.
		Finalizers []string `json:"finalizers,omitempty"`
	}{o.Labels, o.Spec, o.Finalizers})
	if err != nil {
		return hashes{}, err
	}
	if st, ok := o.Status.(NodeClaimStatus); ok {
		// The common case, without a round trip through JSON: the conditions copied with their times zeroed.
		st.Conditions = slices.Clone(st.Conditions)
		for i := range st.Conditions {
			st.Conditions[i].LastTransitionTime = metav1.Time{}
		}
		s, err := digest(st)
		return hashes{object: obj, status: s}, err
	}
	status, err := json.Marshal(o.Status)
	if err != nil {
		return hashes{}, err
	}
	var generic map[string]any
	if err := json.Unmarshal(status, &generic); err != nil {
		return hashes{}, err
	}
	if conds, ok := generic["conditions"].([]any); ok {
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok {
				delete(m, "lastTransitionTime")
			}
		}
	}
	st, err := digest(generic)
	if err != nil {
		return hashes{}, err
	}
	return hashes{object: obj, status: st}, nil
}

// digest hashes v's JSON (maps are encoded in key order, so equal content hashes alike).
func digest(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:hashLen], nil
}

package scheduling

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// setLabelValue sets l[key] to EC2's name for a processor or accelerator (e.g. "Radeon Pro V520",
// "Gaudi HL-205") in the form Karpenter gives it: lower case, words joined by hyphens
// ("radeon-pro-v520"). A name that still is not a valid label value after that (a character a label
// cannot hold, or longer than 63) is left out rather than set: the label is patched onto the Node at
// registration, and one invalid value fails the whole patch, so the node would never register.
func setLabelValue(l map[string]string, key, name string) {
	v := strings.ToLower(strings.Join(strings.Fields(name), "-"))
	if v == "" || len(validation.IsValidLabelValue(v)) > 0 {
		return
	}
	l[key] = v
}

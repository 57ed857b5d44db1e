package apis

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ObjectError is one validation error of one decoded object.
type ObjectError struct {
	Origin Origin
	Kind   string
	Name   string
	Err    *field.Error
}

// Error reads "file: document 1: NodePool/default: spec.weight: Invalid value: 0: …".
func (e ObjectError) Error() string {
	return fmt.Sprintf("%s: %s/%s: %s", e.Origin, e.Kind, e.Name, e.Err.Error())
}

// DefaultAndValidate sets defaults on every object (in place) and validates each one, and the set as a
// whole: no two NodePools, no two EC2NodeClasses, and no two NodeOverlays may share a name. (Whether the
// NodeOverlay feature gate allows NodeOverlays at all is the caller's to check: nodeoverlay.GateErrors.) It returns every error, in reading
// order; none means the configuration is valid.
func DefaultAndValidate(objs Objects) []ObjectError {
	var out []ObjectError
	add := func(o Origin, kind, name string, errs field.ErrorList) {
		for _, e := range errs {
			out = append(out, ObjectError{Origin: o, Kind: kind, Name: name, Err: e})
		}
	}
	nodePools := map[string]bool{}
	for _, np := range objs.NodePools {
		np.SetDefaults()
		add(np.Origin, KindNodePool, np.Name, ValidateNodePool(np))
		if np.Name != "" && nodePools[np.Name] {
			add(np.Origin, KindNodePool, np.Name, field.ErrorList{field.Duplicate(field.NewPath("metadata", "name"), np.Name)})
		}
		nodePools[np.Name] = true
	}
	nodeClasses := map[string]bool{}
	for _, nc := range objs.EC2NodeClasses {
		nc.SetDefaults()
		add(nc.Origin, KindEC2NodeClass, nc.Name, ValidateEC2NodeClass(nc))
		if nc.Name != "" && nodeClasses[nc.Name] {
			add(nc.Origin, KindEC2NodeClass, nc.Name, field.ErrorList{field.Duplicate(field.NewPath("metadata", "name"), nc.Name)})
		}
		nodeClasses[nc.Name] = true
	}
	overlays := map[string]bool{}
	for _, no := range objs.NodeOverlays {
		add(no.Origin, KindNodeOverlay, no.Name, ValidateNodeOverlay(no))
		if no.Name != "" && overlays[no.Name] {
			add(no.Origin, KindNodeOverlay, no.Name, field.ErrorList{field.Duplicate(field.NewPath("metadata", "name"), no.Name)})
		}
		overlays[no.Name] = true
	}
	return out
}

// MissingNodeClasses returns, for each NodePool whose nodeClassRef names an EC2NodeClass not among objs, a
// warning. Karpenter accepts such a NodePool (it stays NotReady until the class exists), so this is advice
// for a complete configuration, not an error.
func MissingNodeClasses(objs Objects) []string {
	have := map[string]bool{}
	for _, nc := range objs.EC2NodeClasses {
		have[nc.Name] = true
	}
	var out []string
	for _, np := range objs.NodePools {
		ref := np.Spec.Template.Spec.NodeClassRef
		if ref != nil && ref.Name != "" && !have[ref.Name] {
			out = append(out, fmt.Sprintf("%s: NodePool/%s: spec.template.spec.nodeClassRef.name: EC2NodeClass %q is not in the given manifests", np.Origin, np.Name, ref.Name))
		}
	}
	return out
}

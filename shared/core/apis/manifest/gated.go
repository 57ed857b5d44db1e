package manifest

import (
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/nodeoverlay"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// Gated returns an error, naming the object and field, for every object the deployment's feature gates
// refuse: a static NodePool (spec.replicas) while StaticCapacity is off, a NodeOverlay while NodeOverlay
// is off. `nodewright validate --feature-gates`, `nodewright apply` (with the stored gates) and the CDK
// app's synth (with its featureGates context value) all refuse with it, so they refuse alike.
func Gated(objs apis.Objects, gates settings.FeatureGates) []apis.ObjectError {
	out := apis.RefuseGated(objs, apis.Gates{StaticCapacity: gates.StaticCapacity})
	return append(out, nodeoverlay.GateErrors(objs, gates)...)
}

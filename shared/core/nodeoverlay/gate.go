package nodeoverlay

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// GateOff is the reason every NodeOverlay is refused while the NodeOverlay feature gate is off.
const GateOff = "NodeOverlay is alpha in Karpenter and its feature gate NodeOverlay is off: set featureGates " +
	"NodeOverlay=true (the CDK context value featureGates, or --feature-gates for the nodewright CLI) or remove the NodeOverlay"

// GateErrors refuses every NodeOverlay of objs unless gates turn NodeOverlay on: a configuration is never
// accepted with an object silently ignored.
func GateErrors(objs apis.Objects, gates settings.FeatureGates) []apis.ObjectError {
	if gates.NodeOverlay {
		return nil
	}
	out := make([]apis.ObjectError, 0, len(objs.NodeOverlays))
	for _, no := range objs.NodeOverlays {
		out = append(out, apis.ObjectError{Origin: no.Origin, Kind: apis.KindNodeOverlay, Name: no.Name,
			Err: field.Forbidden(field.NewPath("kind"), GateOff)})
	}
	return out
}

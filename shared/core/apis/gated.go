package apis

import (
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Gates are the feature gates (Karpenter's FEATURE_GATES, shared/core/settings) that decide whether a valid
// field may be deployed. Validation (ValidateNodePool) accepts such fields on their own; the places that
// know the deployment's gates — `cdk synth`, `nodewright apply` and `nodewright validate
// --feature-gates` — refuse them with RefuseGated when their gate is off.
type Gates struct {
	// StaticCapacity allows static NodePools (spec.replicas).
	StaticCapacity bool
}

// StaticCapacityOff is why a NodePool with spec.replicas is refused while the StaticCapacity gate is off.
const StaticCapacityOff = "static NodePools need the feature gate StaticCapacity (off by default): " +
	"deploy with the CDK context value featureGates=StaticCapacity=true"

// RefuseGated returns an error, naming the field, for each object that uses a field whose feature gate
// is off in g, in reading order.
func RefuseGated(objs Objects, g Gates) []ObjectError {
	var out []ObjectError
	for _, np := range objs.NodePools {
		if np != nil && np.IsStatic() && !g.StaticCapacity {
			out = append(out, ObjectError{Origin: np.Origin, Kind: KindNodePool, Name: np.Name,
				Err: field.Forbidden(field.NewPath("spec", "replicas"), StaticCapacityOff)})
		}
	}
	return out
}

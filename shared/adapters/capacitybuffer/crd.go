package capacitybuffer

import _ "embed"

// CRD is the CapacityBuffer CustomResourceDefinition as YAML, for a cluster that does not have it yet.
// The API belongs to SIG Autoscaling: Nodewright neither installs it by default nor changes it.
//
//go:embed crd.yaml
var CRD []byte

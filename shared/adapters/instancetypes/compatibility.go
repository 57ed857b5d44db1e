package instancetypes

import (
	"strings"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// incompatible says why an instance type cannot run a node of the node class at all, or "" when it can.
// Such a type is left out of the class's instance types, as Karpenter's node-class compatibility filter
// leaves it out: a node launched on it would never join, and the claim would time out and be launched
// again the same way.
//
// The one such rule today is the first-generation Graviton family (a1), which the AL2023 AMIs do not
// support. The NodeClass fields behind Karpenter's other compatibility rules (network interfaces, nested
// virtualization, placement groups, connection tracking) are refused when the class is read.
func incompatible(name string, cfg scheduling.NodeClassConfig) string {
	family, _, _ := strings.Cut(name, ".")
	if family == "a1" && cfg.Family() == scheduling.AMIFamilyAL2023 {
		return "a1 instances cannot run the AL2023 AMIs"
	}
	return ""
}

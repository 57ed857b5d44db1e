package main

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// NodeIdentities is what the deployed EC2NodeClasses ask the provisioner to hand to instances and read
// on their behalf: IAM role names (Nodewright makes an instance profile for each), instance profiles
// the classes name themselves, SSM parameters their amiSelectorTerms name, and the KMS keys their
// blockDeviceMappings encrypt volumes with (kmsKeyID as written: key id, key ARN, alias or alias ARN).
type NodeIdentities struct {
	Roles            []string
	InstanceProfiles []string
	SSMParameters    []string
	VolumeKeys       []string
}

// NodeIdentitiesFrom reads the EC2NodeClasses among items. Each list is sorted and without repeats.
func NodeIdentitiesFrom(items []state.ConfigItem) (NodeIdentities, error) {
	roles, profiles, params, keys := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, it := range items {
		if it.Kind != state.KindEC2NodeClass {
			continue
		}
		var nc apis.EC2NodeClass
		if err := json.Unmarshal([]byte(it.Spec), &nc); err != nil {
			return NodeIdentities{}, fmt.Errorf("EC2NodeClass/%s: decoding spec: %w", it.Name, err)
		}
		switch {
		case nc.Spec.Role != "":
			roles[nc.Spec.Role] = true
		case nc.Spec.InstanceProfile != nil && *nc.Spec.InstanceProfile != "":
			profiles[*nc.Spec.InstanceProfile] = true
		default:
			return NodeIdentities{}, fmt.Errorf("EC2NodeClass/%s: spec.role or spec.instanceProfile is required", it.Name)
		}
		for _, term := range nc.Spec.AMISelectorTerms {
			if term.SSMParameter != "" {
				params[term.SSMParameter] = true
			}
		}
		for _, bdm := range nc.Spec.BlockDeviceMappings {
			if bdm.EBS != nil && bdm.EBS.KMSKeyID != nil && *bdm.EBS.KMSKeyID != "" {
				keys[*bdm.EBS.KMSKeyID] = true
			}
		}
	}
	return NodeIdentities{Roles: sorted(roles), InstanceProfiles: sorted(profiles), SSMParameters: sorted(params),
		VolumeKeys: sorted(keys)}, nil
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

package apis

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

const (
	maxSelectorTerms       = 30
	maxSelectorTags        = 20
	maxBlockDeviceMappings = 50
	maxNetworkInterfaces   = 150
	maxAliasLength         = 30
	emptyTagMessage        = "empty tag keys or values aren't supported"
)

var (
	subnetIDPattern              = regexp.MustCompile(`^subnet-[0-9a-z]+$`)
	securityGroupIDPattern       = regexp.MustCompile(`^sg-[0-9a-z]+$`)
	capacityReservationIDPattern = regexp.MustCompile(`^cr-[0-9a-z]+$`)
	ownerIDPattern               = regexp.MustCompile(`^[0-9]{12}$`)
	placementGroupIDPattern      = regexp.MustCompile(`^pg-[0-9a-z]+$`)
	amiIDPattern                 = regexp.MustCompile(`^ami-[0-9a-z]+$`)
	aliasPattern                 = regexp.MustCompile(`^[a-zA-Z0-9]+@.+$`)
	volumeSizePattern            = regexp.MustCompile(`^((?:[1-9][0-9]{0,3}|[1-4][0-9]{4}|[5][0-8][0-9]{3}|59000)Gi|(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|[6][0-3][0-9]{3}|64000)G|([1-9]||[1-5][0-7]|58)Ti|([1-9]||[1-5][0-9]|6[0-3]|64)T)$`)

	enabledDisabled        = []string{"enabled", "disabled"}
	httpTokensValues       = []string{"required", "optional"}
	instanceMatchCriteria  = []string{"open", "targeted"}
	instanceStorePolicies  = []string{string(InstanceStorePolicyRAID0)}
	interfaceTypes         = []string{string(InterfaceTypeInterface), string(InterfaceTypeEFAOnly)}
	aliasFamilyNames       = []string{"al2", "al2023", "bottlerocket", "windows2019", "windows2022", "windows2025"}
	windowsAliasFamilyName = []string{"windows2019", "windows2022", "windows2025"}
)

// ValidateEC2NodeClass checks an EC2NodeClass against every rule of Karpenter's CRD (patterns, enums,
// bounds, CEL rules) and its kubelet validation, and refuses settings Nodewright does not implement yet.
// Call it on a defaulted object (SetDefaults).
func ValidateEC2NodeClass(nc *EC2NodeClass) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateObjectMeta(&nc.ObjectMeta)...)
	spec := field.NewPath("spec")
	s := &nc.Spec
	errs = append(errs, validateSubnetTerms(s.SubnetSelectorTerms, spec.Child("subnetSelectorTerms"))...)
	errs = append(errs, validateSecurityGroupTerms(s.SecurityGroupSelectorTerms, spec.Child("securityGroupSelectorTerms"))...)
	errs = append(errs, validateCapacityReservationTerms(s.CapacityReservationSelectorTerms, spec.Child("capacityReservationSelectorTerms"))...)
	errs = append(errs, validatePlacementGroup(s.PlacementGroupSelector, spec.Child("placementGroupSelector"))...)
	if s.IPPrefixCount != nil && *s.IPPrefixCount < 0 {
		errs = append(errs, field.Invalid(spec.Child("ipPrefixCount"), *s.IPPrefixCount, "must be greater than or equal to 0"))
	}
	errs = append(errs, validateAMI(s, spec)...)
	errs = append(errs, validateRole(s, spec)...)
	errs = append(errs, validateTags(s.Tags, spec.Child("tags"))...)
	errs = append(errs, ValidateKubelet(s.Kubelet, spec.Child("kubelet"))...)
	errs = append(errs, validateBlockDeviceMappings(s.BlockDeviceMappings, spec.Child("blockDeviceMappings"))...)
	if p := s.InstanceStorePolicy; p != nil && !slices.Contains(instanceStorePolicies, string(*p)) {
		errs = append(errs, field.NotSupported(spec.Child("instanceStorePolicy"), *p, instanceStorePolicies))
	}
	errs = append(errs, validateNetworkInterfaces(s.NetworkInterfaces, spec.Child("networkInterfaces"))...)
	errs = append(errs, validateMetadataOptions(s.MetadataOptions, spec.Child("metadataOptions"))...)
	errs = append(errs, validateConnectionTracking(s.ConnectionTracking, spec.Child("connectionTracking"))...)
	if c := s.CPUOptions; c != nil && c.NestedVirtualization != nil {
		errs = append(errs, validateEnum(spec.Child("cpuOptions", "nestedVirtualization"), *c.NestedVirtualization, enabledDisabled)...)
	}
	errs = append(errs, unsupportedEC2NodeClassFields(nc)...)
	return errs
}

func validateRole(s *EC2NodeClassSpec, spec *field.Path) field.ErrorList {
	const exactlyOne = "must specify exactly one of ['role', 'instanceProfile']"
	switch {
	case s.Role == "" && s.InstanceProfile == nil:
		return field.ErrorList{field.Required(spec.Child("role"), exactlyOne)}
	case s.Role != "" && s.InstanceProfile != nil:
		return field.ErrorList{field.Forbidden(spec.Child("instanceProfile"), exactlyOne)}
	case s.InstanceProfile != nil && *s.InstanceProfile == "":
		return field.ErrorList{field.Invalid(spec.Child("instanceProfile"), "", "instanceProfile cannot be empty")}
	}
	return nil
}

// nodewrightTagPrefix is the prefix of the tag keys Nodewright sets on what it creates to prove it owns it;
// karpenterClusterTagKey marks Karpenter v1.0's launch templates, which Karpenter deletes.
const (
	nodewrightTagPrefix    = "nodewright.sh/"
	karpenterClusterTagKey = "karpenter.k8s.aws/cluster"
)

// validateTags refuses empty keys and the tags Nodewright sets itself.
func validateTags(tags map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(tags) {
		switch {
		case k == "":
			errs = append(errs, field.Invalid(path.Key(k), tags[k], "empty tag keys aren't supported"))
		case strings.HasPrefix(k, ClusterTagKeyPrefix):
			errs = append(errs, field.Invalid(path.Key(k), tags[k], "tag contains a restricted tag matching "+ClusterTagKeyPrefix+"/"))
		case k == EKSClusterNameTagKey || k == NodePoolTagKey || k == NodeClaimTagKey || k == NodeClassTagKey:
			errs = append(errs, field.Invalid(path.Key(k), tags[k], "tag contains a restricted tag matching "+k))
		case strings.HasPrefix(k, nodewrightTagPrefix):
			errs = append(errs, field.Invalid(path.Key(k), tags[k], "tag contains a restricted tag matching "+nodewrightTagPrefix+
				" (Nodewright's ownership tags)"))
		case k == karpenterClusterTagKey:
			errs = append(errs, field.Invalid(path.Key(k), tags[k], "tag contains a restricted tag matching "+k+
				" (Karpenter deletes launch templates that carry it)"))
		}
	}
	return errs
}

func validateBlockDeviceMappings(bdms []*BlockDeviceMapping, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(bdms) > maxBlockDeviceMappings {
		errs = append(errs, field.TooMany(path, len(bdms), maxBlockDeviceMappings))
	}
	roots := 0
	for i, b := range bdms {
		p := path.Index(i)
		if b == nil {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		if b.RootVolume {
			roots++
			if roots == 2 {
				errs = append(errs, field.Invalid(p.Child("rootVolume"), true, "must have only one blockDeviceMappings with rootVolume"))
			}
		}
		if b.EBS != nil {
			errs = append(errs, validateEBS(b.EBS, p.Child("ebs"))...)
		}
	}
	return errs
}

func validateEBS(e *BlockDevice, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if e.SnapshotID == nil && e.VolumeSize == nil {
		errs = append(errs, field.Required(path, "snapshotID or volumeSize must be defined"))
	}
	if r := e.VolumeInitializationRate; r != nil {
		if e.SnapshotID == nil || *e.SnapshotID == "" {
			errs = append(errs, field.Required(path.Child("snapshotID"), "snapshotID must be set when volumeInitializationRate is set"))
		}
		errs = append(errs, validateRange(path.Child("volumeInitializationRate"), int64(*r), 100, 300)...)
	}
	if e.VolumeSize != nil {
		errs = append(errs, validatePattern(path.Child("volumeSize"), *e.VolumeSize, volumeSizePattern)...)
	}
	if e.VolumeType != nil {
		errs = append(errs, validateEnum(path.Child("volumeType"), *e.VolumeType, VolumeTypes)...)
	}
	return errs
}

func validateNetworkInterfaces(nis []*NetworkInterface, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(nis) > maxNetworkInterfaces {
		errs = append(errs, field.TooMany(path, len(nis), maxNetworkInterfaces))
	}
	type slot struct{ card, device int32 }
	seen := map[slot]bool{}
	efa := map[int32]int{}
	primary := false
	for i, ni := range nis {
		p := path.Index(i)
		if ni == nil {
			errs = append(errs, field.Required(p, ""))
			continue
		}
		if ni.NetworkCardIndex < 0 {
			errs = append(errs, field.Invalid(p.Child("networkCardIndex"), ni.NetworkCardIndex, "must be greater than or equal to 0"))
		}
		if ni.DeviceIndex < 0 {
			errs = append(errs, field.Invalid(p.Child("deviceIndex"), ni.DeviceIndex, "must be greater than or equal to 0"))
		}
		if ni.InterfaceType == "" {
			errs = append(errs, field.Required(p.Child("interfaceType"), ""))
		} else {
			errs = append(errs, validateEnum(p.Child("interfaceType"), string(ni.InterfaceType), interfaceTypes)...)
		}
		s := slot{ni.NetworkCardIndex, ni.DeviceIndex}
		if seen[s] {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("networkCardIndex %d, deviceIndex %d", s.card, s.device)))
		}
		seen[s] = true
		if ni.InterfaceType == InterfaceTypeEFAOnly {
			efa[ni.NetworkCardIndex]++
			if efa[ni.NetworkCardIndex] == 2 {
				errs = append(errs, field.Invalid(p.Child("interfaceType"), ni.InterfaceType, "can have at most one efa-only interface per network card"))
			}
		}
		if s == (slot{}) && ni.InterfaceType == InterfaceTypeInterface {
			primary = true
		}
	}
	if len(nis) > 0 && !primary {
		errs = append(errs, field.Required(path, "networkInterfaces must include a primary interface with interfaceType='interface'"))
	}
	return errs
}

func validateMetadataOptions(m *MetadataOptions, path *field.Path) field.ErrorList {
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.HTTPEndpoint != nil {
		errs = append(errs, validateEnum(path.Child("httpEndpoint"), *m.HTTPEndpoint, enabledDisabled)...)
	}
	if m.HTTPProtocolIPv6 != nil {
		errs = append(errs, validateEnum(path.Child("httpProtocolIPv6"), *m.HTTPProtocolIPv6, enabledDisabled)...)
	}
	if m.HTTPPutResponseHopLimit != nil {
		errs = append(errs, validateRange(path.Child("httpPutResponseHopLimit"), *m.HTTPPutResponseHopLimit, 1, 64)...)
	}
	if m.HTTPTokens != nil {
		errs = append(errs, validateEnum(path.Child("httpTokens"), *m.HTTPTokens, httpTokensValues)...)
	}
	return errs
}

func validateConnectionTracking(c *ConnectionTracking, path *field.Path) field.ErrorList {
	if c == nil {
		return nil
	}
	var errs field.ErrorList
	if c.TCPEstablishedTimeout == nil && c.UDPStreamTimeout == nil && c.UDPTimeout == nil {
		errs = append(errs, field.Required(path, "at least one of tcpEstablishedTimeout, udpStreamTimeout, or udpTimeout must be set"))
	}
	if v := c.TCPEstablishedTimeout; v != nil {
		errs = append(errs, validateRange(path.Child("tcpEstablishedTimeout"), int64(*v), 60, 432000)...)
	}
	if v := c.UDPStreamTimeout; v != nil {
		errs = append(errs, validateRange(path.Child("udpStreamTimeout"), int64(*v), 60, 180)...)
	}
	if v := c.UDPTimeout; v != nil {
		errs = append(errs, validateRange(path.Child("udpTimeout"), int64(*v), 30, 60)...)
	}
	return errs
}

func validateEnum(path *field.Path, value string, supported []string) field.ErrorList {
	if slices.Contains(supported, value) {
		return nil
	}
	return field.ErrorList{field.NotSupported(path, value, supported)}
}

func validateRange(path *field.Path, value, lo, hi int64) field.ErrorList {
	if value >= lo && value <= hi {
		return nil
	}
	return field.ErrorList{field.Invalid(path, value, fmt.Sprintf("must be between %d and %d, inclusive", lo, hi))}
}

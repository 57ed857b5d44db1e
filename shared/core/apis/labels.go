package apis

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// API groups, versions and kinds Nodewright reads.
const (
	// Group is Karpenter's core API group.
	Group = "karpenter.sh"
	// AWSGroup is the AWS provider's API group.
	AWSGroup = "karpenter.k8s.aws"
	// CompatibilityGroup is the AWS provider's group for compatibility annotations.
	CompatibilityGroup = "compatibility." + AWSGroup

	// NodePoolAPIVersion is the apiVersion of NodePool and NodeClaim.
	NodePoolAPIVersion = Group + "/v1"
	// EC2NodeClassAPIVersion is the apiVersion of EC2NodeClass.
	EC2NodeClassAPIVersion = AWSGroup + "/v1"
	// NodeOverlayAPIVersion is the apiVersion of NodeOverlay (alpha, feature gate NodeOverlay).
	NodeOverlayAPIVersion = Group + "/v1alpha1"

	KindNodePool     = "NodePool"
	KindEC2NodeClass = "EC2NodeClass"
	KindNodeClaim    = "NodeClaim"
	KindNodeOverlay  = "NodeOverlay"
)

// Capacity types, the values of CapacityTypeLabelKey.
const (
	CapacityTypeOnDemand = "on-demand"
	CapacityTypeSpot     = "spot"
	CapacityTypeReserved = "reserved"
)

// Architectures, the values of kubernetes.io/arch that EC2 offers.
const (
	ArchitectureAmd64 = "amd64"
	ArchitectureArm64 = "arm64"
)

// Labels Karpenter owns or sets on NodeClaims and Nodes.
const (
	NodePoolLabelKey            = Group + "/nodepool"
	CapacityTypeLabelKey        = Group + "/capacity-type"
	NodeRegisteredLabelKey      = Group + "/registered"
	NodeInitializedLabelKey     = Group + "/initialized"
	NodeDoNotSyncTaintsLabelKey = Group + "/do-not-sync-taints"
	// ExcludeFromLoadBalancersLabelKey is set to ExcludeFromLoadBalancersLabelValue while a node drains.
	ExcludeFromLoadBalancersLabelKey   = corev1.LabelNodeExcludeBalancers
	ExcludeFromLoadBalancersLabelValue = "karpenter"

	// NodeClassLabelKey names the EC2NodeClass a node was launched from.
	NodeClassLabelKey = AWSGroup + "/ec2nodeclass"
	// LabelTopologyZoneID is the zone id (use1-az1) of a node.
	LabelTopologyZoneID = "topology.k8s.aws/zone-id"

	LabelCapacityReservationID                = AWSGroup + "/capacity-reservation-id"
	LabelCapacityReservationType              = AWSGroup + "/capacity-reservation-type"
	LabelCapacityReservationInterruptible     = AWSGroup + "/capacity-reservation-interruptible"
	LabelInstanceHypervisor                   = AWSGroup + "/instance-hypervisor"
	LabelInstanceEncryptionInTransitSupported = AWSGroup + "/instance-encryption-in-transit-supported"
	LabelInstanceNitroEnclavesSupported       = AWSGroup + "/nitro-sandbox"
	LabelInstanceCategory                     = AWSGroup + "/instance-category"
	LabelInstanceCapabilityFlex               = AWSGroup + "/instance-capability-flex"
	LabelInstanceFamily                       = AWSGroup + "/instance-family"
	LabelInstanceGeneration                   = AWSGroup + "/instance-generation"
	LabelInstanceLocalNVME                    = AWSGroup + "/instance-local-nvme"
	LabelInstanceSize                         = AWSGroup + "/instance-size"
	LabelInstanceCPU                          = AWSGroup + "/instance-cpu"
	LabelInstanceCPUManufacturer              = AWSGroup + "/instance-cpu-manufacturer"
	LabelInstanceCPUSustainedClockSpeedMhz    = AWSGroup + "/instance-cpu-sustained-clock-speed-mhz"
	LabelInstanceMemory                       = AWSGroup + "/instance-memory"
	LabelInstanceEBSBandwidth                 = AWSGroup + "/instance-ebs-bandwidth"
	LabelInstanceNetworkBandwidth             = AWSGroup + "/instance-network-bandwidth"
	LabelInstanceGPUName                      = AWSGroup + "/instance-gpu-name"
	LabelInstanceGPUManufacturer              = AWSGroup + "/instance-gpu-manufacturer"
	LabelInstanceGPUCount                     = AWSGroup + "/instance-gpu-count"
	LabelInstanceGPUMemory                    = AWSGroup + "/instance-gpu-memory"
	LabelInstanceAcceleratorName              = AWSGroup + "/instance-accelerator-name"
	LabelInstanceAcceleratorManufacturer      = AWSGroup + "/instance-accelerator-manufacturer"
	LabelInstanceAcceleratorCount             = AWSGroup + "/instance-accelerator-count"
	LabelInstanceTenancy                      = AWSGroup + "/instance-tenancy"
	LabelPlacementGroupID                     = AWSGroup + "/placement-group-id"
	LabelPlacementGroupPartition              = AWSGroup + "/placement-group-partition"
)

// Annotations Karpenter reads or writes.
const (
	DoNotDisruptAnnotationKey                  = Group + "/do-not-disrupt"
	NodePoolHashAnnotationKey                  = Group + "/nodepool-hash"
	NodePoolHashVersionAnnotationKey           = Group + "/nodepool-hash-version"
	NodeClaimTerminationTimestampAnnotationKey = Group + "/nodeclaim-termination-timestamp"
	NodeClaimMinValuesRelaxedAnnotationKey     = Group + "/nodeclaim-min-values-relaxed"
	DRADriversAnnotationKey                    = Group + "/requested-dra-drivers"
	PriceOverlayAppliedAnnotationKey           = Group + "/price-overlay-applied"
	CapacityOverlayAppliedAnnotationKey        = Group + "/capacity-overlay-applied"

	EC2NodeClassHashAnnotationKey        = AWSGroup + "/ec2nodeclass-hash"
	EC2NodeClassHashVersionAnnotationKey = AWSGroup + "/ec2nodeclass-hash-version"
	InstanceProfileAnnotationKey         = AWSGroup + "/instance-profile-name"
	InstanceTaggedAnnotationKey          = AWSGroup + "/tagged"
	ClusterNameTaggedAnnotationKey       = CompatibilityGroup + "/cluster-name-tagged"
)

// Finalizers.
const (
	TerminationFinalizer             = Group + "/termination"
	EC2NodeClassTerminationFinalizer = AWSGroup + "/termination"
)

// Taints Karpenter places on nodes.
const (
	DisruptedTaintKey    = Group + "/disrupted"
	UnregisteredTaintKey = Group + "/unregistered"
)

// DisruptedNoScheduleTaint marks a node chosen for disruption or being terminated.
var DisruptedNoScheduleTaint = corev1.Taint{Key: DisruptedTaintKey, Effect: corev1.TaintEffectNoSchedule}

// UnregisteredNoExecuteTaint is expected on a new node until it registers.
var UnregisteredNoExecuteTaint = corev1.Taint{Key: UnregisteredTaintKey, Effect: corev1.TaintEffectNoExecute}

// EC2 tag keys Nodewright sets on what it launches, and which users may therefore not set.
const (
	NodePoolTagKey       = NodePoolLabelKey
	NodeClaimTagKey      = Group + "/nodeclaim"
	NodeClassTagKey      = NodeClassLabelKey
	EKSClusterNameTagKey = "eks:eks-cluster-name"
	ClusterTagKeyPrefix  = "kubernetes.io/cluster"
	NameTagKey           = "Name"
)

// WellKnownLabels are the node labels Nodewright knows values for and may use in requirements. A label in a
// restricted domain is allowed in requirements and template labels only if it is listed here.
var WellKnownLabels = setOf(
	NodePoolLabelKey,
	corev1.LabelTopologyZone,
	corev1.LabelTopologyRegion,
	corev1.LabelInstanceTypeStable,
	corev1.LabelArchStable,
	corev1.LabelOSStable,
	CapacityTypeLabelKey,
	corev1.LabelWindowsBuild,
	LabelCapacityReservationID,
	LabelCapacityReservationType,
	LabelCapacityReservationInterruptible,
	LabelInstanceHypervisor,
	LabelInstanceEncryptionInTransitSupported,
	LabelInstanceNitroEnclavesSupported,
	LabelInstanceCategory,
	LabelInstanceCapabilityFlex,
	LabelInstanceFamily,
	LabelInstanceGeneration,
	LabelInstanceSize,
	LabelInstanceLocalNVME,
	LabelInstanceCPU,
	LabelInstanceCPUManufacturer,
	LabelInstanceCPUSustainedClockSpeedMhz,
	LabelInstanceMemory,
	LabelInstanceEBSBandwidth,
	LabelInstanceNetworkBandwidth,
	LabelInstanceGPUName,
	LabelInstanceGPUManufacturer,
	LabelInstanceGPUCount,
	LabelInstanceGPUMemory,
	LabelInstanceAcceleratorName,
	LabelInstanceAcceleratorManufacturer,
	LabelInstanceAcceleratorCount,
	LabelTopologyZoneID,
	LabelInstanceTenancy,
	LabelPlacementGroupID,
	LabelPlacementGroupPartition,
)

// WellKnownValues lists, for labels with a closed set of values, the values that mean something. An In
// requirement on such a label needs at least one of them (and at least minValues of them).
var WellKnownValues = map[string]map[string]bool{
	CapacityTypeLabelKey: setOf(CapacityTypeOnDemand, CapacityTypeSpot, CapacityTypeReserved),
	LabelInstanceTenancy: setOf("default", "dedicated"),
}

// RestrictedLabelDomains are label domains Karpenter reserves; a key in one of them (or a sub-domain) is
// allowed only if it is well known.
var RestrictedLabelDomains = []string{Group, AWSGroup}

// RestrictedLabels may never be set or required: they would break the provisioning logic.
var RestrictedLabels = setOf(NodePoolLabelKey, corev1.LabelHostname)

// NormalizedLabels maps deprecated label keys to the well-known key Karpenter treats them as.
var NormalizedLabels = map[string]string{
	corev1.LabelFailureDomainBetaZone:   corev1.LabelTopologyZone,
	corev1.LabelFailureDomainBetaRegion: corev1.LabelTopologyRegion,
	"beta.kubernetes.io/arch":           corev1.LabelArchStable,
	"beta.kubernetes.io/os":             corev1.LabelOSStable,
	corev1.LabelInstanceType:            corev1.LabelInstanceTypeStable,
}

// LabelDomain returns the prefix of a qualified key ("karpenter.sh" for "karpenter.sh/nodepool"), or "".
func LabelDomain(key string) string {
	if domain, _, ok := strings.Cut(key, "/"); ok {
		return domain
	}
	return ""
}

// RestrictedLabelReason says why key may not be used as a template label or requirement key, or returns ""
// when it may. Keys are normalized first (beta.kubernetes.io/arch is kubernetes.io/arch).
func RestrictedLabelReason(key string) string {
	if normalized, ok := NormalizedLabels[key]; ok {
		key = normalized
	}
	if RestrictedLabels[key] {
		return "label " + key + " is restricted"
	}
	if WellKnownLabels[key] {
		return ""
	}
	domain := LabelDomain(key)
	for _, restricted := range RestrictedLabelDomains {
		if strings.HasSuffix(domain, restricted) {
			return "label domain " + restricted + " is restricted; use a well-known label or a custom label outside it"
		}
	}
	return ""
}

func setOf(values ...string) map[string]bool {
	s := make(map[string]bool, len(values))
	for _, v := range values {
		s[v] = true
	}
	return s
}

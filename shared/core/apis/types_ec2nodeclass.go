package apis

import (
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// EC2NodeClass (karpenter.k8s.aws/v1) is the AWS side of a NodePool: subnets, security groups, AMIs,
// instance profile, user data, block devices and instance metadata options.
type EC2NodeClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   EC2NodeClassSpec   `json:"spec"`
	Status EC2NodeClassStatus `json:"status,omitempty"`

	// Origin is where the object was decoded from; it is not part of the manifest.
	Origin Origin `json:"-"`
}

// EC2NodeClassList is a list of EC2NodeClasses.
type EC2NodeClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []EC2NodeClass `json:"items"`
}

// EC2NodeClassSpec is the desired state of an EC2NodeClass.
type EC2NodeClassSpec struct {
	SubnetSelectorTerms              []SubnetSelectorTerm              `json:"subnetSelectorTerms"`
	SecurityGroupSelectorTerms       []SecurityGroupSelectorTerm       `json:"securityGroupSelectorTerms"`
	CapacityReservationSelectorTerms []CapacityReservationSelectorTerm `json:"capacityReservationSelectorTerms,omitempty"`
	// PlacementGroupSelector picks a placement group by name or id [new].
	PlacementGroupSelector   *PlacementGroupSelector `json:"placementGroupSelector,omitempty"`
	AssociatePublicIPAddress *bool                   `json:"associatePublicIPAddress,omitempty"`
	// IPPrefixCount is the number of IPv4 prefixes assigned to the primary interface [new].
	IPPrefixCount    *int32            `json:"ipPrefixCount,omitempty"`
	AMISelectorTerms []AMISelectorTerm `json:"amiSelectorTerms"`
	// AMIFamily sets the user data format and default block devices; required unless an alias is used.
	AMIFamily *string `json:"amiFamily,omitempty"`
	UserData  *string `json:"userData,omitempty"`
	// Role and InstanceProfile are mutually exclusive; exactly one is required.
	Role            string            `json:"role,omitempty"`
	InstanceProfile *string           `json:"instanceProfile,omitempty"`
	Tags            map[string]string `json:"tags,omitempty"`
	// Kubelet is an open map mirroring the upstream KubeletConfiguration; see validation_kubelet.go.
	Kubelet             KubeletConfiguration  `json:"kubelet,omitempty"`
	BlockDeviceMappings []*BlockDeviceMapping `json:"blockDeviceMappings,omitempty"`
	InstanceStorePolicy *InstanceStorePolicy  `json:"instanceStorePolicy,omitempty"`
	// NetworkInterfaces configures the interfaces of launched instances [new].
	NetworkInterfaces  []*NetworkInterface `json:"networkInterfaces,omitempty"`
	DetailedMonitoring *bool               `json:"detailedMonitoring,omitempty"`
	MetadataOptions    *MetadataOptions    `json:"metadataOptions,omitempty"`
	// ConnectionTracking sets idle connection tracking timeouts [new].
	ConnectionTracking *ConnectionTracking `json:"connectionTracking,omitempty"`
	// Context is CreateFleet's reserved Context field.
	Context *string `json:"context,omitempty"`
	// CPUOptions sets CPU options of launched instances [new].
	CPUOptions *CPUOptions `json:"cpuOptions,omitempty"`
}

// SubnetSelectorTerm selects subnets by tags (ANDed) or by id.
type SubnetSelectorTerm struct {
	Tags map[string]string `json:"tags,omitempty"`
	ID   string            `json:"id,omitempty"`
}

// SecurityGroupSelectorTerm selects security groups by tags (ANDed), id or name.
type SecurityGroupSelectorTerm struct {
	Tags map[string]string `json:"tags,omitempty"`
	ID   string            `json:"id,omitempty"`
	Name string            `json:"name,omitempty"`
}

// CapacityReservationSelectorTerm selects capacity reservations.
type CapacityReservationSelectorTerm struct {
	Tags                  map[string]string `json:"tags,omitempty"`
	ID                    string            `json:"id,omitempty"`
	OwnerID               string            `json:"ownerID,omitempty"`
	InstanceMatchCriteria string            `json:"instanceMatchCriteria,omitempty"`
}

// PlacementGroupSelector picks one placement group by name or by id.
type PlacementGroupSelector struct {
	Name *string `json:"name,omitempty"`
	ID   *string `json:"id,omitempty"`
}

// AMISelectorTerm selects AMIs: by alias (family@version, alone), by id (alone), or by tags, name, owner
// and SSM parameter.
type AMISelectorTerm struct {
	Alias        string            `json:"alias,omitempty"`
	Tags         map[string]string `json:"tags,omitempty"`
	ID           string            `json:"id,omitempty"`
	Name         string            `json:"name,omitempty"`
	Owner        string            `json:"owner,omitempty"`
	SSMParameter string            `json:"ssmParameter,omitempty"`
}

// AMI families.
const (
	AMIFamilyAL2          = "AL2"
	AMIFamilyAL2023       = "AL2023"
	AMIFamilyBottlerocket = "Bottlerocket"
	AMIFamilyCustom       = "Custom"
	AMIFamilyWindows2019  = "Windows2019"
	AMIFamilyWindows2022  = "Windows2022"
	AMIFamilyWindows2025  = "Windows2025"
)

// AMIFamilies lists the values amiFamily accepts.
var AMIFamilies = []string{AMIFamilyAL2, AMIFamilyAL2023, AMIFamilyBottlerocket, AMIFamilyCustom,
	AMIFamilyWindows2019, AMIFamilyWindows2022, AMIFamilyWindows2025}

// DefaultAMIOwners are the owners an amiSelectorTerm without owner (and without id or alias) searches.
var DefaultAMIOwners = []string{"self", "amazon"}

// AliasVersionLatest is the alias version that follows the newest AMI.
const AliasVersionLatest = "latest"

// Alias is a parsed amiSelectorTerms alias.
type Alias struct {
	Family  string // an AMIFamily value, e.g. "AL2023"
	Version string // "latest" or a pinned release
}

// aliasFamilies maps the lower-case alias prefix to its AMI family.
var aliasFamilies = map[string]string{
	"al2": AMIFamilyAL2, "al2023": AMIFamilyAL2023, "bottlerocket": AMIFamilyBottlerocket,
	"windows2019": AMIFamilyWindows2019, "windows2022": AMIFamilyWindows2022, "windows2025": AMIFamilyWindows2025,
}

// ParseAlias splits "family@version"; ok is false when the text is not a valid alias.
func ParseAlias(text string) (Alias, bool) {
	prefix, version, found := strings.Cut(text, "@")
	family, known := aliasFamilies[prefix]
	if !found || !known || version == "" {
		return Alias{}, false
	}
	return Alias{Family: family, Version: version}, true
}

// Alias returns the alias of the class's AMI selector, if it uses one.
func (nc *EC2NodeClass) Alias() (Alias, bool) {
	for _, term := range nc.Spec.AMISelectorTerms {
		if term.Alias != "" {
			return ParseAlias(term.Alias)
		}
	}
	return Alias{}, false
}

// AMIFamily resolves the family: spec.amiFamily if set, else the alias's family, else Custom.
func (nc *EC2NodeClass) AMIFamily() string {
	if nc.Spec.AMIFamily != nil {
		return *nc.Spec.AMIFamily
	}
	if alias, ok := nc.Alias(); ok {
		return alias.Family
	}
	return AMIFamilyCustom
}

// KubeletConfiguration is the kubelet configuration as written: an open map of upstream
// KubeletConfiguration fields to their JSON values.
type KubeletConfiguration map[string]json.RawMessage

// BlockDeviceMapping is one block device of launched instances.
type BlockDeviceMapping struct {
	DeviceName *string      `json:"deviceName,omitempty"`
	EBS        *BlockDevice `json:"ebs,omitempty"`
	// RootVolume marks the device mounted as the kubelet root; at most one may be set.
	RootVolume bool `json:"rootVolume,omitempty"`
}

// BlockDevice is an EBS volume.
type BlockDevice struct {
	DeleteOnTermination      *bool   `json:"deleteOnTermination,omitempty"`
	Encrypted                *bool   `json:"encrypted,omitempty"`
	IOPS                     *int64  `json:"iops,omitempty"`
	KMSKeyID                 *string `json:"kmsKeyID,omitempty"`
	SnapshotID               *string `json:"snapshotID,omitempty"`
	Throughput               *int64  `json:"throughput,omitempty"`
	VolumeInitializationRate *int32  `json:"volumeInitializationRate,omitempty"`
	// VolumeSize is written as in the manifest ("100Gi", "1T"); VolumeSizeQuantity parses it.
	VolumeSize *string `json:"volumeSize,omitempty"`
	VolumeType *string `json:"volumeType,omitempty"`
}

// VolumeTypes lists the EBS volume types volumeType accepts.
var VolumeTypes = []string{"standard", "io1", "io2", "gp2", "sc1", "st1", "gp3"}

// InstanceStorePolicy says what to do with instance-store disks.
type InstanceStorePolicy string

// InstanceStorePolicyRAID0 puts all NVMe instance-store disks in one RAID-0 array for kubelet and containerd.
const InstanceStorePolicyRAID0 InstanceStorePolicy = "RAID0"

// InterfaceType is a network interface type.
type InterfaceType string

const (
	InterfaceTypeInterface InterfaceType = "interface"
	InterfaceTypeEFAOnly   InterfaceType = "efa-only"
)

// NetworkInterface is one network interface of launched instances.
type NetworkInterface struct {
	NetworkCardIndex int32         `json:"networkCardIndex"`
	DeviceIndex      int32         `json:"deviceIndex"`
	InterfaceType    InterfaceType `json:"interfaceType"`
}

// MetadataOptions are the instance metadata service options of launched instances.
type MetadataOptions struct {
	HTTPEndpoint            *string `json:"httpEndpoint,omitempty"`
	HTTPProtocolIPv6        *string `json:"httpProtocolIPv6,omitempty"`
	HTTPPutResponseHopLimit *int64  `json:"httpPutResponseHopLimit,omitempty"`
	HTTPTokens              *string `json:"httpTokens,omitempty"`
}

// ConnectionTracking holds idle connection tracking timeouts, in seconds.
type ConnectionTracking struct {
	TCPEstablishedTimeout *int32 `json:"tcpEstablishedTimeout,omitempty"`
	UDPStreamTimeout      *int32 `json:"udpStreamTimeout,omitempty"`
	UDPTimeout            *int32 `json:"udpTimeout,omitempty"`
}

// CPUOptions are CPU options of launched instances.
type CPUOptions struct {
	NestedVirtualization *string `json:"nestedVirtualization,omitempty"`
}

// EC2NodeClassStatus is what Karpenter reports about an EC2NodeClass; kept so exported manifests decode.
type EC2NodeClassStatus struct {
	Subnets              []SubnetStatus              `json:"subnets,omitempty"`
	SecurityGroups       []SecurityGroupStatus       `json:"securityGroups,omitempty"`
	CapacityReservations []CapacityReservationStatus `json:"capacityReservations,omitempty"`
	AMIs                 []AMIStatus                 `json:"amis,omitempty"`
	InstanceProfile      string                      `json:"instanceProfile,omitempty"`
	Conditions           []metav1.Condition          `json:"conditions,omitempty"`
}

// SubnetStatus is a resolved subnet.
type SubnetStatus struct {
	ID     string `json:"id"`
	Zone   string `json:"zone"`
	ZoneID string `json:"zoneID,omitempty"`
}

// SecurityGroupStatus is a resolved security group.
type SecurityGroupStatus struct {
	ID   string `json:"id"`
	Name string `json:"name,omitempty"`
}

// AMIStatus is a resolved AMI and the node requirements it serves.
type AMIStatus struct {
	ID           string                           `json:"id"`
	Name         string                           `json:"name,omitempty"`
	Deprecated   bool                             `json:"deprecated,omitempty"`
	Requirements []corev1.NodeSelectorRequirement `json:"requirements"`
}

// CapacityReservationStatus is a resolved capacity reservation.
type CapacityReservationStatus struct {
	ID                    string       `json:"id"`
	AvailabilityZone      string       `json:"availabilityZone"`
	InstanceType          string       `json:"instanceType"`
	InstanceMatchCriteria string       `json:"instanceMatchCriteria"`
	OwnerID               string       `json:"ownerID"`
	ReservationType       string       `json:"reservationType,omitempty"`
	Interruptible         bool         `json:"interruptible,omitempty"`
	State                 string       `json:"state,omitempty"`
	EndTime               *metav1.Time `json:"endTime,omitempty"`
}

// EC2NodeClass condition types.
const (
	ConditionTypeSubnetsReady              = "SubnetsReady"
	ConditionTypeSecurityGroupsReady       = "SecurityGroupsReady"
	ConditionTypeAMIsReady                 = "AMIsReady"
	ConditionTypeInstanceProfileReady      = "InstanceProfileReady"
	ConditionTypeCapacityReservationsReady = "CapacityReservationsReady"
	ConditionTypePlacementGroupReady       = "PlacementGroupReady"
)

// VolumeSizeQuantity parses VolumeSize; ok is false when it is unset or malformed.
func (b *BlockDevice) VolumeSizeQuantity() (resource.Quantity, bool) {
	if b == nil || b.VolumeSize == nil {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(*b.VolumeSize)
	return q, err == nil
}

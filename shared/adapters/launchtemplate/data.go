package launchtemplate

import (
	"encoding/base64"
	"fmt"
	"math"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// MaxUserDataBytes is EC2's limit on user data, before base64 encoding.
const MaxUserDataBytes = 16 * 1024

// Template is everything one launch template is made from.
type Template struct {
	NodeClass *apis.EC2NodeClass
	// Resolved is the node class's resolution: its security groups and instance profile are used.
	Resolved apis.EC2NodeClassStatus
	// ImageID is the AMI, one of Resolved.AMIs chosen for the instance types the template serves.
	ImageID string
	// Options carry the cluster, labels, taints and max pods. Family, UserData, KubeletConfig and
	// InstanceStorePolicy are taken from the node class (its resolved AMI family, spec.userData,
	// spec.kubelet and spec.instanceStorePolicy), whatever Options says.
	Options Options
}

// options are t.Options completed from the node class.
func (t Template) options() Options {
	o := t.Options
	o.Family = t.NodeClass.AMIFamily()
	o.UserData = aws.ToString(t.NodeClass.Spec.UserData)
	o.KubeletConfig = t.NodeClass.Spec.Kubelet
	o.InstanceStorePolicy = t.NodeClass.Spec.InstanceStorePolicy
	return o
}

// Data is the launch template data for t: AMI, base64 user data, instance profile, security groups (in a
// network interface when the node class sets associatePublicIPAddress, ipPrefixCount or
// connectionTracking, or the cluster is IPv6: then the interface has a primary IPv6 address), CPU
// options (nested virtualization), block devices (the node class's, else the family's defaults),
// metadata options (the node class's, defaulted, with instance tags in metadata disabled), detailed
// monitoring, the targeted capacity reservation if any, and tags on the instance, its volumes and its
// network interfaces.
func Data(t Template) (*ec2types.RequestLaunchTemplateData, error) {
	nc := t.NodeClass
	if nc == nil {
		return nil, fmt.Errorf("launch template needs a node class")
	}
	if t.ImageID == "" {
		return nil, fmt.Errorf("launch template for node class %s needs an AMI", nc.Name)
	}
	if t.Resolved.InstanceProfile == "" {
		return nil, fmt.Errorf("launch template for node class %s needs a resolved instance profile", nc.Name)
	}
	if len(t.Resolved.SecurityGroups) == 0 {
		return nil, fmt.Errorf("launch template for node class %s needs resolved security groups", nc.Name)
	}
	o := t.options()
	userData, err := UserData(o)
	if err != nil {
		return nil, fmt.Errorf("rendering user data for node class %s: %w", nc.Name, err)
	}
	if len(userData) > MaxUserDataBytes {
		return nil, fmt.Errorf("user data of node class %s is %d bytes, more than EC2's limit of %d", nc.Name, len(userData), MaxUserDataBytes)
	}
	bdms, err := blockDeviceMappings(nc)
	if err != nil {
		return nil, fmt.Errorf("block devices of node class %s: %w", nc.Name, err)
	}
	groups := make([]string, len(t.Resolved.SecurityGroups))
	for i, sg := range t.Resolved.SecurityGroups {
		groups[i] = sg.ID
	}
	sort.Strings(groups)
	data := &ec2types.RequestLaunchTemplateData{
		ImageId:             aws.String(t.ImageID),
		UserData:            aws.String(base64.StdEncoding.EncodeToString([]byte(userData))),
		IamInstanceProfile:  &ec2types.LaunchTemplateIamInstanceProfileSpecificationRequest{Name: aws.String(t.Resolved.InstanceProfile)},
		BlockDeviceMappings: bdms,
		MetadataOptions:     metadataOptions(nc.Spec.MetadataOptions),
		Monitoring:          &ec2types.LaunchTemplatesMonitoringRequest{Enabled: aws.Bool(aws.ToBool(nc.Spec.DetailedMonitoring))},
	}
	if c := nc.Spec.CPUOptions; c != nil && c.NestedVirtualization != nil {
		data.CpuOptions = &ec2types.LaunchTemplateCpuOptionsRequest{NestedVirtualization: ec2types.NestedVirtualizationSpecification(*c.NestedVirtualization)}
	}
	ipv6 := o.Cluster.IPv6()
	if o.EFAInterfaces > 0 || ipv6 || nc.Spec.AssociatePublicIPAddress != nil || nc.Spec.IPPrefixCount != nil || nc.Spec.ConnectionTracking != nil {
		ni := ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{
			DeviceIndex:                     aws.Int32(0),
			AssociatePublicIpAddress:        nc.Spec.AssociatePublicIPAddress,
			Ipv4PrefixCount:                 nc.Spec.IPPrefixCount,
			Groups:                          groups,
			ConnectionTrackingSpecification: connectionTracking(nc.Spec.ConnectionTracking),
		}
		if ipv6 {
			// As Karpenter: the node's interface gets an IPv6 address, made its primary one (the address
			// the kubelet registers, whatever the subnet's auto-assign setting), and ipPrefixCount counts
			// IPv6 prefixes for the pods.
			ni.Ipv4PrefixCount, ni.Ipv6PrefixCount = nil, nc.Spec.IPPrefixCount
			ni.Ipv6AddressCount, ni.PrimaryIpv6 = aws.Int32(1), aws.Bool(true)
		}
		data.NetworkInterfaces = []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest{ni}
		if o.EFAInterfaces > 0 {
			data.NetworkInterfaces = efaInterfaces(ni, o.EFAInterfaces)
		}
	} else {
		data.SecurityGroupIds = groups
	}
	reservationTarget(data, o)
	tags := tagList(LaunchedTags(o.Cluster.Name, nc, o.Labels[apis.NodePoolLabelKey]))
	for _, rt := range []ec2types.ResourceType{ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeNetworkInterface} {
		data.TagSpecifications = append(data.TagSpecifications, ec2types.LaunchTemplateTagSpecificationRequest{ResourceType: rt, Tags: tags})
	}
	return data, nil
}

// efaInterfaces are n EFA interfaces made like ni, one per network card: the first is the node's primary
// interface (device 0 of card 0), the others device 1 of cards 1..n-1, so the primary keeps precedence
// (the one a public address goes to), as Karpenter lays them out for pods that request
// vpc.amazonaws.com/efa.
func efaInterfaces(ni ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest, n int32) []ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest {
	out := make([]ec2types.LaunchTemplateInstanceNetworkInterfaceSpecificationRequest, n)
	for i := range n {
		e := ni
		e.NetworkCardIndex, e.DeviceIndex = aws.Int32(i), aws.Int32(min(i, 1))
		e.InterfaceType = aws.String(string(ec2types.NetworkInterfaceTypeEfa))
		out[i] = e
	}
	return out
}

func connectionTracking(ct *apis.ConnectionTracking) *ec2types.ConnectionTrackingSpecificationRequest {
	if ct == nil {
		return nil
	}
	return &ec2types.ConnectionTrackingSpecificationRequest{TcpEstablishedTimeout: ct.TCPEstablishedTimeout,
		UdpStreamTimeout: ct.UDPStreamTimeout, UdpTimeout: ct.UDPTimeout}
}

// Tags are the tags of a node class's launch templates: the node class's tags, then the ownership tags
// (which win): kubernetes.io/cluster/<cluster>=owned and Nodewright's own keys for the cluster, the node
// class and the node pool when known. None of Karpenter's keys is set: launch templates with
// eks:eks-cluster-name or karpenter.k8s.aws/cluster are what Karpenter's clean-up deletes.
func Tags(cluster string, nc *apis.EC2NodeClass, nodePool string) map[string]string {
	tags := make(map[string]string, len(nc.Spec.Tags)+4)
	for k, v := range nc.Spec.Tags {
		tags[k] = v
	}
	for _, k := range instance.KarpenterOwnedTagKeys {
		delete(tags, k)
	}
	tags[instance.ClusterTagKey(cluster)] = "owned"
	tags[instance.TagCluster] = cluster
	tags[instance.TagNodeClass] = nc.Name
	if nodePool != "" {
		tags[instance.TagNodePool] = nodePool
	}
	return tags
}

// LaunchedTags are the tags of what a node class's launch template launches (instance, volumes, network
// interface): the template's Tags and, when the node pool is known, karpenter.sh/nodepool with it, which
// cost allocation reports split by as they do for Karpenter's instances. karpenter.k8s.aws/ec2nodeclass
// is never set: with karpenter.sh/nodepool and the kubernetes.io/cluster/<cluster> tag it is what
// Karpenter's garbage collection terminates an instance by (instance.KarpenterCollectsInstance).
func LaunchedTags(cluster string, nc *apis.EC2NodeClass, nodePool string) map[string]string {
	tags := Tags(cluster, nc, nodePool)
	if nodePool != "" {
		tags[instance.KarpenterTagNodePool] = nodePool
	}
	return tags
}

func tagList(m map[string]string) []ec2types.Tag {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	tags := make([]ec2types.Tag, len(keys))
	for i, k := range keys {
		tags[i] = ec2types.Tag{Key: aws.String(k), Value: aws.String(m[k])}
	}
	return tags
}

// metadataOptions are the node class's metadata options with Karpenter's defaults for what is unset, and
// instance tags kept out of the metadata service (Nodewright's tag keys contain "/", which it rejects).
func metadataOptions(m *apis.MetadataOptions) *ec2types.LaunchTemplateInstanceMetadataOptionsRequest {
	defaulted := apis.EC2NodeClass{}
	if m != nil {
		c := *m
		defaulted.Spec.MetadataOptions = &c
	}
	defaulted.SetDefaults()
	d := defaulted.Spec.MetadataOptions
	hops := aws.ToInt64(d.HTTPPutResponseHopLimit)
	return &ec2types.LaunchTemplateInstanceMetadataOptionsRequest{
		HttpEndpoint:            ec2types.LaunchTemplateInstanceMetadataEndpointState(aws.ToString(d.HTTPEndpoint)),
		HttpProtocolIpv6:        ec2types.LaunchTemplateInstanceMetadataProtocolIpv6(aws.ToString(d.HTTPProtocolIPv6)),
		HttpPutResponseHopLimit: aws.Int32(int32(min(max(hops, 1), 64))),
		HttpTokens:              ec2types.LaunchTemplateHttpTokensState(aws.ToString(d.HTTPTokens)),
		InstanceMetadataTags:    ec2types.LaunchTemplateInstanceMetadataTagsStateDisabled,
	}
}

// defaultEBS is the default volume: 20 GiB gp3, encrypted.
func defaultEBS(gib int32) *ec2types.LaunchTemplateEbsBlockDeviceRequest {
	return &ec2types.LaunchTemplateEbsBlockDeviceRequest{Encrypted: aws.Bool(true), VolumeType: ec2types.VolumeTypeGp3, VolumeSize: aws.Int32(gib)}
}

// blockDeviceMappings are the node class's block devices, or the family's defaults: AL2, AL2023 and
// Custom one 20 GiB root volume on /dev/xvda; Bottlerocket a 4 GiB OS volume on /dev/xvda and a 20 GiB
// data volume on /dev/xvdb. Sizes are rounded up to whole GiB.
func blockDeviceMappings(nc *apis.EC2NodeClass) ([]ec2types.LaunchTemplateBlockDeviceMappingRequest, error) {
	if len(nc.Spec.BlockDeviceMappings) == 0 {
		if nc.AMIFamily() == apis.AMIFamilyBottlerocket {
			return []ec2types.LaunchTemplateBlockDeviceMappingRequest{
				{DeviceName: aws.String("/dev/xvda"), Ebs: defaultEBS(4)},
				{DeviceName: aws.String("/dev/xvdb"), Ebs: defaultEBS(20)},
			}, nil
		}
		return []ec2types.LaunchTemplateBlockDeviceMappingRequest{{DeviceName: aws.String("/dev/xvda"), Ebs: defaultEBS(20)}}, nil
	}
	var out []ec2types.LaunchTemplateBlockDeviceMappingRequest
	for _, m := range nc.Spec.BlockDeviceMappings {
		if m == nil {
			continue
		}
		req := ec2types.LaunchTemplateBlockDeviceMappingRequest{DeviceName: m.DeviceName}
		if e := m.EBS; e != nil {
			ebs := &ec2types.LaunchTemplateEbsBlockDeviceRequest{
				DeleteOnTermination:      e.DeleteOnTermination,
				Encrypted:                e.Encrypted,
				KmsKeyId:                 e.KMSKeyID,
				SnapshotId:               e.SnapshotID,
				VolumeInitializationRate: e.VolumeInitializationRate,
				VolumeType:               ec2types.VolumeType(aws.ToString(e.VolumeType)),
				Iops:                     int32Of(e.IOPS),
				Throughput:               int32Of(e.Throughput),
			}
			if e.VolumeSize != nil {
				q, ok := e.VolumeSizeQuantity()
				if !ok || q.Sign() <= 0 {
					return nil, fmt.Errorf("device %s: volume size %q is not a positive quantity", aws.ToString(m.DeviceName), *e.VolumeSize)
				}
				gib := math.Ceil(q.AsApproximateFloat64() / (1 << 30))
				if gib > math.MaxInt32 {
					return nil, fmt.Errorf("device %s: volume size %q is too large", aws.ToString(m.DeviceName), *e.VolumeSize)
				}
				ebs.VolumeSize = aws.Int32(int32(gib))
			}
			req.Ebs = ebs
		}
		out = append(out, req)
	}
	return out, nil
}

// int32Of converts an optional count; zero or out of range means unset.
func int32Of(v *int64) *int32 {
	if v == nil || *v <= 0 || *v > math.MaxInt32 {
		return nil
	}
	return aws.Int32(int32(*v))
}

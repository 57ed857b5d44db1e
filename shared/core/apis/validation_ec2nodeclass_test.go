package apis_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/nodewright/nodewright/shared/core/apis"
)

type ncCase = invalidCase[apis.EC2NodeClass]

func TestValidateEC2NodeClassRejects(t *testing.T) {
	tags := func(n int) map[string]string {
		m := map[string]string{}
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m
	}
	cases := []ncCase{
		{"name missing", func(nc *apis.EC2NodeClass) { nc.Name = "" }, "metadata.name", field.ErrorTypeRequired},
		{"subnet terms missing", func(nc *apis.EC2NodeClass) { nc.Spec.SubnetSelectorTerms = nil }, "spec.subnetSelectorTerms", field.ErrorTypeRequired},
		{"subnet term empty", func(nc *apis.EC2NodeClass) { nc.Spec.SubnetSelectorTerms = []apis.SubnetSelectorTerm{{}} }, "spec.subnetSelectorTerms[0]", field.ErrorTypeRequired},
		{"subnet id with tags", func(nc *apis.EC2NodeClass) { nc.Spec.SubnetSelectorTerms[0].ID = "subnet-123" }, "spec.subnetSelectorTerms[0].id", field.ErrorTypeForbidden},
		{"subnet id malformed", func(nc *apis.EC2NodeClass) {
			nc.Spec.SubnetSelectorTerms = []apis.SubnetSelectorTerm{{ID: "sn-123"}}
		}, "spec.subnetSelectorTerms[0].id", field.ErrorTypeInvalid},
		{"subnet tag value empty", func(nc *apis.EC2NodeClass) { nc.Spec.SubnetSelectorTerms[0].Tags["env"] = "" }, "spec.subnetSelectorTerms[0].tags[env]", field.ErrorTypeInvalid},
		{"subnet tag key empty", func(nc *apis.EC2NodeClass) { nc.Spec.SubnetSelectorTerms[0].Tags[""] = "x" }, "spec.subnetSelectorTerms[0].tags[]", field.ErrorTypeInvalid},
		{"more than 20 subnet tags", func(nc *apis.EC2NodeClass) { nc.Spec.SubnetSelectorTerms[0].Tags = tags(21) }, "spec.subnetSelectorTerms[0].tags", field.ErrorTypeTooMany},
		{"more than 30 subnet terms", func(nc *apis.EC2NodeClass) {
			for i := 0; i < 30; i++ {
				nc.Spec.SubnetSelectorTerms = append(nc.Spec.SubnetSelectorTerms, apis.SubnetSelectorTerm{ID: "subnet-1"})
			}
		}, "spec.subnetSelectorTerms", field.ErrorTypeTooMany},
		{"security group terms empty", func(nc *apis.EC2NodeClass) { nc.Spec.SecurityGroupSelectorTerms = []apis.SecurityGroupSelectorTerm{} }, "spec.securityGroupSelectorTerms", field.ErrorTypeRequired},
		{"security group term empty", func(nc *apis.EC2NodeClass) { nc.Spec.SecurityGroupSelectorTerms[0] = apis.SecurityGroupSelectorTerm{} }, "spec.securityGroupSelectorTerms[0]", field.ErrorTypeRequired},
		{"security group id with name", func(nc *apis.EC2NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms[0] = apis.SecurityGroupSelectorTerm{ID: "sg-1", Name: "x"}
		}, "spec.securityGroupSelectorTerms[0].id", field.ErrorTypeForbidden},
		{"security group name with tags", func(nc *apis.EC2NodeClass) { nc.Spec.SecurityGroupSelectorTerms[0].Name = "x" }, "spec.securityGroupSelectorTerms[0].name", field.ErrorTypeForbidden},
		{"security group id malformed", func(nc *apis.EC2NodeClass) {
			nc.Spec.SecurityGroupSelectorTerms[0] = apis.SecurityGroupSelectorTerm{ID: "group-1"}
		}, "spec.securityGroupSelectorTerms[0].id", field.ErrorTypeInvalid},
		{"capacity reservation term empty", func(nc *apis.EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{OwnerID: "123456789012"}}
		}, "spec.capacityReservationSelectorTerms[0]", field.ErrorTypeRequired},
		{"capacity reservation id with owner", func(nc *apis.EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{ID: "cr-1", OwnerID: "123456789012"}}
		}, "spec.capacityReservationSelectorTerms[0].id", field.ErrorTypeForbidden},
		{"capacity reservation id malformed", func(nc *apis.EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{ID: "cr_1"}}
		}, "spec.capacityReservationSelectorTerms[0].id", field.ErrorTypeInvalid},
		{"capacity reservation owner malformed", func(nc *apis.EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{Tags: map[string]string{"a": "b"}, OwnerID: "1234"}}
		}, "spec.capacityReservationSelectorTerms[0].ownerID", field.ErrorTypeInvalid},
		{"capacity reservation match criteria unknown", func(nc *apis.EC2NodeClass) {
			nc.Spec.CapacityReservationSelectorTerms = []apis.CapacityReservationSelectorTerm{{InstanceMatchCriteria: "closed"}}
		}, "spec.capacityReservationSelectorTerms[0].instanceMatchCriteria", field.ErrorTypeNotSupported},
		{"ami terms missing", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms = nil }, "spec.amiSelectorTerms", field.ErrorTypeRequired},
		{"ami term empty", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0] = apis.AMISelectorTerm{Owner: "self"} }, "spec.amiSelectorTerms[0]", field.ErrorTypeRequired},
		{"ami id with name", func(nc *apis.EC2NodeClass) {
			nc.Spec.AMIFamily = ptr("AL2023")
			nc.Spec.AMISelectorTerms[0] = apis.AMISelectorTerm{ID: "ami-1", Name: "x"}
		}, "spec.amiSelectorTerms[0].id", field.ErrorTypeForbidden},
		{"ami id malformed", func(nc *apis.EC2NodeClass) {
			nc.Spec.AMIFamily = ptr("AL2023")
			nc.Spec.AMISelectorTerms[0] = apis.AMISelectorTerm{ID: "image-1"}
		}, "spec.amiSelectorTerms[0].id", field.ErrorTypeInvalid},
		{"alias with owner", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Owner = "self" }, "spec.amiSelectorTerms[0].alias", field.ErrorTypeForbidden},
		{"alias beside another term", func(nc *apis.EC2NodeClass) {
			nc.Spec.AMISelectorTerms = append(nc.Spec.AMISelectorTerms, apis.AMISelectorTerm{Name: "x"})
		}, "spec.amiSelectorTerms[0].alias", field.ErrorTypeForbidden},
		{"alias without version", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "al2023" }, "spec.amiSelectorTerms[0].alias", field.ErrorTypeInvalid},
		{"alias of an unknown family", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "ubuntu@latest" }, "spec.amiSelectorTerms[0].alias", field.ErrorTypeInvalid},
		{"alias family in upper case", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "AL2023@latest" }, "spec.amiSelectorTerms[0].alias", field.ErrorTypeInvalid},
		{"windows alias pinned", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "windows2022@v1" }, "spec.amiSelectorTerms[0].alias", field.ErrorTypeInvalid},
		{"alias too long", func(nc *apis.EC2NodeClass) { nc.Spec.AMISelectorTerms[0].Alias = "al2023@v20240625000000000000000" }, "spec.amiSelectorTerms[0].alias", field.ErrorTypeTooLong},
		{"amiFamily unknown", func(nc *apis.EC2NodeClass) { nc.Spec.AMIFamily = ptr("Ubuntu") }, "spec.amiFamily", field.ErrorTypeNotSupported},
		{"amiFamily not matching the alias", func(nc *apis.EC2NodeClass) { nc.Spec.AMIFamily = ptr("Bottlerocket") }, "spec.amiFamily", field.ErrorTypeInvalid},
		{"amiFamily missing without alias", func(nc *apis.EC2NodeClass) {
			nc.Spec.AMISelectorTerms[0] = apis.AMISelectorTerm{Tags: map[string]string{"a": "b"}}
		}, "spec.amiFamily", field.ErrorTypeRequired},
		{"neither role nor instance profile", func(nc *apis.EC2NodeClass) { nc.Spec.Role = "" }, "spec.role", field.ErrorTypeRequired},
		{"both role and instance profile", func(nc *apis.EC2NodeClass) { nc.Spec.InstanceProfile = ptr("profile") }, "spec.instanceProfile", field.ErrorTypeForbidden},
		{"empty instance profile", func(nc *apis.EC2NodeClass) {
			nc.Spec.Role = ""
			nc.Spec.InstanceProfile = ptr("")
		}, "spec.instanceProfile", field.ErrorTypeInvalid},
		{"tag eks:eks-cluster-name", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["eks:eks-cluster-name"] = "x" }, "spec.tags[eks:eks-cluster-name]", field.ErrorTypeInvalid},
		{"tag kubernetes.io/cluster/", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["kubernetes.io/cluster/prod"] = "owned" }, "spec.tags[kubernetes.io/cluster/prod]", field.ErrorTypeInvalid},
		{"tag karpenter.sh/nodepool", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["karpenter.sh/nodepool"] = "x" }, "spec.tags[karpenter.sh/nodepool]", field.ErrorTypeInvalid},
		{"tag karpenter.sh/nodeclaim", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["karpenter.sh/nodeclaim"] = "x" }, "spec.tags[karpenter.sh/nodeclaim]", field.ErrorTypeInvalid},
		{"tag karpenter.k8s.aws/ec2nodeclass", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["karpenter.k8s.aws/ec2nodeclass"] = "x" }, "spec.tags[karpenter.k8s.aws/ec2nodeclass]", field.ErrorTypeInvalid},
		{"tag nodewright.sh/cluster", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["nodewright.sh/cluster"] = "x" }, "spec.tags[nodewright.sh/cluster]", field.ErrorTypeInvalid},
		{"tag nodewright.sh/nodepool", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["nodewright.sh/nodepool"] = "x" }, "spec.tags[nodewright.sh/nodepool]", field.ErrorTypeInvalid},
		{"tag karpenter.k8s.aws/cluster", func(nc *apis.EC2NodeClass) { nc.Spec.Tags["karpenter.k8s.aws/cluster"] = "x" }, "spec.tags[karpenter.k8s.aws/cluster]", field.ErrorTypeInvalid},
		{"tag key empty", func(nc *apis.EC2NodeClass) { nc.Spec.Tags[""] = "x" }, "spec.tags[]", field.ErrorTypeInvalid},
		{"two root volumes", func(nc *apis.EC2NodeClass) {
			nc.Spec.BlockDeviceMappings = append(nc.Spec.BlockDeviceMappings, &apis.BlockDeviceMapping{RootVolume: true, EBS: &apis.BlockDevice{VolumeSize: ptr("20Gi")}})
		}, "spec.blockDeviceMappings[1].rootVolume", field.ErrorTypeInvalid},
		{"ebs without size or snapshot", func(nc *apis.EC2NodeClass) { nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = nil }, "spec.blockDeviceMappings[0].ebs", field.ErrorTypeRequired},
		{"volume initialization rate without snapshot", func(nc *apis.EC2NodeClass) {
			nc.Spec.BlockDeviceMappings[0].EBS.VolumeInitializationRate = ptr(int32(150))
		}, "spec.blockDeviceMappings[0].ebs.snapshotID", field.ErrorTypeRequired},
		{"volume initialization rate out of range", func(nc *apis.EC2NodeClass) {
			nc.Spec.BlockDeviceMappings[0].EBS.SnapshotID = ptr("snap-1")
			nc.Spec.BlockDeviceMappings[0].EBS.VolumeInitializationRate = ptr(int32(301))
		}, "spec.blockDeviceMappings[0].ebs.volumeInitializationRate", field.ErrorTypeInvalid},
		{"volume size in Mi", func(nc *apis.EC2NodeClass) { nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = ptr("500Mi") }, "spec.blockDeviceMappings[0].ebs.volumeSize", field.ErrorTypeInvalid},
		{"volume size too big", func(nc *apis.EC2NodeClass) { nc.Spec.BlockDeviceMappings[0].EBS.VolumeSize = ptr("65T") }, "spec.blockDeviceMappings[0].ebs.volumeSize", field.ErrorTypeInvalid},
		{"volume type unknown", func(nc *apis.EC2NodeClass) { nc.Spec.BlockDeviceMappings[0].EBS.VolumeType = ptr("gp4") }, "spec.blockDeviceMappings[0].ebs.volumeType", field.ErrorTypeNotSupported},
		{"more than 50 block devices", func(nc *apis.EC2NodeClass) {
			for i := 0; i < 50; i++ {
				nc.Spec.BlockDeviceMappings = append(nc.Spec.BlockDeviceMappings, &apis.BlockDeviceMapping{EBS: &apis.BlockDevice{VolumeSize: ptr("1Gi")}})
			}
		}, "spec.blockDeviceMappings", field.ErrorTypeTooMany},
		{"instance store policy unknown", func(nc *apis.EC2NodeClass) {
			nc.Spec.InstanceStorePolicy = ptr(apis.InstanceStorePolicy("RAID1"))
		}, "spec.instanceStorePolicy", field.ErrorTypeNotSupported},
		{"metadata endpoint unknown", func(nc *apis.EC2NodeClass) { nc.Spec.MetadataOptions.HTTPEndpoint = ptr("on") }, "spec.metadataOptions.httpEndpoint", field.ErrorTypeNotSupported},
		{"metadata IPv6 unknown", func(nc *apis.EC2NodeClass) { nc.Spec.MetadataOptions.HTTPProtocolIPv6 = ptr("yes") }, "spec.metadataOptions.httpProtocolIPv6", field.ErrorTypeNotSupported},
		{"metadata hop limit zero", func(nc *apis.EC2NodeClass) { nc.Spec.MetadataOptions.HTTPPutResponseHopLimit = ptr(int64(0)) }, "spec.metadataOptions.httpPutResponseHopLimit", field.ErrorTypeInvalid},
		{"metadata hop limit above 64", func(nc *apis.EC2NodeClass) { nc.Spec.MetadataOptions.HTTPPutResponseHopLimit = ptr(int64(65)) }, "spec.metadataOptions.httpPutResponseHopLimit", field.ErrorTypeInvalid},
		{"metadata tokens unknown", func(nc *apis.EC2NodeClass) { nc.Spec.MetadataOptions.HTTPTokens = ptr("sometimes") }, "spec.metadataOptions.httpTokens", field.ErrorTypeNotSupported},
		{"placement group with name and id", func(nc *apis.EC2NodeClass) {
			nc.Spec.PlacementGroupSelector = &apis.PlacementGroupSelector{Name: ptr("pg"), ID: ptr("pg-1")}
		}, "spec.placementGroupSelector.id", field.ErrorTypeForbidden},
		{"placement group empty", func(nc *apis.EC2NodeClass) { nc.Spec.PlacementGroupSelector = &apis.PlacementGroupSelector{} }, "spec.placementGroupSelector", field.ErrorTypeRequired},
		{"placement group id malformed", func(nc *apis.EC2NodeClass) {
			nc.Spec.PlacementGroupSelector = &apis.PlacementGroupSelector{ID: ptr("group-1")}
		}, "spec.placementGroupSelector.id", field.ErrorTypeInvalid},
		{"ipPrefixCount negative", func(nc *apis.EC2NodeClass) { nc.Spec.IPPrefixCount = ptr(int32(-1)) }, "spec.ipPrefixCount", field.ErrorTypeInvalid},
		{"network interfaces without primary", func(nc *apis.EC2NodeClass) {
			nc.Spec.NetworkInterfaces = []*apis.NetworkInterface{{NetworkCardIndex: 0, DeviceIndex: 1, InterfaceType: apis.InterfaceTypeInterface}}
		}, "spec.networkInterfaces", field.ErrorTypeRequired},
		{"network interfaces duplicated", func(nc *apis.EC2NodeClass) {
			nc.Spec.NetworkInterfaces = []*apis.NetworkInterface{{InterfaceType: apis.InterfaceTypeInterface}, {InterfaceType: apis.InterfaceTypeInterface}}
		}, "spec.networkInterfaces[1]", field.ErrorTypeDuplicate},
		{"two efa-only interfaces on one card", func(nc *apis.EC2NodeClass) {
			nc.Spec.NetworkInterfaces = []*apis.NetworkInterface{{InterfaceType: apis.InterfaceTypeInterface},
				{NetworkCardIndex: 1, DeviceIndex: 0, InterfaceType: apis.InterfaceTypeEFAOnly},
				{NetworkCardIndex: 1, DeviceIndex: 1, InterfaceType: apis.InterfaceTypeEFAOnly}}
		}, "spec.networkInterfaces[2].interfaceType", field.ErrorTypeInvalid},
		{"network interface type unknown", func(nc *apis.EC2NodeClass) {
			nc.Spec.NetworkInterfaces = []*apis.NetworkInterface{{InterfaceType: "efa"}}
		}, "spec.networkInterfaces[0].interfaceType", field.ErrorTypeNotSupported},
		{"connection tracking empty", func(nc *apis.EC2NodeClass) { nc.Spec.ConnectionTracking = &apis.ConnectionTracking{} }, "spec.connectionTracking", field.ErrorTypeRequired},
		{"connection tracking tcp too short", func(nc *apis.EC2NodeClass) {
			nc.Spec.ConnectionTracking = &apis.ConnectionTracking{TCPEstablishedTimeout: ptr(int32(59))}
		}, "spec.connectionTracking.tcpEstablishedTimeout", field.ErrorTypeInvalid},
		{"connection tracking udp stream too long", func(nc *apis.EC2NodeClass) {
			nc.Spec.ConnectionTracking = &apis.ConnectionTracking{UDPStreamTimeout: ptr(int32(181))}
		}, "spec.connectionTracking.udpStreamTimeout", field.ErrorTypeInvalid},
		{"connection tracking udp too short", func(nc *apis.EC2NodeClass) {
			nc.Spec.ConnectionTracking = &apis.ConnectionTracking{UDPTimeout: ptr(int32(29))}
		}, "spec.connectionTracking.udpTimeout", field.ErrorTypeInvalid},
		{"nested virtualization unknown", func(nc *apis.EC2NodeClass) {
			nc.Spec.CPUOptions = &apis.CPUOptions{NestedVirtualization: ptr("on")}
		}, "spec.cpuOptions.nestedVirtualization", field.ErrorTypeNotSupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc := baseEC2NodeClass(t)
			c.mutate(nc)
			assertHasError(t, apis.ValidateEC2NodeClass(nc), c.path, c.typ)
		})
	}
}

func TestValidateEC2NodeClassAliasFamilies(t *testing.T) {
	cases := []struct {
		name, alias string
		family      *string
	}{
		{"al2 pinned", "al2@v20240807", nil},
		{"al2023 latest with matching family", "al2023@latest", ptr("AL2023")},
		{"bottlerocket pinned", "bottlerocket@v1.20.0", nil},
		{"bottlerocket with Custom family", "bottlerocket@latest", ptr("Custom")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			nc := baseEC2NodeClass(t)
			nc.Spec.AMISelectorTerms[0].Alias = c.alias
			nc.Spec.AMIFamily = c.family
			assert.Empty(t, apis.ValidateEC2NodeClass(nc))
		})
	}
}

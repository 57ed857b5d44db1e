// Package instancetypes is the EC2 adapter that builds the instance catalog: every instance type of the
// region from DescribeInstanceTypes (all pages), where each is offered from DescribeInstanceTypeOfferings,
// and — with prices and an EC2NodeClass's settings — the scheduler's instance types with Karpenter's
// labels, the AWS allocatable model and one offering per zone × capacity type.
//
// Types EC2 cannot run as Linux nodes for EKS are left out, with the reason recorded: Mac instances
// (x86_64_mac, arm64_mac), i386-only types, and types without HVM virtualization. A type without a price
// gets no offering, as in Karpenter: it cannot be compared, so it is never chosen.
package instancetypes

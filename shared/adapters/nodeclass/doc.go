// Package nodeclass resolves an EC2NodeClass against the account: its subnets, security groups, AMIs and
// instance profile, into the status Karpenter reports (status.subnets, securityGroups, amis,
// instanceProfile and the *Ready conditions). It is an AWS adapter: EC2 (DescribeSubnets,
// DescribeSecurityGroups, DescribeImages), SSM (the public AMI parameters behind aliases) and IAM (the
// instance profile made for a role). In an isolated VPC, where IAM cannot be reached, Resolver.WithoutIAM
// takes a named instance profile as named and leaves a class with a role unresolved.
//
// Resolution never fails because something is missing: a selector that matches nothing gives a condition
// with status False and a reason, so the operator sees why the class is not Ready. It fails only when an
// API call fails — then the caller must not act on a partial answer.
//
// Cache keeps a warm function's Ready resolutions for a bounded age per class spec hash (DefaultCacheAge),
// so runs do not repeat the same EC2, SSM and IAM reads every minute; StaleAnswer names the AWS answers
// that say a cached value is gone, after which the caller drops the class (Cache.Forget).
//
// A capacity block within 40 minutes of its end resolves as expiring and takes no launch
// (capacityblocks.go); ReservationLookup reads reservations by id for the disruption run, which drains a
// block's nodes then and demotes the nodes of an ended reservation to on-demand.
//
// Profiles deletes the instance profiles made for roles once no class maps to them and no node uses
// them (the lifecycle's housekeeping); it touches only profiles tagged and named as this cluster's and
// region's.
package nodeclass

// Package nodeclass resolves an EC2NodeClass against the account: its subnets, security groups, AMIs and
// instance profile, into the status Karpenter reports (status.subnets, securityGroups, amis,
// instanceProfile and the *Ready conditions). It is an AWS adapter: EC2 (DescribeSubnets,
// DescribeSecurityGroups, DescribeImages), SSM (the public AMI parameters behind aliases) and IAM (the
// instance profile made for a role).
//
// Resolution never fails because something is missing: a selector that matches nothing gives a condition
// with status False and a reason, so the operator sees why the class is not Ready. It fails only when an
// API call fails — then the caller must not act on a partial answer.
package nodeclass

package nodeclass

import (
	"strings"
)

// StaleAnswer reports whether an AWS error code (with its message) says a value a resolution holds is
// gone: a subnet, a security group, an AMI or an instance profile deleted (or, for a profile, not yet
// visible) since the class was resolved. A cached resolution of that class must be dropped (Cache.Forget).
func StaleAnswer(code, message string) bool {
	switch {
	case code == "InvalidSubnetID.NotFound", code == "InvalidSubnet.NotFound", code == "InvalidSubnet",
		code == "InvalidGroup.NotFound", code == "InvalidSecurityGroupID.NotFound",
		strings.HasPrefix(code, "InvalidAMIID."),
		code == "NoSuchEntity":
		return true
	case code == "InvalidParameterValue", code == "InvalidParameter", code == "InvalidParameterCombination":
		// EC2 names a missing instance profile only in the message: "Value (…) for parameter
		// iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name".
		m := strings.ToLower(message)
		return strings.Contains(m, "iaminstanceprofile") || strings.Contains(m, "instance profile")
	}
	return false
}

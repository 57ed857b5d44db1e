package instance

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/smithy-go"
)

// Offering is an instance type in a zone bought one way.
type Offering struct {
	InstanceType, Zone, CapacityType string
}

// InsufficientCapacityError says every override failed for lack of capacity (or of a capacity-like
// limit); the offerings listed should be marked unavailable and the pods scheduled again.
type InsufficientCapacityError struct {
	Offerings []Offering
	Codes     []string
}

func (e *InsufficientCapacityError) Error() string {
	return fmt.Sprintf("insufficient capacity for %d offerings (%s)", len(e.Offerings), strings.Join(e.Codes, ", "))
}

// IsInsufficientCapacity reports whether err is an InsufficientCapacityError.
func IsInsufficientCapacity(err error) bool {
	var ice *InsufficientCapacityError
	return errors.As(err, &ice)
}

// ErrorKind is what the caller should do about a failed call.
type ErrorKind string

const (
	KindThrottled              ErrorKind = "Throttled"              // retry with backoff
	KindQuota                  ErrorKind = "QuotaExceeded"          // stop launching in this account/region until quota frees up
	KindUnauthorized           ErrorKind = "Unauthorized"           // permissions: an operator must act
	KindLaunchTemplateNotFound ErrorKind = "LaunchTemplateNotFound" // recreate the launch template, retry once
	KindInvalidRequest         ErrorKind = "InvalidRequest"         // a bug or bad configuration: do not retry as is
	KindTransient              ErrorKind = "Transient"              // retry
)

// LaunchError is a failed EC2 call with its classification.
type LaunchError struct {
	Kind    ErrorKind
	Code    string
	Message string
}

func (e *LaunchError) Error() string { return fmt.Sprintf("%s (%s): %s", e.Kind, e.Code, e.Message) }

// KindOf returns the kind of a LaunchError in err's chain, or "" when there is none.
func KindOf(err error) ErrorKind {
	var le *LaunchError
	if errors.As(err, &le) {
		return le.Kind
	}
	return ""
}

// capacityCodes are fleet error codes that mean "this offering has no room now" (Karpenter's list).
var capacityCodes = map[string]bool{
	"InsufficientInstanceCapacity":      true,
	"MaxSpotInstanceCountExceeded":      true,
	"VcpuLimitExceeded":                 true,
	"UnfulfillableCapacity":             true,
	"Unsupported":                       true,
	"InsufficientFreeAddressesInSubnet": true,
	"MaxFleetCountExceeded":             true,
	"ReservationCapacityExceeded":       true,
	"InsufficientCapacity":              true,
}

// IsCapacityCode reports whether a fleet error code is a capacity error.
func IsCapacityCode(code string) bool { return capacityCodes[code] }

// classify maps an EC2 error code to a kind.
func classify(code string) ErrorKind {
	switch {
	case code == "RequestLimitExceeded" || code == "Throttling" || code == "ThrottlingException":
		return KindThrottled
	case code == "InstanceLimitExceeded" || code == "VcpuLimitExceeded" || code == "MaxSpotInstanceCountExceeded" ||
		strings.HasSuffix(code, "LimitExceeded"):
		return KindQuota
	case code == "UnauthorizedOperation" || code == "AuthFailure" || strings.HasPrefix(code, "AuthFailure."):
		return KindUnauthorized
	case strings.HasPrefix(code, "InvalidLaunchTemplateName.NotFound") || strings.HasPrefix(code, "InvalidLaunchTemplateId.NotFound"):
		return KindLaunchTemplateNotFound
	case code == "InternalError" || code == "ServiceUnavailable" || code == "Unavailable" || code == "InternalFailure":
		return KindTransient
	case strings.HasPrefix(code, "Invalid") || strings.HasSuffix(code, ".Malformed") || code == "MissingParameter":
		return KindInvalidRequest
	}
	return KindTransient
}

// fromAPIError wraps an error returned by an EC2 call as a LaunchError when it carries an error code.
func fromAPIError(what string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("%s: %w", what, &LaunchError{Kind: classify(ae.ErrorCode()), Code: ae.ErrorCode(), Message: ae.ErrorMessage()})
	}
	return fmt.Errorf("%s: %w", what, err)
}

// notFound reports whether EC2 says the instance does not exist (anymore).
func notFound(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "InvalidInstanceID.NotFound"
}

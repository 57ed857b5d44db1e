package instance

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Offering is an instance type in a zone bought one way.
type Offering struct {
	InstanceType, Zone, CapacityType string
}

// InsufficientCapacityError says every override failed for lack of capacity (or of a capacity-like
// limit); the offerings listed should be marked unavailable and the pods scheduled again. Subnets are
// the subnets EC2 answered InsufficientFreeAddressesInSubnet for: the subnet is full, not the offering,
// so their overrides are not in Offerings and the launch goes on in the zone's next subnet.
type InsufficientCapacityError struct {
	Offerings []Offering
	Codes     []string
	Subnets   []ExhaustedSubnet
}

func (e *InsufficientCapacityError) Error() string {
	msg := fmt.Sprintf("insufficient capacity for %d offerings (%s)", len(e.Offerings), strings.Join(e.Codes, ", "))
	if len(e.Subnets) > 0 {
		msg += "; " + ExhaustedSubnets(e.Subnets)
	}
	return msg
}

// CodeInsufficientFreeAddresses is the fleet error code of a subnet without a free address.
const CodeInsufficientFreeAddresses = "InsufficientFreeAddressesInSubnet"

// ExhaustedSubnet is a subnet EC2 found without a free address for an instance.
type ExhaustedSubnet struct {
	SubnetID, Zone string
}

// ExhaustedSubnets says which subnets had no free address: "subnet subnet-0a (us-east-1a) has no free
// IP address (InsufficientFreeAddressesInSubnet)".
func ExhaustedSubnets(subnets []ExhaustedSubnet) string {
	names := make([]string, len(subnets))
	for i, s := range subnets {
		names[i] = s.SubnetID + " (" + s.Zone + ")"
	}
	noun := "subnet"
	if len(subnets) > 1 {
		noun = "subnets"
	}
	return fmt.Sprintf("%s %s had no free IP address (%s)", noun, strings.Join(names, ", "), CodeInsufficientFreeAddresses)
}

// IsInsufficientCapacity reports whether err is an InsufficientCapacityError.
func IsInsufficientCapacity(err error) bool {
	var ice *InsufficientCapacityError
	return errors.As(err, &ice)
}

// RejectedOffering is an offering a fleet refused for a reason other than capacity: an AMI whose
// architecture or boot mode the type does not support, a parameter the type does not take, a launch
// template deleted since it was made.
type RejectedOffering struct {
	Offering
	Kind          ErrorKind
	Code, Message string
}

// OfferingsError says the fleet launched nothing and named, offering by offering, why: NoCapacity (nil
// when none) lacked capacity and belong in the unavailable-offerings cache; Rejected were refused for
// another reason. EC2 answered, so nothing started; the offerings it did not name may still launch.
type OfferingsError struct {
	NoCapacity *InsufficientCapacityError
	Rejected   []RejectedOffering
}

func (e *OfferingsError) Error() string {
	parts := make([]string, 0, len(e.Rejected)+1)
	for _, r := range e.Rejected {
		parts = append(parts, fmt.Sprintf("%s in %s refused: %s (%s)", r.InstanceType, r.Zone, r.Code, r.Message))
	}
	if e.NoCapacity != nil {
		parts = append(parts, e.NoCapacity.Error())
	}
	return strings.Join(parts, "; ")
}

// Offerings lists every offering the fleet named, with or without capacity.
func (e *OfferingsError) Offerings() []Offering {
	var out []Offering
	if e.NoCapacity != nil {
		out = append(out, e.NoCapacity.Offerings...)
	}
	for _, r := range e.Rejected {
		out = append(out, r.Offering)
	}
	return out
}

// Answered reports whether err carries an answer of EC2's that says nothing was launched (or a request
// refused before any fleet was asked for), so the claim can be released. Any other error leaves open
// whether an instance started: a transport failure, a timeout, a cancelled context, and an EC2 error of
// kind KindServerError (a 5xx, or a code EC2 does not document as a refusal), after which the fleet may
// have started instances.
func Answered(err error) bool {
	var nf *notAskedError
	if errors.As(err, &nf) {
		return true
	}
	var le *LaunchError
	if errors.As(err, &le) {
		return le.Kind != KindServerError
	}
	var ice *InsufficientCapacityError
	var oe *OfferingsError
	return errors.As(err, &ice) || errors.As(err, &oe)
}

// notAskedError is a failure before any fleet was asked for (the look-up of an instance to adopt):
// nothing was launched, whatever the error.
type notAskedError struct{ err error }

func (e *notAskedError) Error() string { return e.err.Error() }
func (e *notAskedError) Unwrap() error { return e.err }

// ErrorKind is what the caller should do about a failed call.
type ErrorKind string

const (
	KindThrottled              ErrorKind = "Throttled"              // retry with backoff
	KindQuota                  ErrorKind = "QuotaExceeded"          // stop launching in this account/region until quota frees up
	KindUnauthorized           ErrorKind = "Unauthorized"           // permissions: an operator must act
	KindLaunchTemplateNotFound ErrorKind = "LaunchTemplateNotFound" // recreate the launch template, retry once
	KindInvalidRequest         ErrorKind = "InvalidRequest"         // a bug or bad configuration: do not retry as is
	KindTransient              ErrorKind = "Transient"              // retry
	// KindServerError is a 5xx, or a code EC2 does not document as a refusal: the call may have taken
	// effect, so its outcome is unknown (see Answered).
	KindServerError ErrorKind = "ServerError"
)

// LaunchError is a failed EC2 call with its classification.
type LaunchError struct {
	Kind    ErrorKind
	Code    string
	Message string
}

func (e *LaunchError) Error() string { return fmt.Sprintf("%s (%s): %s", e.Kind, e.Code, e.Message) }

// NeverSucceeds reports whether retrying a call that failed with kind k cannot help until an operator
// acts: missing permissions, or a request EC2 calls invalid.
func (k ErrorKind) NeverSucceeds() bool { return k == KindUnauthorized || k == KindInvalidRequest }

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
		return KindServerError
	case strings.HasPrefix(code, "Invalid") || strings.HasSuffix(code, ".Malformed") || code == "MissingParameter":
		return KindInvalidRequest
	}
	// A code not listed above is not known to be a refusal: whether the call took effect is unknown.
	return KindServerError
}

// fromAPIError wraps an error returned by an EC2 call as a LaunchError when it carries an error code. A
// 5xx that is not a throttle is a server error whatever its code: EC2 may have acted before it failed.
func fromAPIError(what string, err error) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		kind := classify(ae.ErrorCode())
		var re *smithyhttp.ResponseError
		if errors.As(err, &re) && re.HTTPStatusCode() >= 500 && kind != KindThrottled {
			kind = KindServerError
		}
		return fmt.Errorf("%s: %w", what, &LaunchError{Kind: kind, Code: ae.ErrorCode(), Message: ae.ErrorMessage()})
	}
	return fmt.Errorf("%s: %w", what, err)
}

// notFound reports whether EC2 says the instance does not exist (anymore).
func notFound(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "InvalidInstanceID.NotFound"
}

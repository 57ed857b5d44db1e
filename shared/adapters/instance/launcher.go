package instance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// EC2API is the part of EC2 the launcher uses; *ec2.Client satisfies it.
type EC2API interface {
	CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, optFns ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error)
	CreateTags(ctx context.Context, in *ec2.CreateTagsInput, optFns ...func(*ec2.Options)) (*ec2.CreateTagsOutput, error)
	TerminateInstances(ctx context.Context, in *ec2.TerminateInstancesInput, optFns ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error)
	ec2.DescribeInstancesAPIClient
}

var _ EC2API = (*ec2.Client)(nil)

// Tag keys Nodewright puts on what it launches. They are Nodewright's own: an instance that carried
// Karpenter's karpenter.sh/nodepool + karpenter.k8s.aws/ec2nodeclass + cluster tag (kubernetes.io/cluster/<name>
// or eks:eks-cluster-name) without a NodeClaim would be terminated by Karpenter's garbage collection, so
// of Karpenter's tag keys only karpenter.sh/nodepool is set (cost allocation reports split by it), never
// the other two (karpenter.go). TagCluster marks what Nodewright owns: every list, clean-up and IAM
// condition on a destructive call requires it.
const (
	TagCluster   = "nodewright.sh/cluster"
	TagNodePool  = "nodewright.sh/nodepool"
	TagNodeClass = "nodewright.sh/ec2nodeclass"
	TagNodeClaim = "nodewright.sh/nodeclaim"
)

// Tag keys Karpenter puts on what it launches. Nodewright sets only KarpenterTagNodePool, never the others
// (tests and the sandbox use them to make instances tagged as Karpenter tags its own).
const (
	KarpenterTagNodePool  = "karpenter.sh/nodepool"
	KarpenterTagNodeClass = "karpenter.k8s.aws/ec2nodeclass"
	KarpenterTagNodeClaim = "karpenter.sh/nodeclaim"
	TagEKSClusterName     = "eks:eks-cluster-name"
)

// ClusterTagKey is the kubernetes.io/cluster/<cluster> tag key; Nodewright's instances carry it with the
// value "owned" (the cloud provider uses it), never together with Karpenter's node pool and node class keys.
func ClusterTagKey(cluster string) string { return "kubernetes.io/cluster/" + cluster }

// Capacity types.
const (
	CapacityTypeSpot     = "spot"
	CapacityTypeOnDemand = "on-demand"
	// CapacityTypeReserved launches into a capacity reservation that each override's launch template
	// targets.
	CapacityTypeReserved = "reserved"
)

// Capacity reservation types (Override.ReservationType).
const (
	ReservationTypeDefault       = "default"
	ReservationTypeCapacityBlock = "capacity-block"
)

// MaxOverrideTypes is the most instance types one launch offers EC2.
const MaxOverrideTypes = 60

// Override is one instance type in one zone's subnet, through one launch template.
type Override struct {
	InstanceType   string
	Zone           string
	SubnetID       string
	LaunchTemplate string
	// Price orders the overrides; cheapest first.
	Price float64
	// ReservationID and ReservationType name the capacity reservation a reserved override's launch
	// template targets; empty for spot and on-demand. Interruptible marks an interruptible reservation
	// (its owner may reclaim the capacity), which a fleet reaches only through reserved-capacity options.
	ReservationID, ReservationType string
	Interruptible                  bool
}

// Request is one claim's launch.
type Request struct {
	Cluster, Claim, NodePool, NodeClass string
	CapacityType                        string
	Overrides                           []Override
	// Tags are the node class's tags; the ownership tags are added (and win on conflict).
	Tags map[string]string
	// Context is the node class's CreateFleet context (ODCR/targeting), if any.
	Context string
	// PriceOverlay says a NodeOverlay priced the claim's options (karpenter.sh/price-overlay-applied): the
	// fleet then follows the overrides' prices, which are the overlay's, rather than EC2's own — each
	// override's Priority is its price, on-demand launches are prioritized and spot launches
	// capacity-optimized-prioritized, as Karpenter's provider does.
	PriceOverlay bool
	// ClientToken makes the CreateFleet call idempotent; empty means the claim name. A fallback attempt
	// with other overrides needs a token of its own (EC2 refuses a token reused with other parameters).
	ClientToken string
	// Fresh says the request's token was never sent before (a claim or batch the caller has just recorded,
	// on an attempt not made yet): no instance can carry it, so the look-up for one to adopt before the
	// call is skipped. A tag-filtered DescribeInstances is the slowest call of a burst, and it stood between
	// a pending pod and its CreateFleet. A call whose outcome is unknown still looks afterwards.
	Fresh bool
}

// token is the request's idempotency token.
func (req Request) token() string {
	if req.ClientToken != "" {
		return req.ClientToken
	}
	return req.Claim
}

// Instance is what EC2 says about a launched instance.
type Instance struct {
	ID, InstanceType, Zone, CapacityType, ImageID, State string
	// CapacityReservationID is the reservation the instance runs in, if any; InterruptibleReservation
	// says that reservation is an interruptible one (EC2's instance lifecycle, or the launch's override).
	CapacityReservationID    string
	InterruptibleReservation bool
	// SubnetID and SecurityGroupIDs are the subnet and security groups of the instance's primary
	// network interface, as EC2 describes them (empty when only the fleet's answer is known).
	SubnetID         string
	SecurityGroupIDs []string
	LaunchTime       time.Time
	Tags             map[string]string
	// NoCapacity lists the offerings a fresh launch's fleet reported without capacity before it found
	// one that had some; they should be marked unavailable like a failed launch's. ExhaustedSubnets are
	// the subnets it found without a free address on the way.
	NoCapacity       []Offering
	ExhaustedSubnets []ExhaustedSubnet
}

// ProviderID is the Kubernetes Node's spec.providerID for the instance.
func (i Instance) ProviderID() string { return "aws:///" + i.Zone + "/" + i.ID }

// Launcher launches and terminates instances for one cluster.
type Launcher struct {
	ec2     EC2API
	cluster string
	// now is the clock Terminated judges an instance's age by.
	now func() time.Time
}

// New returns a launcher for cluster.
func New(api EC2API, cluster string) *Launcher {
	return &Launcher{ec2: api, cluster: cluster, now: time.Now}
}

// Launch starts the claim's instance, or returns the one already launched for it (found by its claim tag,
// before the call unless req.Fresh, and after a call whose outcome is unknown; see createFleet). When EC2 answered, the
// error is an InsufficientCapacityError (every offering it named lacked capacity), an OfferingsError
// (it refused some offerings for other reasons) or a LaunchError (it refused the request); Answered
// tells those from errors that leave open whether an instance started.
func (l *Launcher) Launch(ctx context.Context, req Request) (Instance, error) {
	if err := validate(req); err != nil {
		return Instance{}, err
	}
	if !req.Fresh {
		existing, ok, err := l.FindByClaim(ctx, req.Claim)
		if err != nil {
			// No fleet was asked for: nothing was launched, whatever the error.
			return Instance{}, &notAskedError{fromAPIError("looking up the instance of claim "+req.Claim, err)}
		}
		if ok {
			return req.adopted(existing), nil
		}
	}
	out, found, err := l.createFleet(ctx, l.fleetInput(req), "creating fleet for claim "+req.Claim, func(ctx context.Context) ([]Instance, error) {
		inst, ok, err := l.FindByClaim(ctx, req.Claim)
		if !ok {
			return nil, err
		}
		return []Instance{inst}, err
	})
	if len(found) > 0 {
		return req.adopted(found[0]), nil
	}
	if err != nil {
		return Instance{}, err
	}
	for _, inst := range out.Instances {
		if len(inst.InstanceIds) == 0 {
			continue
		}
		id := inst.InstanceIds[0]
		got, err := l.describe(ctx, id)
		if err != nil {
			// The instance exists; report what the fleet said and let registration fill the rest.
			got = Instance{ID: id, InstanceType: string(inst.InstanceType), CapacityType: req.CapacityType}
			if o := inst.LaunchTemplateAndOverrides; o != nil && o.Overrides != nil {
				got.Zone = aws.ToString(o.Overrides.AvailabilityZone)
			}
		}
		var ice *InsufficientCapacityError
		if errors.As(fleetErrors(req, out.Errors), &ice) {
			got.NoCapacity, got.ExhaustedSubnets = ice.Offerings, ice.Subnets
		}
		return req.reserved(got), nil
	}
	return Instance{}, fleetErrors(req, out.Errors)
}

// adopted is an instance launched for the request by an earlier call (found by its claim tag).
func (req Request) adopted(inst Instance) Instance {
	if inst.CapacityReservationID != "" { // launched into a reservation
		return req.reserved(inst)
	}
	return inst
}

// fleetErrors turns the errors of a fleet that launched nothing into the caller's error: an
// InsufficientCapacityError when every error is a capacity error, an OfferingsError when EC2 refused
// some offerings for other reasons, and a LaunchError when a non-capacity error names no offering (it is
// about the whole request).
func fleetErrors(req Request, errs []ec2types.CreateFleetError) error {
	if len(errs) == 0 {
		return fmt.Errorf("creating fleet for claim %s: %w", req.Claim, &LaunchError{Kind: KindTransient, Code: "NoInstance", Message: "the fleet launched nothing and reported no error"})
	}
	zoneOfSubnet := map[string]string{}
	for _, o := range req.Overrides {
		zoneOfSubnet[o.SubnetID] = o.Zone
	}
	ice := &InsufficientCapacityError{}
	var rejected []RejectedOffering
	seenCode, seenSubnet := map[string]bool{}, map[string]bool{}
	for _, e := range errs {
		code, message := aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)
		var offering *Offering
		subnet := ""
		if e.LaunchTemplateAndOverrides != nil && e.LaunchTemplateAndOverrides.Overrides != nil {
			o := e.LaunchTemplateAndOverrides.Overrides
			subnet = aws.ToString(o.SubnetId)
			zone := aws.ToString(o.AvailabilityZone)
			if zone == "" {
				zone = zoneOfSubnet[subnet]
			}
			offering = &Offering{InstanceType: string(o.InstanceType), Zone: zone, CapacityType: req.CapacityType}
		}
		if code == CodeInsufficientFreeAddresses && subnet != "" {
			// The subnet is full, not the offering: the zone's other subnets may still take it (an answer
			// that names no subnet falls through to the offering, as any capacity error).
			if !seenCode[code] {
				seenCode[code] = true
				ice.Codes = append(ice.Codes, code)
			}
			if !seenSubnet[subnet] {
				seenSubnet[subnet] = true
				ice.Subnets = append(ice.Subnets, ExhaustedSubnet{SubnetID: subnet, Zone: offering.Zone})
			}
			continue
		}
		switch {
		case !IsCapacityCode(code) && offering == nil:
			return fmt.Errorf("creating fleet for claim %s: %w", req.Claim, &LaunchError{Kind: classify(code), Code: code, Message: message})
		case !IsCapacityCode(code):
			rejected = append(rejected, RejectedOffering{Offering: *offering, Kind: classify(code), Code: code, Message: message})
			continue
		}
		if !seenCode[code] {
			seenCode[code] = true
			ice.Codes = append(ice.Codes, code)
		}
		if offering != nil {
			ice.Offerings = append(ice.Offerings, *offering)
		}
	}
	if len(rejected) == 0 {
		return fmt.Errorf("creating fleet for claim %s: %w", req.Claim, ice)
	}
	oe := &OfferingsError{Rejected: rejected}
	if len(ice.Codes) > 0 {
		oe.NoCapacity = ice
	}
	return fmt.Errorf("creating fleet for claim %s: %w", req.Claim, oe)
}

func validate(req Request) error {
	switch {
	case req.Cluster == "" || req.Claim == "" || req.NodePool == "" || req.NodeClass == "":
		return &LaunchError{Kind: KindInvalidRequest, Code: "MissingParameter", Message: "cluster, claim, node pool and node class are required"}
	case req.CapacityType != CapacityTypeSpot && req.CapacityType != CapacityTypeOnDemand && req.CapacityType != CapacityTypeReserved:
		return &LaunchError{Kind: KindInvalidRequest, Code: "InvalidCapacityType", Message: fmt.Sprintf("capacity type %q is not spot, on-demand or reserved", req.CapacityType)}
	case len(req.Overrides) == 0:
		return &LaunchError{Kind: KindInvalidRequest, Code: "MissingParameter", Message: "no instance type to launch"}
	case len(req.token()) > 64:
		return &LaunchError{Kind: KindInvalidRequest, Code: "InvalidClientToken", Message: "a ClientToken (the claim name by default) is at most 64 characters"}
	}
	types := map[string]bool{}
	for _, o := range req.Overrides {
		types[o.InstanceType] = true
	}
	if len(types) > MaxOverrideTypes {
		return &LaunchError{Kind: KindInvalidRequest, Code: "TooManyInstanceTypes", Message: fmt.Sprintf("%d instance types offered, at most %d", len(types), MaxOverrideTypes)}
	}
	if req.CapacityType == CapacityTypeReserved {
		return validateReserved(req.Overrides)
	}
	return nil
}

// tags returns the tags of the claim's instance, volumes and fleet: the node class's, then the ownership
// tags (which win), and karpenter.sh/nodepool with the claim's NodePool, which cost allocation reports
// split by as they do for Karpenter's instances.
func (req Request) tags() map[string]string {
	t := map[string]string{}
	for k, v := range req.Tags {
		t[k] = v
	}
	// Karpenter's keys never come from the node class (its validation refuses most of them).
	for _, k := range KarpenterOwnedTagKeys {
		delete(t, k)
	}
	t[KarpenterTagNodePool] = req.NodePool
	t[ClusterTagKey(req.Cluster)] = "owned"
	t[TagCluster] = req.Cluster
	t[TagNodePool] = req.NodePool
	t[TagNodeClass] = req.NodeClass
	t[TagNodeClaim] = req.Claim
	return t
}

func (l *Launcher) fleetInput(req Request) *ec2.CreateFleetInput {
	// One launch template config per template, overrides cheapest first.
	byTemplate := map[string][]ec2types.FleetLaunchTemplateOverridesRequest{}
	var templates []string
	overrides := append([]Override(nil), req.Overrides...)
	sort.SliceStable(overrides, func(i, j int) bool { return overrides[i].Price < overrides[j].Price })
	for _, o := range overrides {
		if _, ok := byTemplate[o.LaunchTemplate]; !ok {
			templates = append(templates, o.LaunchTemplate)
		}
		ov := ec2types.FleetLaunchTemplateOverridesRequest{
			InstanceType: ec2types.InstanceType(o.InstanceType), SubnetId: aws.String(o.SubnetID),
			AvailabilityZone: aws.String(o.Zone),
		}
		if req.PriceOverlay {
			// EC2 launches the lowest Priority first: the cheapest at the overlay's prices.
			ov.Priority = aws.Float64(o.Price)
		}
		byTemplate[o.LaunchTemplate] = append(byTemplate[o.LaunchTemplate], ov)
	}
	var configs []ec2types.FleetLaunchTemplateConfigRequest
	for _, name := range templates {
		configs = append(configs, ec2types.FleetLaunchTemplateConfigRequest{
			LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(name), Version: aws.String("$Latest")},
			Overrides:                   byTemplate[name],
		})
	}
	tags := tagList(req.tags())
	in := &ec2.CreateFleetInput{
		Type:                  ec2types.FleetTypeInstant,
		ClientToken:           aws.String(req.token()),
		LaunchTemplateConfigs: configs,
		TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{
			TotalTargetCapacity:       aws.Int32(1),
			DefaultTargetCapacityType: req.fleetCapacityType(),
		},
		TagSpecifications: []ec2types.TagSpecification{
			{ResourceType: ec2types.ResourceTypeInstance, Tags: tags},
			{ResourceType: ec2types.ResourceTypeVolume, Tags: tags},
			{ResourceType: ec2types.ResourceTypeFleet, Tags: tags},
		},
	}
	if req.Context != "" {
		in.Context = aws.String(req.Context)
	}
	switch target := in.TargetCapacitySpecification.DefaultTargetCapacityType; {
	case target == ec2types.DefaultTargetCapacityTypeSpot && req.PriceOverlay:
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyCapacityOptimizedPrioritized}
	case target == ec2types.DefaultTargetCapacityTypeSpot:
		in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyPriceCapacityOptimized}
	case target == ec2types.DefaultTargetCapacityTypeCapacityBlock:
		// A capacity block takes no on-demand options.
	case target == ec2types.DefaultTargetCapacityTypeReservedCapacity:
		// An interruptible reservation is reached only through reserved-capacity options, as Karpenter does.
		in.ReservedCapacityOptions = &ec2types.ReservedCapacityOptionsRequest{
			ReservationTypes: []ec2types.FleetReservationType{ec2types.FleetReservationTypeInterruptibleCapacityReservation},
		}
	case req.PriceOverlay:
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyPrioritized}
	default:
		in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyLowestPrice}
	}
	return in
}

func tagList(m map[string]string) []ec2types.Tag {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]ec2types.Tag, len(keys))
	for i, k := range keys {
		out[i] = ec2types.Tag{Key: aws.String(k), Value: aws.String(m[k])}
	}
	return out
}

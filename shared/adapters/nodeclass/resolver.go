package nodeclass

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/core/apis"
)

// EC2API is the part of EC2 resolution reads; *ec2.Client satisfies it.
type EC2API interface {
	ec2.DescribeSubnetsAPIClient
	ec2.DescribeSecurityGroupsAPIClient
	ec2.DescribeImagesAPIClient
	ec2.DescribeCapacityReservationsAPIClient
}

// SSMAPI reads public AMI parameters; *ssm.Client satisfies it.
type SSMAPI interface {
	GetParameter(ctx context.Context, in *ssm.GetParameterInput, optFns ...func(*ssm.Options)) (*ssm.GetParameterOutput, error)
}

// IAMAPI manages instance profiles; *iam.Client satisfies it.
type IAMAPI interface {
	GetInstanceProfile(ctx context.Context, in *iam.GetInstanceProfileInput, optFns ...func(*iam.Options)) (*iam.GetInstanceProfileOutput, error)
	CreateInstanceProfile(ctx context.Context, in *iam.CreateInstanceProfileInput, optFns ...func(*iam.Options)) (*iam.CreateInstanceProfileOutput, error)
	AddRoleToInstanceProfile(ctx context.Context, in *iam.AddRoleToInstanceProfileInput, optFns ...func(*iam.Options)) (*iam.AddRoleToInstanceProfileOutput, error)
	RemoveRoleFromInstanceProfile(ctx context.Context, in *iam.RemoveRoleFromInstanceProfileInput, optFns ...func(*iam.Options)) (*iam.RemoveRoleFromInstanceProfileOutput, error)
}

var (
	_ EC2API = (*ec2.Client)(nil)
	_ SSMAPI = (*ssm.Client)(nil)
	_ IAMAPI = (*iam.Client)(nil)
)

// Resolver resolves node classes for one cluster in one region.
type Resolver struct {
	ec2             EC2API
	ssm             SSMAPI
	iam             IAMAPI
	cluster, region string
	now             func() time.Time
	// noIAM is set by WithoutIAM.
	noIAM bool
}

// New returns a resolver. now is the clock used for AMI deprecation and condition times.
func New(ec2API EC2API, ssmAPI SSMAPI, iamAPI IAMAPI, cluster, region string, now func() time.Time) *Resolver {
	return &Resolver{ec2: ec2API, ssm: ssmAPI, iam: iamAPI, cluster: cluster, region: region, now: now}
}

// WithoutIAM makes r resolve node classes without calling IAM, for functions in a VPC without internet
// access: IAM has no VPC endpoint. A class's spec.instanceProfile is then taken as named, as Karpenter
// does, and a class with spec.role, whose profile would have to be created, does not resolve (its
// InstanceProfileReady condition says why). It returns r.
func (r *Resolver) WithoutIAM() *Resolver {
	r.noIAM = true
	return r
}

// ConditionTypeReady is the summary condition: every other condition is True.
const ConditionTypeReady = "Ready"

// Resolution is a node class resolved against the account.
type Resolution struct {
	// Status is what Karpenter would report in the EC2NodeClass status.
	Status apis.EC2NodeClassStatus
	// Subnets are the matched subnets with their free addresses, most first, as DescribeSubnets answered
	// at SubnetsReadAt (a launch's in-flight address prediction counts the launches made since).
	Subnets       []Subnet
	SubnetsReadAt time.Time
	// CapacityReservations are the usable reservations (also in Status), with their available counts.
	CapacityReservations []CapacityReservation
	Ready                bool
}

// Resolve resolves nc for Kubernetes version k8sVersion ("1.34"). The error is only for failed API calls;
// anything that does not resolve is a False condition with its reason.
func (r *Resolver) Resolve(ctx context.Context, nc *apis.EC2NodeClass, k8sVersion string) (Resolution, error) {
	var res Resolution
	now := metav1.NewTime(r.now())
	cond := func(kind string, ok bool, reason, message string) {
		status := metav1.ConditionTrue
		if !ok {
			status = metav1.ConditionFalse
		}
		res.Status.Conditions = append(res.Status.Conditions, metav1.Condition{Type: kind, Status: status, Reason: reason,
			Message: message, LastTransitionTime: now, ObservedGeneration: nc.Generation})
	}

	// The four lookups are independent (capacity reservations follow the subnets' zones): they go out
	// together, so a cold resolution costs one round trip of the slowest, not the sum of four. Errors are
	// judged in the order the lookups were made one after another before.
	// A lookup's error is judged below, not by the group: one failing does not cancel the others. A
	// panic in one comes back as the resolution's error.
	var look lookups
	res.SubnetsReadAt = r.now()
	g, gctx := crash.WithContext(ctx)
	g.Go(func() error {
		look.subnets, look.subnetsErr = r.subnets(gctx, nc.Spec.SubnetSelectorTerms)
		if look.subnetsErr == nil && len(nc.Spec.CapacityReservationSelectorTerms) > 0 {
			zones := map[string]bool{}
			for _, s := range look.subnets {
				zones[s.Zone] = true
			}
			look.reservations, look.reservationsErr = r.capacityReservations(gctx, nc.Spec.CapacityReservationSelectorTerms, zones)
		}
		return nil
	})
	g.Go(func() error {
		look.groups, look.groupsErr = r.securityGroups(gctx, nc.Spec.SecurityGroupSelectorTerms)
		return nil
	})
	g.Go(func() error {
		look.amis, look.amisErr = r.amis(gctx, nc, k8sVersion)
		return nil
	})
	g.Go(func() error {
		look.profile, look.profileErr = r.instanceProfile(gctx, nc)
		return nil
	})
	if err := g.Wait(); err != nil {
		return res, err
	}

	if look.subnetsErr != nil {
		return res, look.subnetsErr
	}
	subnets := look.subnets
	res.Subnets = subnets
	for _, s := range subnets {
		res.Status.Subnets = append(res.Status.Subnets, apis.SubnetStatus{ID: s.ID, Zone: s.Zone, ZoneID: s.ZoneID})
	}
	if len(subnets) == 0 {
		cond(apis.ConditionTypeSubnetsReady, false, "SubnetsNotFound", "subnetSelectorTerms match no subnet")
	} else {
		cond(apis.ConditionTypeSubnetsReady, true, "SubnetsReady", fmt.Sprintf("%d subnets in %d zones", len(subnets), len(BestPerZone(subnets))))
	}

	if len(nc.Spec.CapacityReservationSelectorTerms) > 0 {
		if look.reservationsErr != nil {
			return res, look.reservationsErr
		}
		res.CapacityReservations = look.reservations
		for _, cr := range res.CapacityReservations {
			res.Status.CapacityReservations = append(res.Status.CapacityReservations, cr.CapacityReservationStatus)
		}
		// No matching reservation is not an error: the class launches spot or on-demand instead.
		cond(apis.ConditionTypeCapacityReservationsReady, true, "CapacityReservationsReady",
			fmt.Sprintf("%d active capacity reservations", len(res.CapacityReservations)))
	}

	if look.groupsErr != nil {
		return res, look.groupsErr
	}
	res.Status.SecurityGroups = look.groups
	if len(res.Status.SecurityGroups) == 0 {
		cond(apis.ConditionTypeSecurityGroupsReady, false, "SecurityGroupsNotFound", "securityGroupSelectorTerms match no security group")
	} else {
		cond(apis.ConditionTypeSecurityGroupsReady, true, "SecurityGroupsReady", "")
	}

	switch amis, err := look.amis, look.amisErr; {
	case isNotResolvable(err):
		cond(apis.ConditionTypeAMIsReady, false, "AMINotSupported", err.Error())
	case err != nil:
		return res, err
	case len(amis) == 0:
		cond(apis.ConditionTypeAMIsReady, false, "AMINotFound", "amiSelectorTerms match no AMI")
	default:
		res.Status.AMIs = amis
		cond(apis.ConditionTypeAMIsReady, true, "AMIsReady", "")
	}

	switch profile, err := look.profile, look.profileErr; {
	case isNotResolvable(err):
		cond(apis.ConditionTypeInstanceProfileReady, false, "InstanceProfileNotReady", err.Error())
	case err != nil:
		return res, err
	default:
		res.Status.InstanceProfile = profile
		cond(apis.ConditionTypeInstanceProfileReady, true, "InstanceProfileReady", "")
	}

	res.Ready = true
	var notReady []string
	for _, c := range res.Status.Conditions {
		if c.Status != metav1.ConditionTrue {
			res.Ready = false
			notReady = append(notReady, c.Type)
		}
	}
	if res.Ready {
		cond(ConditionTypeReady, true, "Ready", "")
	} else {
		cond(ConditionTypeReady, false, "NotReady", fmt.Sprintf("not ready: %v", notReady))
	}
	return res, nil
}

// lookups are the answers of a resolution's lookups, made together.
type lookups struct {
	subnets         []Subnet
	subnetsErr      error
	reservations    []CapacityReservation
	reservationsErr error
	groups          []apis.SecurityGroupStatus
	groupsErr       error
	amis            []apis.AMIStatus
	amisErr         error
	profile         string
	profileErr      error
}

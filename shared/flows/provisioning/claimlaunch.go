package provisioning

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/launchtemplate"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// claimLaunch launches one planned claim.
type claimLaunch struct {
	store     Store
	templates LaunchTemplates
	launcher  InstanceLauncher
	target    claimTarget
	// newName draws a claim name; run draws another when the name is taken (see maxClaimNameDraws).
	newName func() string
	// name is the name the claim was written under; written is the record as record wrote it (pending),
	// nil until then.
	name    string
	written *state.Claim
	// stamp is what the claim records of the configuration it is launched from (drift hashes, lifetime).
	stamp claimStamp
	// replaces names the claims this one is launched to replace (state.Claim.Replaces): a consolidation's
	// candidates, or the draining claims whose pods a provisioning run packed onto it.
	replaces []string
	// batch is the id of the batched launch the claim goes with (state.Claim.Batch); empty alone.
	batch string
}

// run writes the claim record (pending), then launches it and records the outcome:
//   - launched: the claim becomes launched with its instance, and a Launch decision is recorded;
//   - EC2 answered with an error (no capacity anywhere, every offering refused, unauthorized, a quota, a
//     throttle or server error after the SDK's retries), or nothing was launchable: nothing was started,
//     so the claim is deleted and a LaunchFailed decision says why;
//   - a transport error or a timeout: whether an instance started is unknown, so the claim stays pending —
//     it keeps counting as capacity, and the reconciler adopts its instance or deletes it after the
//     launch timeout.
//
// A failed launch's error is a *LaunchFailure.
//
// The returned claim is set whenever an instance was launched, even if recording it failed.
func (l claimLaunch) run(ctx context.Context) (*LaunchedClaim, error) {
	labels, err := l.record(ctx)
	if err != nil {
		return nil, err
	}
	return l.launch(ctx, labels)
}

// record writes the pending claim record (see create) and returns the labels it was written with; it
// sets l.name.
func (l *claimLaunch) record(ctx context.Context) (map[string]string, error) {
	cp, nc := l.target.claim, l.target.class.nc
	labels, err := claimLabels(l.target.pool, nc.Name, cp.Requirements)
	if err != nil {
		return nil, fmt.Errorf("labelling a claim for nodepool %s: %w", cp.NodePool, err)
	}
	written, err := l.create(ctx, labels)
	if err != nil {
		return nil, err
	}
	l.name, l.written = written.Name, &written
	return labels, nil
}

// launch launches the recorded claim l.name and records the outcome (see run).
func (l claimLaunch) launch(ctx context.Context, labels map[string]string) (*LaunchedClaim, error) {
	cp, nc := l.target.claim, l.target.class.nc
	// record created the claim under this name moments ago (a create refuses a name that is taken), so
	// no call has carried its token, nor the later attempts' tokens derived from it: the launcher skips
	// its look-up for an instance to adopt. An attempt whose outcome is unknown ends the launch, and the
	// launcher then looks by the claim tag itself.
	req := instance.Request{Cluster: l.target.cluster.Name, Claim: l.name, NodePool: cp.NodePool, NodeClass: nc.Name,
		Tags: nc.Spec.Tags, Context: fleetContext(cp, nc), PriceOverlay: cp.PriceOverlayApplied, Fresh: l.written != nil}
	plan, err := l.plan(ctx, req)
	if err != nil {
		return nil, err
	}
	res, err := Launch(ctx, l.launcher, l.store, plan)
	var launched []instance.Instance
	if err == nil {
		launched = []instance.Instance{res.Instance}
	}
	plan.subnets.settle(launched, l.target.class.podsOf, outcomeUnknown(err))
	if err != nil {
		return nil, l.failed(ctx, plan, res, err)
	}
	return l.launched(ctx, plan, labels, res.Instance, res.Attempts, res.ExhaustedSubnets)
}

// plan builds the launch plan of the recorded claim; a claim nothing is launchable for is abandoned (the
// error is then its *LaunchFailure).
func (l claimLaunch) plan(ctx context.Context, req instance.Request) (LaunchPlan, error) {
	plan, err := buildLaunchPlan(ctx, l.templates, l.target, req)
	if err == nil && len(plan.Reserved)+len(plan.Spot)+len(plan.OnDemand) == 0 {
		err = errors.New("no offering of its instance types has a subnet and an AMI")
	}
	if err != nil {
		return plan, l.abandon(ctx, "LaunchTemplateFailed", fmt.Errorf("planning launch of claim %s: %w", l.name, err))
	}
	return plan, nil
}

// launched records that the claim's instance inst was launched, after attempts CreateFleet calls, and
// the Launch decision. The two are independent writes (the instance is running either way, and a claim
// record left unwritten is the reconciler's to adopt) and are made at once: one after the other they kept
// a burst's next run, which the run's lease holds back, waiting for two table round trips more.
func (l claimLaunch) launched(ctx context.Context, plan LaunchPlan, labels map[string]string, inst instance.Instance,
	attempts int, full []instance.ExhaustedSubnet) (*LaunchedClaim, error) {
	rec := l.launchRecord(plan, labels, inst, attempts)
	noteFullSubnets(rec.details, full)
	decided := make(chan error, 1)
	go func() {
		var err error
		defer func() { decided <- err }()
		defer crash.Capture(&err)
		err = l.decide(ctx, "Launch", "Provisioned", l.target.claim.Why, rec.details)
	}()
	recorded := l.recordLaunch(ctx, rec)
	if err := <-decided; recorded == nil {
		return rec.claim, err
	}
	return rec.claim, recorded
}

// recordLaunch writes rec onto the claim's record on its own: a conditional put over the record as
// written before the launch, or, when that changed since (or is not known), read, apply and a
// conditional put; a claim the reconciler already adopted the instance for is left as it is.
func (l claimLaunch) recordLaunch(ctx context.Context, rec launchRecord) error {
	if l.written != nil {
		next := *l.written
		rec.apply(&next)
		if _, err := l.store.PutClaims(ctx, []state.Claim{*l.written}, []state.Claim{next}); err == nil {
			return nil
		}
	}
	_, err := l.store.UpdateClaim(ctx, l.name, rec.update)
	if err != nil && !errors.Is(err, errAdoptedFirst) {
		return fmt.Errorf("recording launch of claim %s (instance %s; the reconciler adopts it): %w", l.name, rec.inst.ID, err)
	}
	return nil
}

// launchRecord is what recording a claim's launch writes: the claim's new fields and the Launch
// decision's details.
type launchRecord struct {
	claim   *LaunchedClaim
	inst    instance.Instance
	apply   func(*state.Claim)
	details map[string]string
}

// update applies the launch to a claim record read back, unless the reconciler adopted the instance
// first (errAdoptedFirst).
func (r launchRecord) update(c *state.Claim) error {
	if c.InstanceID == r.inst.ID && c.Lifecycle != state.Pending {
		// The reconciler adopted the instance by its claim tag while this update was slow (throttled,
		// retried): its record is the instance's, and newer.
		return errAdoptedFirst
	}
	r.apply(c)
	return nil
}

// launchRecord works out what the launch of inst, after attempts CreateFleet calls, records.
func (l claimLaunch) launchRecord(plan LaunchPlan, labels map[string]string, inst instance.Instance, attempts int) launchRecord {
	cp := l.target.claim
	capacityType, chosen, found := launchedOffering(plan, inst)
	price := chosen.Price
	image, subnet, groups := launchedWith(plan, chosen, found, securityGroupIDs(l.target.class.resolved.Status), inst)
	labels = launchedLabels(labels, l.target.class.byName[inst.InstanceType], inst, capacityType,
		l.target.class.subnets[inst.Zone].ZoneID, reservationType(plan, inst.CapacityReservationID))
	details := map[string]string{
		"instanceId": inst.ID, "instanceType": inst.InstanceType, "zone": inst.Zone, "capacityType": capacityType,
		"pricePerHour": strconv.FormatFloat(price, 'f', 4, 64), "pods": strconv.Itoa(len(cp.Pods)),
		"attempts": strconv.Itoa(attempts), "capacityReservationId": inst.CapacityReservationID}
	real, buffered := countBufferPods(cp.Pods)
	if buffered > 0 {
		// The pods count the virtual pods of CapacityBuffers too; bufferPods says how many of them there are.
		details["bufferPods"] = strconv.Itoa(buffered)
	}
	if l.batch != "" {
		details["batch"] = l.batch
	}
	if len(plan.Filtered) > 0 {
		details["filtered"] = strings.Join(plan.Filtered, "; ")
	}
	if src := l.target.class.memorySource(inst.InstanceType); src != "" {
		details["memoryCapacity"] = src // which memory the plan counted on: observed or estimated
	}
	return launchRecord{
		claim: &LaunchedClaim{Name: l.name, NodePool: cp.NodePool, InstanceID: inst.ID, InstanceType: inst.InstanceType,
			Zone: inst.Zone, CapacityType: capacityType, Price: price, Pods: real, BufferPods: buffered},
		inst: inst,
		apply: func(c *state.Claim) {
			c.Lifecycle, c.InstanceID, c.InstanceType, c.Zone = state.Launched, inst.ID, inst.InstanceType, inst.Zone
			c.CapacityType, c.PricePerHour, c.ProviderID = capacityType, price, inst.ProviderID()
			c.Labels = labels
			c.ImageID, c.SubnetID, c.SecurityGroupIDs = image, subnet, groups
		},
		details: details,
	}
}

// outcomeUnknown reports whether a launch's error leaves open whether an instance started (the claim is
// left pending: see failed).
func outcomeUnknown(err error) bool {
	return err != nil && !errors.Is(err, ErrNoCapacity) && !errors.Is(err, ErrOfferingsRejected) && !instance.Answered(err)
}

// noteFullSubnets names, in a Launch decision's details, the subnets the launch found without a free
// address and left for the zone's next.
func noteFullSubnets(details map[string]string, full []instance.ExhaustedSubnet) {
	if len(full) > 0 {
		details["exhaustedSubnets"] = strings.TrimPrefix(fullSubnets(full), "; ")
	}
}

// podsOf is the pods capacity of the class's instance type (0 when it is not in the catalog): the
// addresses a launch of it is predicted to take in its subnet.
func (rc *readyClass) podsOf(name string) int64 {
	if it := rc.byName[name]; it != nil {
		return it.Capacity.Pods
	}
	return 0
}

// decision is the claim's decision of kind.
func (l claimLaunch) decision(kind, reason, message string, details map[string]string) state.Decision {
	return state.Decision{Subject: "nodeclaim/" + l.name, ID: l.name, Kind: kind, Reason: reason, Message: message, Details: details}
}

// errAdoptedFirst stops the launch's claim update when the claim already records the instance.
var errAdoptedFirst = errors.New("the claim already records the instance")

// maxClaimNameDraws bounds the names create tries. A random suffix of 36^5 values makes a second
// collision in a row all but impossible; a third means something other than chance is at work.
const maxClaimNameDraws = 3

// create writes the pending claim under a fresh name, drawing another name when one is already taken (a
// claim of another run, or a record left behind), so a collision costs a retry, not the launch.
func (l claimLaunch) create(ctx context.Context, labels map[string]string) (state.Claim, error) {
	var taken []string
	for len(taken) < maxClaimNameDraws {
		name := l.newName()
		written, err := l.store.CreateClaim(ctx, l.pendingClaim(name, labels))
		switch {
		case err == nil:
			return written, nil
		case !errors.Is(err, state.ErrAlreadyExists):
			return state.Claim{}, &notRecorded{pods: len(l.target.claim.Pods), err: fmt.Errorf("writing claim %s: %w", name, err)}
		}
		taken = append(taken, name)
	}
	return state.Claim{}, &notRecorded{pods: len(l.target.claim.Pods), err: fmt.Errorf("writing a claim for nodepool %s: every name drawn was taken (%s): %w",
		l.target.claim.NodePool, strings.Join(taken, ", "), state.ErrAlreadyExists)}
}

// pendingClaim is the claim record written before the launch, under name.
func (l claimLaunch) pendingClaim(name string, labels map[string]string) state.Claim {
	cp, nc := l.target.claim, l.target.class.nc
	relaxed := cp.MinValuesRelaxed
	c := state.Claim{Name: name, NodePool: cp.NodePool, NodeClass: nc.Name, Lifecycle: state.Pending, Labels: labels,
		Requests: requestStrings(cp.Requests), InstanceTypes: cp.InstanceTypeOptions, ReservationID: cp.ReservationID,
		Replaces: l.replaces, Batch: l.batch, MinValuesRelaxed: &relaxed,
		PriceOverlayApplied: cp.PriceOverlayApplied, CapacityOverlayApplied: cp.CapacityOverlayApplied}
	l.stamp.stampCreated(&c)
	return c
}

// notRecorded is a launch whose claim record could not be written: nothing was launched, and its pods
// need another run (the run lists it in Report.Skipped, so its trigger is not taken as satisfied).
type notRecorded struct {
	pods int
	err  error
}

func (e *notRecorded) Error() string { return e.err.Error() }
func (e *notRecorded) Unwrap() error { return e.err }

// failed records a launch that returned err: a definite failure deletes the claim, an unknown outcome
// leaves it pending (see run). A launch template EC2 no longer knows is forgotten, so the next run makes it
// again.
func (l claimLaunch) failed(ctx context.Context, plan LaunchPlan, res LaunchResult, err error) error {
	kind := instance.KindOf(err)
	for _, r := range res.Rejected {
		if r.Kind == instance.KindLaunchTemplateNotFound {
			kind = r.Kind
		}
	}
	if inv, ok := l.templates.(templateInvalidator); ok && kind == instance.KindLaunchTemplateNotFound {
		for name := range plan.Images {
			inv.Invalidate(name)
		}
	}
	switch {
	case errors.Is(err, ErrNoCapacity):
		return l.abandon(ctx, NoCapacity, err)
	case errors.Is(err, ErrOfferingsRejected):
		return l.abandon(ctx, "OfferingsRejected", err)
	case instance.Answered(err) && kind != "":
		return l.abandon(ctx, string(kind), err)
	case instance.Answered(err):
		return l.abandon(ctx, "LaunchFailed", err)
	}
	err = fmt.Errorf("launching claim %s (left pending for reconciliation): %w", l.name, err)
	return &LaunchFailure{Claim: l.name, NodePool: l.target.claim.NodePool, Reason: "LaunchOutcomeUnknown", Pending: true,
		Err: errors.Join(err, l.decide(ctx, "LaunchFailed", "LaunchOutcomeUnknown", err.Error(), nil))}
}

// templateInvalidator forgets a launch template, so the next Ensure makes it again;
// *launchtemplate.Provider satisfies it.
type templateInvalidator interface{ Invalidate(name string) }

var _ templateInvalidator = (*launchtemplate.Provider)(nil)

// abandon deletes the claim of a launch that started nothing and records why.
func (l claimLaunch) abandon(ctx context.Context, reason string, cause error) error {
	derr := l.decide(ctx, "LaunchFailed", reason, cause.Error(), nil)
	_, err := l.store.UpdateClaim(ctx, l.name, func(c *state.Claim) error {
		c.Lifecycle = state.Deleted
		return nil
	})
	if err != nil {
		err = fmt.Errorf("deleting claim %s: %w", l.name, err)
	}
	return &LaunchFailure{Claim: l.name, NodePool: l.target.claim.NodePool, Reason: reason, Err: errors.Join(cause, derr, err),
		pods: l.target.claim.Pods}
}

// NoCapacity is the LaunchFailure reason (and LaunchFailed decision reason) of a launch that found no
// capacity in any offering it allows.
const NoCapacity = "InsufficientCapacity"

// LaunchFailure is a claim whose launch failed: Reason is its LaunchFailed decision's reason; Pending says
// the outcome is unknown and the claim was left pending, otherwise it was deleted.
type LaunchFailure struct {
	Claim, NodePool, Reason string
	Pending                 bool
	Err                     error
	// pods are the pods the claim was launched for, told of a failure for lack of capacity
	// (capacityEvents).
	pods []*corev1.Pod
}

func (f *LaunchFailure) Error() string { return f.Err.Error() }
func (f *LaunchFailure) Unwrap() error { return f.Err }

// NeverSucceeds reports whether launching again cannot help until an operator acts: EC2 refused the
// request as unauthorized or invalid.
func (f *LaunchFailure) NeverSucceeds() bool { return instance.ErrorKind(f.Reason).NeverSucceeds() }

// decide records a decision about the claim. A decision that cannot be written undoes nothing; the
// error only goes into the run's report.
func (l claimLaunch) decide(ctx context.Context, kind, reason, message string, details map[string]string) error {
	err := l.store.RecordDecision(ctx, l.decision(kind, reason, message, details))
	if err != nil {
		return fmt.Errorf("recording %s decision for claim %s: %w", kind, l.name, err)
	}
	return nil
}

// launchedOffering finds the capacity type and the override (its price, subnet and template) the instance
// was launched from; found is false when no override matches (the capacity type is then EC2's).
func launchedOffering(plan LaunchPlan, inst instance.Instance) (string, instance.Override, bool) {
	lists := []struct {
		capacityType string
		overrides    []instance.Override
	}{{instance.CapacityTypeReserved, plan.Reserved}, {instance.CapacityTypeSpot, plan.Spot}, {instance.CapacityTypeOnDemand, plan.OnDemand}}
	for _, l := range lists {
		if inst.CapacityType != "" && inst.CapacityType != l.capacityType {
			continue
		}
		for _, o := range l.overrides {
			if o.InstanceType == inst.InstanceType && (inst.Zone == "" || o.Zone == inst.Zone) &&
				(inst.CapacityReservationID == "" || o.ReservationID == inst.CapacityReservationID) {
				return l.capacityType, o, true
			}
		}
	}
	return inst.CapacityType, instance.Override{}, false
}

// reservationType is the type (default, capacity-block) of the plan's reservation id, or "".
func reservationType(plan LaunchPlan, id string) string {
	for _, o := range plan.Reserved {
		if id != "" && o.ReservationID == id {
			return o.ReservationType
		}
	}
	return ""
}

// fleetContext is the CreateFleet context of the claim's launch: the node class's, except for a claim
// whose minValues were relaxed (MIN_VALUES_POLICY BestEffort), which launches without one, as Karpenter's
// does.
func fleetContext(cp scheduling.ClaimPlan, nc *apis.EC2NodeClass) string {
	if cp.MinValuesRelaxed {
		return ""
	}
	return aws.ToString(nc.Spec.Context)
}

package provisioning

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// batchLaunch launches identical planned claims (see groupClaims) with one CreateFleet per attempt.
type batchLaunch struct {
	// claims are the batch's claims, each with its own target claim plan and the same batch id.
	claims   []claimLaunch
	launcher BatchLauncher
}

// run writes every claim record (pending, with the batch id) in one transaction before any call to EC2,
// then launches them together and records each claim's outcome as claimLaunch.run does: launched with
// the instance assigned to it; deleted with a LaunchFailed decision when EC2 answered that nothing more
// could start; left pending when the outcome is unknown (reconciliation pairs the batch's instances with
// them by the batch tag). If the records cannot be written, none is and nothing is launched, so a batch
// is never half-recorded.
func (b batchLaunch) run(ctx context.Context) ([]*LaunchedClaim, []error) {
	labels, pending, err := b.record(ctx)
	if err != nil {
		return nil, []error{err}
	}
	first := b.claims[0]
	cp, nc := first.target.claim, first.target.class.nc
	req := instance.Request{Cluster: first.target.cluster.Name, Claim: first.batch, NodePool: cp.NodePool, NodeClass: nc.Name,
		Tags: nc.Spec.Tags, Context: fleetContext(cp, nc), PriceOverlay: cp.PriceOverlayApplied}
	target := first.target
	target.launches = len(b.claims)
	plan, err := buildLaunchPlan(ctx, first.templates, target, req)
	if err == nil && len(plan.Reserved)+len(plan.Spot)+len(plan.OnDemand) == 0 {
		err = errors.New("no offering of its instance types has a subnet and an AMI")
	}
	if err != nil {
		return nil, b.abandon(ctx, b.claims, "LaunchTemplateFailed", fmt.Errorf("planning launch of batch %s: %w", first.batch, err))
	}

	names := make([]string, len(b.claims))
	index := map[string]int{}
	for i, cl := range b.claims {
		names[i], index[cl.name] = cl.name, i
	}
	out := LaunchBatchPlan(ctx, b.launcher, first.store, plan, first.batch, names)
	instances := make([]instance.Instance, len(out.Assigned))
	for n, a := range out.Assigned {
		instances[n] = a.Instance
	}
	plan.subnets.settle(instances, first.target.class.podsOf, outcomeUnknown(out.Err))
	recs := make([]launchRecord, len(out.Assigned))
	at := make([]int, len(out.Assigned))
	for n, a := range out.Assigned {
		i := index[a.Claim]
		recs[n], at[n] = b.claims[i].launchRecord(plan, labels[i], a.Instance, out.Attempts), i
		noteFullSubnets(recs[n].details, out.ExhaustedSubnets)
	}
	launched, errs := b.launched(ctx, recs, at, pending)
	errs = append(errs, out.TagErrors...)
	for _, name := range out.Rest {
		errs = append(errs, b.claims[index[name]].failed(ctx, plan, LaunchResult{Rejected: out.Rejected}, out.Err))
	}
	return launched, errs
}

// record writes every claim of the batch, pending, in one transaction, drawing new names for those
// already taken (see claimLaunch.create); it sets each claim's name and returns the labels and records
// written. On an error nothing was written (*notRecorded).
func (b batchLaunch) record(ctx context.Context) ([]map[string]string, []state.Claim, error) {
	pods := 0
	labels := make([]map[string]string, len(b.claims))
	for i := range b.claims {
		cp := b.claims[i].target.claim
		l, err := claimLabels(b.claims[i].target.pool, b.claims[i].target.class.nc.Name, cp.Requirements)
		if err != nil {
			return nil, nil, fmt.Errorf("labelling a claim for nodepool %s: %w", cp.NodePool, err)
		}
		labels[i], pods = l, pods+len(cp.Pods)
		b.claims[i].name = b.claims[i].newName()
	}
	var taken []string
	for draw := 1; ; draw++ {
		pending := make([]state.Claim, len(b.claims))
		for i := range b.claims {
			pending[i] = b.claims[i].pendingClaim(b.claims[i].name, labels[i])
		}
		written, err := b.claims[0].store.CreateClaims(ctx, pending)
		if err == nil {
			return labels, written, nil
		}
		var ce *state.ClaimsError
		if !errors.As(err, &ce) || !errors.Is(err, state.ErrAlreadyExists) {
			return nil, nil, &notRecorded{pods: pods, err: fmt.Errorf("writing the %d claims of batch %s: %w", len(b.claims), b.claims[0].batch, err)}
		}
		taken = append(taken, ce.Names...)
		if draw == maxClaimNameDraws {
			return nil, nil, &notRecorded{pods: pods, err: fmt.Errorf("writing the %d claims of batch %s: names drawn were taken (%s): %w",
				len(b.claims), b.claims[0].batch, strings.Join(taken, ", "), state.ErrAlreadyExists)}
		}
		redraw := map[string]bool{}
		for _, n := range ce.Names {
			redraw[n] = true
		}
		for i := range b.claims {
			if redraw[b.claims[i].name] {
				b.claims[i].name = b.claims[i].newName()
			}
		}
	}
}

// launched records the batch's launches: recs[n] is the launch of b.claims[at[n]], whose record as
// written before the launch is pending[at[n]]. Every claim is updated in one transaction and the Launch
// decisions are written together; when the transaction fails (the reconciler adopted an instance first,
// or the write failed) each claim is recorded on its own, as a single launch is.
func (b batchLaunch) launched(ctx context.Context, recs []launchRecord, at []int, pending []state.Claim) ([]*LaunchedClaim, []error) {
	if len(recs) == 0 {
		return nil, nil
	}
	olds := make([]state.Claim, len(recs))
	news := make([]state.Claim, len(recs))
	for n, r := range recs {
		olds[n], news[n] = pending[at[n]], pending[at[n]]
		r.apply(&news[n])
	}
	launched := make([]*LaunchedClaim, len(recs))
	for n, r := range recs {
		launched[n] = r.claim
	}
	if _, err := b.claims[0].store.PutClaims(ctx, olds, news); err != nil {
		var errs []error
		for n, r := range recs {
			if err := b.claims[at[n]].recordLaunch(ctx, r); err != nil {
				errs = append(errs, err)
			}
		}
		return launched, append(errs, b.decide(ctx, recs, at))
	}
	return launched, []error{b.decide(ctx, recs, at)}
}

// decide writes the Launch decisions of recs together.
func (b batchLaunch) decide(ctx context.Context, recs []launchRecord, at []int) error {
	ds := make([]state.Decision, len(recs))
	for n, r := range recs {
		cl := b.claims[at[n]]
		ds[n] = cl.decision("Launch", "Provisioned", cl.target.claim.Why, r.details)
	}
	if err := b.claims[0].store.RecordDecisions(ctx, ds); err != nil {
		return fmt.Errorf("recording the Launch decisions of batch %s: %w", b.claims[0].batch, err)
	}
	return nil
}

// abandon deletes the given claims, which nothing was launched for, each with a decision saying why.
func (b batchLaunch) abandon(ctx context.Context, claims []claimLaunch, reason string, cause error) []error {
	var errs []error
	for _, cl := range claims {
		errs = append(errs, cl.abandon(ctx, reason, cause))
	}
	return errs
}

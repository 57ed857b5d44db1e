package provisioning

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/nodewright/nodewright/shared/instance"
)

// batchLaunch launches identical planned claims (see groupClaims) with one CreateFleet per attempt.
type batchLaunch struct {
	// claims are the batch's claims, each with its own target claim plan and the same batch id.
	claims   []claimLaunch
	launcher BatchLauncher
}

// run writes every claim record (pending, with the batch id) before any call to EC2, then launches them
// together and records each claim's outcome as claimLaunch.run does: launched with the instance
// assigned to it; deleted with a LaunchFailed decision when EC2 answered that nothing more could start;
// left pending when the outcome is unknown (reconciliation pairs the batch's instances with them by the
// batch tag). If a record cannot be written, the records already written are deleted and nothing is
// launched, so a batch is never half-recorded.
func (b batchLaunch) run(ctx context.Context) ([]*LaunchedClaim, []error) {
	labels := make([]map[string]string, len(b.claims))
	for i := range b.claims {
		l, err := b.claims[i].record(ctx)
		if err != nil {
			return nil, append([]error{err}, b.abandon(ctx, b.claims[:i], "LaunchFailed",
				fmt.Errorf("another claim of batch %s could not be written: %w", b.claims[i].batch, err))...)
		}
		labels[i] = l
	}
	first := b.claims[0]
	cp, nc := first.target.claim, first.target.class.nc
	req := instance.Request{Cluster: first.target.cluster.Name, Claim: first.batch, NodePool: cp.NodePool, NodeClass: nc.Name,
		Tags: nc.Spec.Tags, Context: aws.ToString(nc.Spec.Context)}
	plan, err := buildLaunchPlan(ctx, first.templates, first.target, req)
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
	var launched []*LaunchedClaim
	errs := append([]error(nil), out.TagErrors...)
	for _, a := range out.Assigned {
		i := index[a.Claim]
		lc, err := b.claims[i].launched(ctx, plan, labels[i], a.Instance, out.Attempts)
		if lc != nil {
			launched = append(launched, lc)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range out.Rest {
		errs = append(errs, b.claims[index[name]].failed(ctx, plan, LaunchResult{Rejected: out.Rejected}, out.Err))
	}
	return launched, errs
}

// abandon deletes the given claims, which nothing was launched for, each with a decision saying why.
func (b batchLaunch) abandon(ctx context.Context, claims []claimLaunch, reason string, cause error) []error {
	var errs []error
	for _, cl := range claims {
		errs = append(errs, cl.abandon(ctx, reason, cause))
	}
	return errs
}

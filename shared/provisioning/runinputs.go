package provisioning

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/nodewright/nodewright/shared/kube"
	"github.com/nodewright/nodewright/shared/scheduling"
	"github.com/nodewright/nodewright/shared/state"
)

// runInputs is what a run reads before it solves.
type runInputs struct {
	cfg         runConfig
	problems    []string
	snap        *kube.Snapshot
	claims      []state.Claim
	unavailable scheduling.UnavailableOfferings
}

// read reads the configuration, the cluster, the claims and the offerings without capacity at once:
// the API server and DynamoDB answer in parallel, and in a burst the claim list alone takes a second
// through moto. The order of the answers does not matter: a claim counts as in flight only until its
// Node shows in the snapshot with allocatable (matched by provider id, which the claim records at
// launch), so a claim read before its Node joined is not counted twice, and only the run holding the
// lease creates claims.
func (p *Provisioner) read(ctx context.Context) (runInputs, error) {
	var in runInputs
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		in.cfg, in.problems, err = readConfig(gctx, p.deps.Store)
		return err
	})
	g.Go(func() (err error) {
		in.snap, err = p.deps.Cluster.Snapshot(gctx)
		return err
	})
	g.Go(func() (err error) {
		in.claims, err = p.deps.Store.ListClaims(gctx)
		return err
	})
	g.Go(func() (err error) {
		in.unavailable, err = p.unavailable(gctx)
		return err
	})
	return in, g.Wait()
}

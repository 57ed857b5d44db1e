package provisioning

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/instance"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// MaxConcurrentLaunches bounds the batches a run launches at once. Each batch makes a handful of
// CreateFleet, DescribeInstances and CreateTags calls; eight in flight keep a 60 s run busy without
// outrunning EC2's request-rate buckets (the SDK's adaptive retry mode slows the client when EC2
// throttles) or the 2-core Lambda, and a 4,000-node burst is 40 batches, five rounds of eight.
const MaxConcurrentLaunches = 8

// batchIDLen is the random part of a batch id: "batch-" and 16 characters of claimNameAlphabet, so the
// batch id and every attempt token built from it fit CreateFleet's ClientToken and never equal a claim
// name's token.
const batchIDLen = 16

// runLaunches launches the planned claims: identical ones in batches of at most batchSize
// (one alone, or every claim when the launcher cannot batch, goes through claimLaunch), up to
// MaxConcurrentLaunches batches at once. A batch starts only while the deadline is more than
// LaunchMargin away; a batch that does not start is not written at all and its pods stay pending for
// the next run (a written claim would count as in-flight capacity until the launch timeout and hold
// those pods back), and it is listed in rep.Skipped.
func (p *Provisioner) runLaunches(ctx context.Context, claims []scheduling.ClaimPlan, newLaunch func(scheduling.ClaimPlan) claimLaunch,
	rep *Report) {
	batcher, canBatch := p.deps.Launcher.(BatchLauncher)
	size := batchSize
	if !canBatch {
		size = 1
	}
	var mu sync.Mutex            // guards rep, crashed and nominated
	var crashed any              // the first launch goroutine's panic
	var nominated []launchedPlan // told where their pods go once every batch is done
	var wg sync.WaitGroup
	slots := make(chan struct{}, MaxConcurrentLaunches)
	for _, batch := range groupClaims(claims, size) {
		slots <- struct{}{}
		if deadline, ok := ctx.Deadline(); ok && deadline.Sub(p.deps.Now()) < p.cfg.LaunchMargin {
			<-slots
			mu.Lock()
			for _, cp := range batch {
				rep.Skipped = append(rep.Skipped, fmt.Sprintf("nodepool %s: %d pods (deadline in %s)", cp.NodePool,
					len(cp.Pods), deadline.Sub(p.deps.Now()).Round(time.Second)))
			}
			mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					if crashed == nil {
						crashed = r
					}
					mu.Unlock()
				}
			}()
			launched, errs := p.launchBatch(ctx, batch, newLaunch, batcher)
			mu.Lock()
			defer mu.Unlock()
			for _, l := range launched {
				c := *l.claim
				for _, pod := range l.plan.Pods {
					if !scheduling.IsBufferPod(pod) {
						c.PodUIDs = append(c.PodUIDs, pod.UID)
					}
				}
				rep.Claims = append(rep.Claims, c)
			}
			nominated = append(nominated, launched...)
			for _, err := range errs {
				if err == nil {
					continue
				}
				rep.Errors = append(rep.Errors, err.Error())
				if failure := (*LaunchFailure)(nil); errors.As(err, &failure) {
					rep.LaunchFailures = append(rep.LaunchFailures, *failure)
				}
				if nr := (*notRecorded)(nil); errors.As(err, &nr) {
					rep.Skipped = append(rep.Skipped, fmt.Sprintf("%d pods (claims not written: %v)", nr.pods, nr.err))
				}
			}
		}()
	}
	wg.Wait()
	if crashed != nil {
		// A launch that panicked ends the run on the run's own goroutine, where the lease's holder recovers
		// it as the run's error and gives the lease back (state.RunLeased): what was recorded is recovered
		// by the next run, which need not wait for the lease to expire.
		panic(crashed)
	}
	// The Nominated Events are published after the run (afterRunJob).
	rep.nominations = append(rep.nominations, nominations(nominated)...)
}

// batchSize is the most claims one CreateFleet launches: instance.MaxBatchSize, and no more than the
// claims one state transaction records (state.MaxClaimsPerWrite), since a batch's claims are written
// together before the launch. A variable so tests can make it small.
var batchSize = min(instance.MaxBatchSize, state.MaxClaimsPerWrite)

// launchedPlan is a launched claim and the plan it was launched for.
type launchedPlan struct {
	claim *LaunchedClaim
	plan  scheduling.ClaimPlan
}

// launchBatch launches one batch: alone through claimLaunch, or together through batchLaunch.
func (p *Provisioner) launchBatch(ctx context.Context, batch []scheduling.ClaimPlan, newLaunch func(scheduling.ClaimPlan) claimLaunch,
	batcher BatchLauncher) ([]launchedPlan, []error) {
	if len(batch) == 1 || batcher == nil {
		var out []launchedPlan
		var errs []error
		for _, cp := range batch {
			l, err := newLaunch(cp).run(ctx)
			if l != nil {
				out = append(out, launchedPlan{claim: l, plan: cp})
			}
			errs = append(errs, err)
		}
		return out, errs
	}
	id := p.batchID()
	b := batchLaunch{launcher: batcher}
	byName := map[string]scheduling.ClaimPlan{}
	for _, cp := range batch {
		l := newLaunch(cp)
		l.batch = id
		b.claims = append(b.claims, l)
	}
	launched, errs := b.run(ctx)
	for _, cl := range b.claims {
		byName[cl.name] = cl.target.claim
	}
	out := make([]launchedPlan, 0, len(launched))
	for _, l := range launched {
		out = append(out, launchedPlan{claim: l, plan: byName[l.Name]})
	}
	return out, errs
}

// batchID draws a batch id: "batch-" and batchIDLen random characters.
func (p *Provisioner) batchID() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	b := make([]byte, batchIDLen)
	for i := range b {
		b[i] = claimNameAlphabet[p.deps.Rand.IntN(len(claimNameAlphabet))]
	}
	return "batch-" + string(b)
}

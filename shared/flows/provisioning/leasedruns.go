package provisioning

import (
	"context"
	"errors"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// leasedRuns takes the provisioner lease as runID and, holding it, makes a run (the first after waiting
// quiet), then another for as long as after — told each run's report and error — says so: a burst's
// chain of runs takes the lease once, not once a run. Giving it back and taking it again cost two table
// writes between one run and the next, and the pods kube-scheduler marked meanwhile wait for the next
// run's snapshot. One hold ends after half the lease's time to live (the lease runs to the invocation's
// deadline; without one, for Config.LeaseTTL), so a chain in a process without a deadline never outlives
// its lease; Handle then takes it again.
//
// A run that panics has the panic as its error (a *crash.PanicError) and ends the hold. held is false,
// with no run made, when another run holds the lease (err nil) or the lease could not be read (err);
// notReleased is why the lease could not be given back at the end (state.LeasedRun.ReleaseWarning).
func (p *Provisioner) leasedRuns(ctx context.Context, runID string, quiet time.Duration, after func(Report, error) bool) (held bool, notReleased string, err error) {
	if runID == "" {
		return false, "", errors.New("provisioning run: a run id is required to hold the lease")
	}
	ttl := state.LeaseTTLFor(ctx, p.deps.Now(), p.cfg.LeaseTTL)
	holdUntil := p.deps.Now().Add(ttl / 2)
	lr, err := state.RunLeased(ctx, p.deps.Store, LeaseName, runID, "the provisioner lease", ttl, func() error {
		if quiet > 0 {
			timer := time.NewTimer(quiet)
			select {
			case <-ctx.Done():
			case <-timer.C:
			}
			timer.Stop()
		}
		for {
			rep, err := p.leasedRun(ctx, runID)
			var pe *crash.PanicError
			again := after(rep, err)
			if !again || errors.As(err, &pe) || !p.deps.Now().Before(holdUntil) {
				return nil
			}
		}
	})
	if !lr.Held {
		return false, "", err
	}
	return true, lr.ReleaseWarning(), err
}

// leasedRun is one run under the lease leasedRuns holds, its duration measured for timeForAnotherRun
// and a panic returned as its error.
func (p *Provisioner) leasedRun(ctx context.Context, runID string) (rep Report, err error) {
	rep.Lease = true
	start := p.deps.Now()
	defer func() { p.runs.Observe(p.deps.Now().Sub(start)) }()
	defer crash.Capture(&err)
	err = p.run(ctx, runID, &rep)
	return rep, err
}

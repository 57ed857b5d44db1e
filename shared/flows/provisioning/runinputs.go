package provisioning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/crash"
	"github.com/nodewright/nodewright/shared/adapters/kube"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// runInputs is what a run reads before it solves.
type runInputs struct {
	cfg         runConfig
	problems    []string
	snap        *kube.Snapshot
	claims      []state.Claim
	unavailable scheduling.UnavailableOfferings
	// subnetMarks are the subnets recently found without free addresses (subnetchoice.go).
	subnetMarks []state.UnavailableSubnet
	// classFailures are the launch failures recorded per EC2NodeClass (classbackoff.go); badFailures
	// the records that could not be read, each naming its class and field.
	classFailures []state.ClassFailures
	badFailures   []error
	// memory is the memory registered Nodes reported per instance type and AMI (observedmemory.go).
	memory observedMemory
}

// read reads the configuration, the cluster, the claims, the offerings without capacity, the launch
// failures per EC2NodeClass and the observed memory at once (all but the cluster and the claims are taken
// from an earlier run of this process when it read them within SharedInputsMaxAge):
// the API server and DynamoDB answer in parallel, and in a burst the claim list alone takes a second
// through moto. The order of the answers does not matter for the claims in flight: a claim counts as in
// flight only until its Node shows in the snapshot with allocatable (matched by provider id, which the
// claim records at launch), so a claim read before its Node joined is not counted twice, and only the
// run holding the lease creates claims.
//
// It matters for a disruption: the disruption function records its replacement claims and only then
// taints the Nodes they replace (consolidation's execute), and a claim list read before those records
// beside a snapshot read after the taint would make the run launch for the tainted Nodes' pods a second
// time. So when the snapshot shows a Node tainted karpenter.sh/disrupted, the claims are read again once
// the snapshot is complete: every taint it shows was written after its replacement claims, which that
// second (strongly consistent) read sees. Runs without a disrupted Node pay nothing for it.
//
// The reads end ReadReserve before the invocation's deadline: a cold read of a very large cluster from a
// slow API server that ran to the deadline left the run no time to end (Lambda stops the invocation
// there, and a FIFO batch it held stays invisible for the queue's visibility timeout), so it fails in
// time instead, saying so.
func (p *Provisioner) read(ctx context.Context) (runInputs, error) {
	var in runInputs
	parent := ctx
	reserve := time.Duration(0)
	if deadline, ok := ctx.Deadline(); ok {
		reserve = min(ReadReserve, time.Until(deadline)/10)
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-reserve))
		defer cancel()
	}
	in, err := p.readWithin(ctx)
	if err != nil && parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return in, fmt.Errorf("the cluster, the claims and the configuration could not all be read by %s before the run's deadline: %w", reserve.Round(time.Millisecond), err)
	}
	return in, err
}

// ReadReserve is how long before its deadline a run stops reading (a tenth of the time left when that is
// less), to end cleanly: release the lease and answer its trigger.
const ReadReserve = 5 * time.Second

func (p *Provisioner) readWithin(ctx context.Context) (runInputs, error) {
	marks := p.marks.Load()
	readAt := p.deps.Now()
	in, kept := p.shared.get(readAt, marks)
	g, gctx := crash.WithContext(ctx) // a panic on one of these goroutines comes back as the read's error
	g.Go(func() (err error) {
		in.snap, err = p.deps.Cluster.Snapshot(gctx)
		return err
	})
	g.Go(func() (err error) {
		in.claims, err = p.deps.Store.ListClaims(gctx)
		return err
	})
	if !kept {
		g.Go(func() (err error) {
			in.cfg, in.problems, err = readConfig(gctx, p.deps.Store)
			in.cfg.region = p.cfg.Region
			return err
		})
		g.Go(func() (err error) {
			in.unavailable, err = p.unavailable(gctx)
			return err
		})
		g.Go(func() (err error) {
			in.subnetMarks, err = p.deps.Store.UnavailableSubnets(gctx)
			return err
		})
		g.Go(func() (err error) {
			in.classFailures, in.badFailures, err = p.deps.Store.ClassFailures(gctx)
			return err
		})
		g.Go(func() (err error) {
			in.memory, err = readObservedMemory(gctx, p.deps.Store)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return in, err
	}
	if !kept {
		p.shared.put(in, readAt, marks)
	}
	if anyDisruptedTaint(in.snap) {
		claims, err := p.deps.Store.ListClaims(ctx)
		if err != nil {
			return in, fmt.Errorf("reading the claims again after a snapshot with a disrupted Node: %w", err)
		}
		in.claims = claims
	}
	return in, nil
}

// anyDisruptedTaint reports whether a Node of the snapshot, anyone's, carries karpenter.sh/disrupted:NoSchedule.
func anyDisruptedTaint(snap *kube.Snapshot) bool {
	for i := range snap.Nodes {
		if hasDisruptedTaint(&snap.Nodes[i]) {
			return true
		}
	}
	return false
}

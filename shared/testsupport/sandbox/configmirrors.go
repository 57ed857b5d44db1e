package sandbox

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/adapters/footprint"
	"github.com/nodewright/nodewright/shared/adapters/mirror"
	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/flows/provisioning"
	"github.com/nodewright/nodewright/shared/testsupport/awscalls"
)

// configMirrorPass is the part of a disruption run that writes the NodePool and EC2NodeClass mirrors
// (disruptionrun's writeMirrors), for scenarios that do not deploy the whole disruption function: a
// consolidation in the middle of a scale-up would change the capacity it measures. It goes through what
// functions/disruption wires: the StatusWriter of mirror.NewConfigStatusWriter over the disruption
// function's identity (its ClusterRole, in the group the read-only policy lets write), its Event
// recorder, and the configuration and class resolutions of the disruption function's own provisioner's
// PrepareLaunches, with the run's read of the claims and of the Nodes (as that identity lists them).
type configMirrorPass struct {
	s      *Sandbox
	writer *mirror.StatusWriter
	prov   *provisioning.Provisioner
}

// newConfigMirrorPass wires the pass as functions/disruption wires the writer.
func (s *Sandbox) newConfigMirrorPass() (*configMirrorPass, error) {
	writer, err := s.configMirrors()
	if err != nil {
		return nil, err
	}
	prices, err := pricing.NewProvider("us-east-1")
	if err != nil {
		return nil, err
	}
	return &configMirrorPass{s: s, writer: writer, prov: s.newProvisioner(footprint.Disruption, prices, 3, nil)}, nil
}

// run is one pass; what it wrote goes to the timeline, what failed to the sandbox's errors, as a
// disruption run's report errors do.
func (p *configMirrorPass) run(ctx context.Context) {
	ctx = awscalls.WithFunction(ctx, "disruption")
	s := p.s
	fail := func(err error) {
		if ctx.Err() == nil { // a pass cut off by stop did not fail
			s.fail(err)
		}
	}
	claims, err := s.Store.ListClaims(ctx)
	if err != nil {
		fail(fmt.Errorf("disruption (mirrors): reading the claims: %w", err))
		return
	}
	nodes, err := s.FunctionClient(footprint.Disruption).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		fail(fmt.Errorf("disruption (mirrors): reading the Nodes: %w", err))
		return
	}
	launches, err := p.prov.PrepareLaunches(ctx)
	if err != nil {
		fail(fmt.Errorf("disruption (mirrors): reading the configuration: %w", err))
		return
	}
	rep := p.writer.Write(ctx, launches.MirrorConfiguration(ctx, claims, nodes.Items), time.Now())
	if n := rep.Pools.Written + rep.Classes.Written + rep.Pools.Deleted + rep.Classes.Deleted + rep.Events; n > 0 {
		s.Timeline.Printf("disruption", "NodePool and EC2NodeClass mirrors: wrote %d NodePools and %d EC2NodeClasses, deleted %d, published %d Events",
			rep.Pools.Written, rep.Classes.Written, rep.Pools.Deleted+rep.Classes.Deleted, rep.Events)
	}
	for _, e := range rep.Errors {
		fail(fmt.Errorf("disruption (mirrors): %s", e))
	}
}

// start runs the pass every Options.DisruptionEvery (the disruption function's schedule in the sandbox),
// the first one period from now, until the returned stop is called; stop waits for a pass under way.
func (p *configMirrorPass) start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(p.s.opts.DisruptionEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				p.run(ctx)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

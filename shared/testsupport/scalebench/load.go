package scalebench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/ec2"

	"github.com/nodewright/nodewright/shared/adapters/pricing"
	"github.com/nodewright/nodewright/shared/adapters/state"
)

// Loaded is a tier's cluster once it is in the API server and moto.
type Loaded struct {
	Plan *Plan
	// Instances are the nodes' instances, by node index.
	Instances []Instance
	// Took is how long each phase took.
	Took   map[string]time.Duration
	h      hashes
	prices *pricing.Provider
}

// Load writes plan into env: an instance per node in moto, an initialized claim per node in the state
// table, then namespaces, DaemonSets and PDBs through the API server, and Nodes, volumes and pods straight
// into its storage (see storageWriter), or through the API when throughAPI is set. Progress lines go to
// log.
func Load(ctx context.Context, env *Env, plan *Plan, throughAPI bool, log io.Writer) (*Loaded, error) {
	l := &Loaded{Plan: plan, Took: map[string]time.Duration{}}
	var err error
	if l.h, err = configHashes(); err != nil {
		return nil, err
	}
	if l.prices, err = pricing.NewProvider("us-east-1"); err != nil {
		return nil, err
	}
	phase := func(name string, f func() error) error {
		start := time.Now()
		if err := f(); err != nil {
			return err
		}
		l.Took[name] = time.Since(start)
		fmt.Fprintf(log, "  %-10s %6.1fs\n", name, l.Took[name].Seconds())
		return nil
	}
	specs := make([]launchSpec, len(plan.Nodes))
	for i, n := range plan.Nodes {
		specs[i] = launchSpec{Shape: n.Shape, Zone: n.Zone, CapacityType: n.CapacityType, NodePool: n.NodePool, Claim: n.Claim}
	}
	if err := phase("instances", func() (err error) {
		l.Instances, err = runInstances(ctx, ec2.NewFromConfig(env.AWS), specs)
		return err
	}); err != nil {
		return nil, err
	}
	if err := phase("claims", func() error {
		claims := make([]state.Claim, len(plan.Nodes))
		for i := range plan.Nodes {
			claims[i] = plan.claimOf(plan.Nodes[i], l.Instances[i], state.Initialized, l.h, l.prices)
		}
		return createClaims(ctx, env.Store, claims)
	}); err != nil {
		return nil, err
	}
	if err := phase("basics", func() error { return plan.writeBasics(ctx, env.Client) }); err != nil {
		return nil, err
	}
	store := newStorageWriter(env.CP.EtcdURL)
	if err := phase("nodes", func() error {
		return parallel(ctx, len(plan.Nodes), writers, func(ctx context.Context, i int) error {
			n := plan.Node(i, l.Instances[i])
			if throughAPI {
				return writeNode(ctx, env.Client, n)
			}
			return store.putNode(ctx, n)
		})
	}); err != nil {
		return nil, err
	}
	if err := phase("volumes", func() error {
		var vols []PodPlan
		for _, pp := range plan.Pods {
			if !pp.DaemonSet && plan.Workloads[pp.Workload].Volume {
				vols = append(vols, pp)
			}
		}
		return parallel(ctx, len(vols), writers, func(ctx context.Context, i int) error {
			pp := vols[i]
			w := plan.Workloads[pp.Workload]
			pvc, pv := Volume(w.Namespace, "data-"+plan.PodName(pp), plan.Nodes[pp.Node].Zone, fmt.Sprintf("vol-%017x", i+1), plan.Now.Add(-time.Hour))
			if throughAPI {
				return writeVolume(ctx, env.Client, pvc, pv)
			}
			return store.putVolume(ctx, pvc, pv)
		})
	}); err != nil {
		return nil, err
	}
	if err := phase("pods", func() error {
		return parallel(ctx, len(plan.Pods), writers, func(ctx context.Context, i int) error {
			pp := plan.Pods[i]
			inst := l.Instances[pp.Node]
			pod := plan.Pod(pp, inst.PrivateDNS, inst.PrivateIP)
			if throughAPI {
				return writePod(ctx, env.Client, pod)
			}
			return store.putPod(ctx, pod)
		})
	}); err != nil {
		return nil, err
	}
	return l, nil
}

// Total is the whole load's time.
func (l *Loaded) Total() time.Duration {
	var t time.Duration
	for _, d := range l.Took {
		t += d
	}
	return t
}

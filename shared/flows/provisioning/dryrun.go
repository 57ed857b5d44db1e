package provisioning

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Plan solves pods as a run would, with the stored configuration, the catalog, the observed memory and
// the offerings known to be unavailable, over an empty cluster and launching nothing: the claims one run needs for exactly
// these pods. Configuration problems a run would report are an error here.
func (p *Provisioner) Plan(ctx context.Context, pods []*corev1.Pod) (*scheduling.Plan, error) {
	cfg, problems, err := readConfig(ctx, p.deps.Store)
	if err != nil {
		return nil, err
	}
	cfg.region = p.cfg.Region
	cat, err := p.readCatalog(ctx)
	if err != nil {
		return nil, err
	}
	observed, err := readObservedMemory(ctx, p.deps.Store)
	if err != nil {
		return nil, err
	}
	marks, err := p.deps.Store.UnavailableSubnets(ctx)
	if err != nil {
		return nil, err
	}
	_, pools, more, _, _ := prepareClasses(ctx, p.deps.NodeClasses, cat, p.deps.Prices, cfg, p.cfg.KubernetesVersion, observed,
		subnetView{run: newRunSubnets(marks)})
	if problems = append(problems, more...); len(problems) > 0 {
		return nil, fmt.Errorf("planning: %s", strings.Join(problems, "; "))
	}
	unavailable, err := p.unavailable(ctx)
	if err != nil {
		return nil, err
	}
	plan, err := scheduling.Solve(scheduling.Input{Pods: pods, NodePools: pools, Unavailable: unavailable, StrictReservations: true})
	if err != nil {
		return nil, fmt.Errorf("solving: %w", err)
	}
	return plan, nil
}

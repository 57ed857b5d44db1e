package provisioning

import (
	"fmt"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// StaticReplacement plans one claim of static NodePool pool, as a provisioning run plans the claims
// that keep its count (staticClaimPlans: a placeholder solved on a new claim of that pool alone): the
// 1:1 replacement of a drifted node. base supplies the cluster facts (daemon sets, namespaces) and
// policies; the run's unavailable offerings are used. An error says why there is none: the pool is not
// static (or the StaticCapacity gate is off), its EC2NodeClass cannot launch, or no instance type fits.
func (l *Launches) StaticReplacement(pool string, base scheduling.Input) (scheduling.ClaimPlan, error) {
	prepared, ok := l.static[pool]
	if !ok {
		for _, sp := range l.cfg.static {
			if sp.pool.Name == pool {
				return scheduling.ClaimPlan{}, fmt.Errorf("static nodepool %s: its EC2NodeClass cannot launch (see the run's problems)", pool)
			}
		}
		return scheduling.ClaimPlan{}, fmt.Errorf("nodepool %s is not a static NodePool this deployment keeps", pool)
	}
	var sp staticPool
	for _, s := range l.cfg.static {
		if s.pool.Name == pool {
			sp = s
		}
	}
	base.Unavailable = l.Unavailable
	cps, err := staticClaimPlans(staticNeed{pool: sp, n: 1}, prepared, base)
	if err != nil {
		return scheduling.ClaimPlan{}, err
	}
	cps[0].Why = fmt.Sprintf("static nodepool %s: one replacement for a drifted node (1:1)", pool)
	return cps[0], nil
}

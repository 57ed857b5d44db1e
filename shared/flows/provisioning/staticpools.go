package provisioning

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// This file keeps static NodePools (spec.replicas, feature gate StaticCapacity) at their count, as
// Karpenter's static provisioning controller does: every provisioning run (the queue's and the
// one-minute backstop's) counts each static pool's claims and launches the missing ones through the
// run's launch path (claim record first, under the provisioner lease: DESIGN decision 4), without pending
// pods, never past limits.nodes. Static pools are not among the pools the solve places pending pods on
// (NodePoolsFrom leaves them out), so pods land on a static pool's nodes only once they exist.

// staticPool is one static NodePool as a run keeps it.
type staticPool struct {
	// pool is the scheduler's view of the pool, without limits (the count is capped by nodeLimit).
	pool     scheduling.NodePool
	replicas int64
	// nodeLimit is limits.nodes, math.MaxInt64 when the pool has none.
	nodeLimit int64
}

// staticPoolsFrom returns the static NodePools among nps, by name; problems name those the scheduler
// cannot use.
func staticPoolsFrom(nps []*apis.NodePool) (out []staticPool, problems []string) {
	for _, np := range nps {
		if np == nil || !np.IsStatic() {
			continue
		}
		p, err := nodePoolFrom(np)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		p.Limits = nil
		sp := staticPool{pool: p, replicas: max(*np.Spec.Replicas, 0), nodeLimit: math.MaxInt64}
		if q, ok := np.Spec.Limits[corev1.ResourceName("nodes")]; ok {
			sp.nodeLimit = q.Value()
		}
		out = append(out, sp)
	}
	slices.SortFunc(out, func(a, b staticPool) int { return cmp.Compare(a.pool.Name, b.pool.Name) })
	return out, problems
}

// StaticCount is how many claims a static NodePool has: Active ones stand for a node it keeps (pending,
// launched, registered or initialized, not handed to the termination flow, Node not lost); Deleting ones
// are on their way out (draining, terminating, handed over, or their Node deleted).
type StaticCount struct {
	Active, Deleting int64
}

// CountStatic counts pool's claims among live claims (state.Store.ListClaims): its Active count is the
// number of nodes the pool holds, what a provisioning run keeps at spec.replicas.
func CountStatic(claims []state.Claim, pool string) StaticCount {
	var c StaticCount
	for i := range claims {
		cl := &claims[i]
		if cl.NodePool != pool || cl.Lifecycle == state.Deleted {
			continue
		}
		switch {
		case cl.Lifecycle == state.Draining || cl.Lifecycle == state.Terminating || cl.TerminationSentAt != nil || cl.NodeLostAt != nil:
			c.Deleting++
		default:
			c.Active++
		}
	}
	return c
}

// StaticLaunches is how many claims a static pool of replicas, capped at nodeLimit, launches now: the
// active claims it lacks, but no more than leaves active, deleting and new claims together within the
// limit (Karpenter reserves its nodes limit against every claim of the pool, deleting ones included, so
// a replacement waits for a node at the limit to be gone). Never negative.
func StaticLaunches(replicas, nodeLimit int64, c StaticCount) int64 {
	want := replicas - c.Active
	room := nodeLimit - c.Active - c.Deleting
	return max(min(want, room), 0)
}

// staticNeed is a static pool and the claims a run launches for it.
type staticNeed struct {
	pool  staticPool
	count StaticCount
	n     int64
}

// MaxStaticLaunchesPerRun bounds the static-pool claims one run plans (replicas is unbounded in
// Karpenter's API): a larger gap is closed over the following runs, a minute apart at most. 500 is
// five batched CreateFleet calls' worth, well inside a run's launch time.
const MaxStaticLaunchesPerRun = 500

// staticNeeds returns the static pools that lack claims (at most MaxStaticLaunchesPerRun claims in all,
// pools in name order), and a line for the run's report for each pool held back by its nodes limit or
// by the per-run bound.
func staticNeeds(pools []staticPool, claims []state.Claim) (needs []staticNeed, held []string) {
	left := int64(MaxStaticLaunchesPerRun)
	for _, sp := range pools {
		c := CountStatic(claims, sp.pool.Name)
		n := StaticLaunches(sp.replicas, sp.nodeLimit, c)
		if n > left {
			held = append(held, fmt.Sprintf("static nodepool %s: %d more claims wait for the next run (at most %d a run)",
				sp.pool.Name, n-left, MaxStaticLaunchesPerRun))
			n = left
		}
		left -= n
		if n > 0 {
			needs = append(needs, staticNeed{pool: sp, count: c, n: n})
		}
		if missing, allowed := sp.replicas-c.Active, StaticLaunches(sp.replicas, sp.nodeLimit, c); missing > allowed {
			held = append(held, fmt.Sprintf("static nodepool %s: %d of %d replicas, %d deleting; limits.nodes %d holds back %d",
				sp.pool.Name, c.Active, sp.replicas, c.Deleting, sp.nodeLimit, missing-allowed))
		}
	}
	return needs, held
}

// staticPlaceholder stands for a static pool's node in a solve: no requests, tolerating every taint, so
// the solve picks the pool's instance types and offerings as for any claim (daemon overhead included).
// It is never written anywhere.
func staticPlaceholder(pool string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "static-" + pool, Namespace: metav1.NamespaceDefault, UID: types.UID("nodewright-static-" + pool)},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "placeholder"}},
			Tolerations: []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
}

// staticClaimPlans plans need.n identical claims of a static pool (prepared: instance types set): one
// solve of a placeholder on a new claim of that pool alone, copied. base supplies the solve's settings
// and cluster facts (daemon sets, unavailable offerings, policies); its pods, nodes, claims in flight and
// pools are not used. The claims carry no pods. An error says why the pool has no claim to launch.
func staticClaimPlans(need staticNeed, prepared scheduling.NodePool, base scheduling.Input) ([]scheduling.ClaimPlan, error) {
	in := scheduling.Input{Pods: []*corev1.Pod{staticPlaceholder(prepared.Name)}, NodePools: []scheduling.NodePool{prepared},
		DaemonSets: base.DaemonSets, Unavailable: base.Unavailable, Namespaces: base.Namespaces,
		MinValuesPolicy: base.MinValuesPolicy, IgnorePreferences: base.IgnorePreferences}
	plan, err := scheduling.Solve(in)
	if err != nil {
		return nil, fmt.Errorf("static nodepool %s: solving: %w", prepared.Name, err)
	}
	if len(plan.NewClaims) != 1 {
		why := "no instance type of the pool fits its daemon sets"
		if len(plan.Unschedulable) > 0 {
			why = plan.Unschedulable[0].Reason
		}
		return nil, fmt.Errorf("static nodepool %s: no claim can be launched: %s", prepared.Name, why)
	}
	cp := plan.NewClaims[0]
	cp.Pods, cp.PodNames, cp.Requests = nil, nil, scheduling.Resources{}
	cp.Why = fmt.Sprintf("static nodepool %s keeps %d replicas: %d active, %d deleting, launching %d", prepared.Name,
		need.pool.replicas, need.count.Active, need.count.Deleting, need.n)
	out := make([]scheduling.ClaimPlan, need.n)
	for i := range out {
		out[i] = cp
		out[i].Name = fmt.Sprintf("%s-static-%d", cp.Name, i)
	}
	return out, nil
}

// withStaticNeeds is cfg with the pools of needs among those whose classes a run prepares.
func withStaticNeeds(cfg runConfig, needs []staticNeed) runConfig {
	if len(needs) == 0 {
		return cfg
	}
	cfg.pools = slices.Clone(cfg.pools)
	for _, n := range needs {
		cfg.pools = append(cfg.pools, n.pool.pool)
	}
	return cfg
}

// splitStatic separates the prepared static pools of needs from the dynamic ones.
func splitStatic(prepared []scheduling.NodePool, needs []staticNeed) (dynamic []scheduling.NodePool, static map[string]scheduling.NodePool) {
	if len(needs) == 0 {
		return prepared, nil
	}
	isStatic := map[string]bool{}
	for _, n := range needs {
		isStatic[n.pool.pool.Name] = true
	}
	static = map[string]scheduling.NodePool{}
	for _, p := range prepared {
		if isStatic[p.Name] {
			static[p.Name] = p
		} else {
			dynamic = append(dynamic, p)
		}
	}
	return dynamic, static
}

// planStatic plans the claims of every need whose pool could be prepared and whose class is not
// backing off, and returns them with those pools; each pool's outcome is a line of rep.Static.
func planStatic(needs []staticNeed, prepared map[string]scheduling.NodePool, backoffs map[string]state.ClassBackoff,
	base scheduling.Input, rep *Report) ([]scheduling.ClaimPlan, []scheduling.NodePool) {
	var plans []scheduling.ClaimPlan
	var pools []scheduling.NodePool
	for _, need := range needs {
		name := need.pool.pool.Name
		pool, ok := prepared[name]
		if !ok {
			rep.Static = append(rep.Static, fmt.Sprintf("static nodepool %s: %d of %d replicas; its EC2NodeClass cannot launch (see errors)",
				name, need.count.Active, need.pool.replicas))
			continue
		}
		if b, off := backoffs[NodeClassRefName(pool)]; off {
			rep.Static = append(rep.Static, fmt.Sprintf("static nodepool %s: %d of %d replicas; %s", name, need.count.Active, need.pool.replicas, b.String()))
			continue
		}
		cps, err := staticClaimPlans(need, pool, base)
		if err != nil {
			rep.Errors = append(rep.Errors, err.Error())
			rep.Static = append(rep.Static, err.Error())
			continue
		}
		rep.Static = append(rep.Static, cps[0].Why)
		plans = append(plans, cps...)
		pools = append(pools, pool)
	}
	return plans, pools
}

// staticNeedsOf is every static pool as a need of no claims: what PrepareLaunches prepares.
func staticNeedsOf(pools []staticPool) []staticNeed {
	out := make([]staticNeed, 0, len(pools))
	for _, sp := range pools {
		out = append(out, staticNeed{pool: sp})
	}
	return out
}

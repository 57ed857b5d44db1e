package provisioning

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/adapters/nodeclass"
	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/drift"
	"github.com/nodewright/nodewright/shared/flows/driftinput"
)

// Drift decides whether claim c has drifted from its NodePool and EC2NodeClass as this run configured
// and resolved them (no AWS call: the resolutions are those PrepareLaunches made); obs is what the caller
// knows of the claim now (driftinput.Observed).
//
// The AMI a node should run is the one this package's launches would choose now for the claim's instance
// type (readyClass.imageChooser, which buildLaunchPlan uses too), so drift and launches never disagree.
// The instance types a NodePool offers (InstanceTypeNotFound) are the catalog this run launches from,
// indexed once per run and looked up per claim (driftCatalog).
// A claim whose NodePool is not configured any more is Undecided: a removed NodePool is not drift (the
// lifecycle removes its nodes). When the pool's EC2NodeClass is missing, failed to resolve or is not
// ready, the kinds that read its resolution, and InstanceTypeNotFound, are Undecided; the others are
// still decided.
func (l *Launches) Drift(c state.Claim, obs driftinput.Observed) drift.Result {
	t := l.driftTarget(c.NodePool)
	if t.removed != nil {
		return *t.removed
	}
	in := t.For(c, obs)
	if t.choose != nil {
		in.Resolution.ImageFor = t.imageFor(c)
	}
	return in.Detect()
}

// poolTarget is what Drift compares every claim of one NodePool with, built once per run: the
// NodePool's and EC2NodeClass's current hashes and resolution, and the launch path's AMI choice.
type poolTarget struct {
	driftinput.Target
	// removed is the answer for every claim when the NodePool is not configured any more.
	removed *drift.Result
	// choose is the class's AMI choice per instance type (nil when the class is not usable);
	// chooseErr is set when its AMIs do not parse.
	choose    func(instanceType string) (string, bool)
	chooseErr error
}

// driftTarget returns pool's poolTarget, building it on first use.
func (l *Launches) driftTarget(pool string) *poolTarget {
	l.driftMu.Lock()
	defer l.driftMu.Unlock()
	if t, ok := l.targets[pool]; ok {
		return t
	}
	if l.targets == nil {
		l.targets = map[string]*poolTarget{}
	}
	t := l.buildTarget(pool)
	l.targets[pool] = t
	return t
}

func (l *Launches) buildTarget(pool string) *poolTarget {
	np := l.cfg.nodePools[pool]
	if np == nil {
		why := fmt.Sprintf("NodePool %q is not configured: a removed NodePool is not drift (the lifecycle removes its nodes)", pool)
		undecided := make(map[drift.Reason]string, len(drift.Reasons))
		for _, kind := range drift.Reasons {
			undecided[kind] = why
		}
		return &poolTarget{removed: &drift.Result{Verdict: drift.Undecided, Undecided: undecided}}
	}
	className := ""
	if ref := np.Spec.Template.Spec.NodeClassRef; ref != nil {
		className = ref.Name
	}
	rc := l.classes[className]
	var (
		res    nodeclass.Resolution
		resErr error
	)
	switch why := l.classFailures[className]; {
	case rc != nil:
		res = rc.resolved
	case className == "":
		resErr = fmt.Errorf("NodePool %s references no EC2NodeClass", np.Name)
	case why != "":
		resErr = errors.New(why)
	default: // only NodePools the scheduler cannot use reference it, so this run did not resolve it
		resErr = fmt.Errorf("EC2NodeClass %s was not resolved: no NodePool that can launch uses it", className)
	}
	t := &poolTarget{Target: driftinput.TargetOf(np, l.cfg.nodeClasses[className], res, resErr)}
	if rc != nil {
		t.NodePool.InstanceTypes = l.driftCatalog().offered(rc)
		t.choose, t.chooseErr = rc.imageChooser()
		if t.choose == nil {
			t.choose = func(string) (string, bool) { return "", false }
		}
	}
	return t
}

// imageFor is drift's AMI choice for claim c: the AMI the class's launches would choose now for its
// instance type (its instance-type label, else the type recorded at launch). ok is false when that type
// is not in the class's catalog or its AMIs do not parse (a launch could not be planned either).
func (t *poolTarget) imageFor(c state.Claim) func(drift.Claim) (string, bool) {
	return func(dc drift.Claim) (string, bool) {
		if t.chooseErr != nil {
			return "", false
		}
		name := dc.Labels[corev1.LabelInstanceTypeStable]
		if name == "" {
			name = c.InstanceType
		}
		return t.choose(name)
	}
}

// Lifetime is what claim c's expiry is judged from (driftinput.Lifetime) with its NodePool as this run
// configured it: the expireAfter stamped at launch, else the NodePool's current one, else none.
func (l *Launches) Lifetime(c state.Claim) drift.Lifetime {
	return driftinput.Lifetime(c, l.cfg.nodePools[c.NodePool])
}

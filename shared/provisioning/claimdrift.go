package provisioning

import (
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/nodewright/nodewright/shared/drift"
	"github.com/nodewright/nodewright/shared/drift/driftinput"
	"github.com/nodewright/nodewright/shared/nodeclass"
	"github.com/nodewright/nodewright/shared/state"
)

// Drift decides whether claim c has drifted from its NodePool and EC2NodeClass as this run configured
// and resolved them (no AWS call: the resolutions are those PrepareLaunches made); obs is what the caller
// knows of the claim now (driftinput.Observed).
//
// The AMI a node should run is the one this package's launches would choose now for the claim's instance
// type (readyClass.imageChooser, which buildLaunchPlan uses too), so drift and launches never disagree.
// A claim whose NodePool is not configured any more is Undecided: a removed NodePool is not drift (the
// lifecycle removes its nodes). When the pool's EC2NodeClass is missing, failed to resolve or is not
// ready, the kinds that read its resolution are Undecided; the others are still decided.
func (l *Launches) Drift(c state.Claim, obs driftinput.Observed) drift.Result {
	np := l.cfg.nodePools[c.NodePool]
	if np == nil {
		why := fmt.Sprintf("NodePool %q is not configured: a removed NodePool is not drift (the lifecycle removes its nodes)", c.NodePool)
		undecided := make(map[drift.Reason]string, len(drift.Reasons))
		for _, kind := range drift.Reasons {
			undecided[kind] = why
		}
		return drift.Result{Verdict: drift.Undecided, Undecided: undecided}
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
	in := driftinput.For(c, np, l.cfg.nodeClasses[className], res, resErr, obs)
	if rc != nil {
		in.Resolution.ImageFor = launchImage(rc, c)
	}
	return in.Detect()
}

// launchImage is drift's AMI choice for claim c: the AMI rc's launches would choose now for its instance
// type (its instance-type label, else the type recorded at launch). ok is false when that type is not in
// rc's catalog or rc's AMIs do not parse (a launch of rc could not be planned either).
func launchImage(rc *readyClass, c state.Claim) func(drift.Claim) (string, bool) {
	choose, err := rc.imageChooser()
	return func(dc drift.Claim) (string, bool) {
		if err != nil {
			return "", false
		}
		name := dc.Labels[corev1.LabelInstanceTypeStable]
		if name == "" {
			name = c.InstanceType
		}
		return choose(name)
	}
}

// Lifetime is what claim c's expiry is judged from (driftinput.Lifetime) with its NodePool as this run
// configured it: the expireAfter stamped at launch, else the NodePool's current one, else none.
func (l *Launches) Lifetime(c state.Claim) drift.Lifetime {
	return driftinput.Lifetime(c, l.cfg.nodePools[c.NodePool])
}

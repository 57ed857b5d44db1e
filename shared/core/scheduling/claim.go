package scheduling

import (
	"math"

	corev1 "k8s.io/api/core/v1"
)

// claim is a new node the solver is filling. Pods are added first-fit while they fit the claim's target
// instance type; when the solve ends the claim launches the cheapest types its pods fit.
type claim struct {
	pool       *poolState
	index      int
	host       string // the claim's hostname domain for topology
	reqs       Requirements
	candidates []*candidate // compatible with reqs, cheapest first; not filtered by resources
	target     *candidate
	requests   Resources // pods only; daemon overhead is in each candidate's usable resources
	pods       []*corev1.Pod
	classes    []*podClass  // per pod
	steps      []*classStep // per pod: the relaxation step it was placed at
	hostPorts  []HostPort
	sigs       map[string]bool // requirement signatures already merged into reqs
	reserved   Resources       // capacity held against the pool's limits
	// roomiest is the element-wise maximum of the candidates' usable resources: a pod whose addition
	// exceeds it fits no candidate, whatever the requirements.
	roomiest Resources
	// repacked is set when repackClaims re-packed the claim's pods with those of its group.
	repacked bool
	// reservation is the capacity reservation the claim takes one instance of and held the candidate
	// that launches into it; such a claim only accepts pods that keep held's reserved offering open.
	reservation string
	held        *candidate
	// state is reqs and candidates as the pool's claimStates know them, nil when the pool keeps none
	// or the claim's candidates are not theirs (claimstates.go).
	state *claimState
}

// demand is what the solver still has to place, used to judge which instance type packs it cheapest.
type demand struct{ cpu, memory, pods float64 }

// unitCost is what covering the remaining demand with copies of c alone would cost (a fractional
// number of nodes): the quantity that makes one instance type a better packing target than another.
func unitCost(c *candidate, d demand) float64 {
	n := 0.0
	if c.usable.CPU > 0 {
		n = max(n, d.cpu/float64(c.usable.CPU))
	}
	if c.usable.Memory > 0 {
		n = max(n, d.memory/float64(c.usable.Memory))
	}
	if c.usable.Pods > 0 {
		n = max(n, d.pods/float64(c.usable.Pods))
	}
	return c.price * n
}

// pickTarget returns the fitting candidate with the lowest unit cost for the remaining demand; ties go
// to the cheaper, then the earlier (cheaper-ranked) type.
func pickTarget(cands []*candidate, requests Resources, d demand) *candidate {
	var best *candidate
	bestCost := math.Inf(1)
	for _, c := range cands {
		if !requests.Fits(c.usable) {
			continue
		}
		cost := unitCost(c, d)
		if best == nil || cost < bestCost || (cost == bestCost && c.price < best.price) {
			best, bestCost = c, cost
		}
	}
	return best
}

// fitting returns the candidates whose usable resources hold the claim's requests.
func (cl *claim) fitting() []*candidate {
	var out []*candidate
	for _, c := range cl.candidates {
		if cl.requests.Fits(c.usable) {
			out = append(out, c)
		}
	}
	return out
}

// tryAdd adds one pod of class c at step if it fits, returning whether it did. Taints were checked at
// the pool level by the caller.
func (cl *claim) tryAdd(c *podClass, step *classStep, pod *corev1.Pod, d demand, strictMinValues bool) bool {
	if HostPortConflict(cl.hostPorts, c.hostPorts) != nil {
		return false
	}
	total := cl.requests.Add(c.requests)
	if cl.sigs[step.sig] {
		if !total.Fits(cl.target.usable) || (cl.held != nil && !total.Fits(cl.held.usable)) {
			return false
		}
		cl.commit(c, step, pod, total, cl.reqs, cl.candidates, cl.target)
		return true
	}
	var reqs Requirements
	var cands []*candidate
	var state *claimState
	if cl.state != nil {
		if state = cl.pool.states.merge(cl.state, step, cl.pool.unavailable); state.incompatible {
			return false
		}
		reqs, cands = state.reqs, state.candidates
	} else {
		var ok bool
		if reqs, cands, ok = mergeStep(cl.reqs, cl.candidates, step, cl.pool.unavailable); !ok {
			return false
		}
	}
	target := cl.target
	if !containsCandidate(cands, target) {
		target = pickTarget(cands, total, d)
	}
	if target == nil || !total.Fits(target.usable) {
		return false
	}
	if cl.held != nil && (!total.Fits(cl.held.usable) || !containsCandidate(cands, cl.held) ||
		!offersReservation(cl.held.it, cl.reservation, reqs, cl.pool.unavailable)) {
		return false
	}
	if strictMinValues && cl.pool.minValues {
		fit := make([]*candidate, 0, len(cands))
		for _, x := range cands {
			if total.Fits(x.usable) {
				fit = append(fit, x)
			}
		}
		if checkMinValues(fit, reqs) != nil {
			return false
		}
	}
	cl.state = state
	cl.commit(c, step, pod, total, reqs, cands, target)
	return true
}

func (cl *claim) commit(c *podClass, step *classStep, pod *corev1.Pod, total Resources, reqs Requirements, cands []*candidate, target *candidate) {
	if len(cl.pods) == 0 || len(cands) != len(cl.candidates) {
		cl.roomiest = maxResources(cands, func(c *candidate) Resources { return c.usable })
	}
	cl.requests, cl.reqs, cl.candidates, cl.target = total, reqs, cands, target
	cl.sigs[step.sig] = true
	cl.pods = append(cl.pods, pod)
	cl.classes = append(cl.classes, c)
	cl.steps = append(cl.steps, step)
	cl.hostPorts = append(cl.hostPorts, c.hostPorts...)
}

// remove takes the i-th pod off the claim (topology repair); requirements stay as narrowed.
func (cl *claim) remove(i int) {
	cl.requests = cl.requests.Sub(cl.classes[i].requests)
	cl.pods = append(cl.pods[:i], cl.pods[i+1:]...)
	cl.classes = append(cl.classes[:i], cl.classes[i+1:]...)
	cl.steps = append(cl.steps[:i], cl.steps[i+1:]...)
}

func containsCandidate(cands []*candidate, c *candidate) bool {
	if c == nil {
		return false
	}
	for _, x := range cands {
		if x == c {
			return true
		}
	}
	return false
}

// maxResources is the element-wise maximum, from zero, of get over cands: what folding
// Resources.Max over them gives, with one map for the extended resources instead of one per
// candidate (a claim's roomiest type was most of a disruption search's allocations).
func maxResources(cands []*candidate, get func(*candidate) Resources) Resources {
	var out Resources
	for _, c := range cands {
		r := get(c)
		out.CPU, out.Memory = max(out.CPU, r.CPU), max(out.Memory, r.Memory)
		out.EphemeralStorage, out.Pods = max(out.EphemeralStorage, r.EphemeralStorage), max(out.Pods, r.Pods)
		for k, v := range r.Extended {
			if out.Extended == nil {
				out.Extended = map[string]int64{}
			}
			out.Extended[k] = max(out.Extended[k], v)
		}
	}
	return out
}

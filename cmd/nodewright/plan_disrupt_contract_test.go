package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/apis/manifest"
)

// This file is an independent checker of the plan --disrupt JSON contract (issue 13). It reads the
// same input files as the command and replays the output, command by command, holding it to every
// rule of the contract. It shares no code with the engine or the sequencer: only the file readers.

// disruptFiles are the inputs of one dry run.
type disruptFiles struct {
	pods, nodes, nodePools, catalog, daemonSets, pdbs string
}

func (f disruptFiles) args(extra ...string) []string {
	args := []string{"--disrupt", "--pods", f.pods, "--nodes", f.nodes, "--nodepools", f.nodePools, "--instance-types", f.catalog}
	if f.daemonSets != "" {
		args = append(args, "--daemonsets", f.daemonSets)
	}
	if f.pdbs != "" {
		args = append(args, "--pdbs", f.pdbs)
	}
	return append(args, extra...)
}

// contractDoc is the -o json document as the checker reads it: every field of the contract, and
// unknown fields refused.
type contractDoc struct {
	Commands []struct {
		Tick         int      `json:"tick"`
		Reason       string   `json:"reason"`
		Method       string   `json:"method"`
		Action       string   `json:"action"`
		Nodes        []string `json:"nodes"`
		Replacements []struct {
			Name                string   `json:"name"`
			NodePool            string   `json:"nodePool"`
			InstanceType        string   `json:"instanceType"`
			InstanceTypeOptions []string `json:"instanceTypeOptions"`
			Zone                string   `json:"zone"`
			CapacityType        string   `json:"capacityType"`
			PricePerHour        float64  `json:"pricePerHour"`
		} `json:"replacements"`
		Moves []struct {
			Pod string `json:"pod"`
			To  string `json:"to"`
		} `json:"moves"`
		SavingsPerHour float64        `json:"savingsPerHour"`
		Score          *contractScore `json:"score"`
		Why            string         `json:"why"`
	} `json:"commands"`
	Kept []struct {
		Node   string `json:"node"`
		Reason string `json:"reason"`
	} `json:"kept"`
	RejectedMoves []struct {
		Method         string        `json:"method"`
		Action         string        `json:"action"`
		Nodes          []string      `json:"nodes"`
		SavingsPerHour float64       `json:"savingsPerHour"`
		Score          contractScore `json:"score"`
	} `json:"rejectedMoves"`
	CostBeforePerHour *float64 `json:"costBeforePerHour"`
	CostAfterPerHour  *float64 `json:"costAfterPerHour"`
	SolveSeconds      *float64 `json:"solveSeconds"`
}

// contractScore is the Balanced policy's score of a move.
type contractScore struct {
	Score     float64 `json:"score"`
	Threshold float64 `json:"threshold"`
	K         int     `json:"k"`
	Approved  bool    `json:"approved"`
	Pools     []struct {
		NodePool           string  `json:"nodePool"`
		SavingsPerHour     float64 `json:"savingsPerHour"`
		DisruptionCost     float64 `json:"disruptionCost"`
		PoolCostPerHour    float64 `json:"poolCostPerHour"`
		PoolDisruptionCost float64 `json:"poolDisruptionCost"`
		SavingsFraction    float64 `json:"savingsFraction"`
		DisruptionFraction float64 `json:"disruptionFraction"`
		Score              float64 `json:"score"`
		Approved           bool    `json:"approved"`
	} `json:"pools"`
}

// checkScore holds a score to the Balanced rule (issue 29): k 2, threshold 1/2, each pool's score
// (savings / pool cost) / (disruption / pool disruption) and approved iff at least the threshold,
// the move approved iff every pool is, its score the lowest, the pools' credited savings adding up
// to the move's (each pool credited in proportion to its nodes' price when several). balanced are
// the pools the move takes nodes of whose policy is Balanced: exactly those are scored.
func checkScore(where string, s *contractScore, savings float64, balanced map[string]bool, fail func(string, ...any)) {
	if len(balanced) == 0 {
		if s != nil {
			fail("%s: scored although none of its NodePools is Balanced", where)
		}
		return
	}
	if s == nil {
		fail("%s: takes nodes of Balanced NodePools but carries no score", where)
		return
	}
	if s.K != 2 || s.Threshold != 0.5 {
		fail("%s: k %d, threshold %v; want 2 and 0.5", where, s.K, s.Threshold)
	}
	approved, lowest, credited := true, math.Inf(1), 0.0
	scored := map[string]bool{}
	for _, p := range s.Pools {
		scored[p.NodePool] = true
		credited += p.SavingsPerHour
		if math.Abs(p.SavingsFraction-p.SavingsPerHour/p.PoolCostPerHour) > 1e-9 ||
			math.Abs(p.DisruptionFraction-p.DisruptionCost/p.PoolDisruptionCost) > 1e-9 ||
			math.Abs(p.Score-p.SavingsFraction/p.DisruptionFraction) > 1e-9 {
			fail("%s: NodePool %s's score %v is not (%v / %v) / (%v / %v)", where, p.NodePool, p.Score, p.SavingsPerHour,
				p.PoolCostPerHour, p.DisruptionCost, p.PoolDisruptionCost)
		}
		if p.Approved != (p.Score >= s.Threshold) {
			fail("%s: NodePool %s scores %v and is approved=%v", where, p.NodePool, p.Score, p.Approved)
		}
		approved = approved && p.Approved
		lowest = min(lowest, p.Score)
	}
	if len(scored) != len(balanced) {
		fail("%s: scores NodePools %v, the move's Balanced ones are %v", where, scored, balanced)
	}
	for pool := range balanced {
		if !scored[pool] {
			fail("%s: Balanced NodePool %s not scored", where, pool)
		}
	}
	if approved != s.Approved || lowest != s.Score {
		fail("%s: move approved=%v with score %v, its pools say %v and %v", where, s.Approved, s.Score, approved, lowest)
	}
	if credited > savings+priceTolerance {
		fail("%s: the pools are credited $%.6f/h, the move saves $%.6f/h", where, credited, savings)
	}
}

// catalogOffer is one offering of the catalog file, read straight from its JSON.
type catalogEntry struct {
	Name        string `json:"name"`
	Allocatable *struct {
		CPUMillis int64 `json:"cpuMillis"`
		MemoryMiB int64 `json:"memoryMiB"`
	} `json:"allocatable"`
	Offerings []struct {
		Zone         string  `json:"zone"`
		CapacityType string  `json:"capacityType"`
		Price        float64 `json:"price"`
		Available    bool    `json:"available"`
	} `json:"offerings"`
}

// checkedNode is a node as the replay knows it.
type checkedNode struct {
	pool   string
	price  float64
	ours   bool
	alive  bool
	tick   int // the tick that launched it; 0 for the input's nodes
	pods   map[string]bool
	labels map[string]string
}

type checkedPod struct {
	key          string
	cpu, mem     int64 // millicores, bytes
	labels       map[string]string
	namespace    string
	doNotDisrupt bool
}

// contractSummary is what a scenario test asserts beside the rules.
type contractSummary struct {
	commands, ticks int
	kept            map[string]string
	disrupted       []string
}

const priceTolerance = 1e-5

// checkDisruptContract replays out (the -o json document of plan --disrupt over files) and returns
// every violation of the contract it finds, and a summary.
func checkDisruptContract(files disruptFiles, out []byte) ([]string, contractSummary, error) {
	var errs []string
	fail := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	var doc contractDoc
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, contractSummary{}, fmt.Errorf("output is not the contract's JSON: %w", err)
	}
	if doc.Commands == nil || doc.Kept == nil || doc.CostBeforePerHour == nil || doc.CostAfterPerHour == nil || doc.SolveSeconds == nil {
		fail("commands, kept, costBeforePerHour, costAfterPerHour and solveSeconds must all be present (lists not null)")
		return errs, contractSummary{}, nil
	}

	// The inputs, read independently.
	ignore := func(string) {}
	objs, problems := manifest.Check(nil, files.nodePools)
	if len(problems) > 0 {
		return nil, contractSummary{}, fmt.Errorf("nodepools: %v", problems)
	}
	pools := map[string]*apis.NodePool{}
	for _, np := range objs.NodePools {
		pools[np.Name] = np
	}
	data, err := os.ReadFile(files.catalog)
	if err != nil {
		return nil, contractSummary{}, err
	}
	var entries []catalogEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, contractSummary{}, fmt.Errorf("catalog: %w", err)
	}
	catalog := map[string]catalogEntry{}
	for _, e := range entries {
		catalog[e.Name] = e
	}
	// offer is the price of an available offering (what a replacement launches); price is any
	// offering's, for a node already running.
	offer := func(it, zone, ct string) (float64, bool) {
		for _, o := range catalog[it].Offerings {
			if o.Zone == zone && o.CapacityType == ct && o.Available {
				return o.Price, true
			}
		}
		return 0, false
	}
	price := func(it, zone, ct string) (float64, bool) {
		if p, ok := offer(it, zone, ct); ok {
			return p, true
		}
		for _, o := range catalog[it].Offerings {
			if o.Zone == zone && o.CapacityType == ct {
				return o.Price, true
			}
		}
		return 0, false
	}
	var overheadCPU, overheadMem int64
	if files.daemonSets != "" {
		dss, err := readDaemonSets(files.daemonSets, ignore)
		if err != nil {
			return nil, contractSummary{}, err
		}
		for _, ds := range dss {
			for _, c := range ds.Spec.Template.Spec.Containers {
				overheadCPU += c.Resources.Requests.Cpu().MilliValue()
				overheadMem += c.Resources.Requests.Memory().Value()
			}
		}
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if files.pdbs != "" {
		if pdbs, err = readKube[policyv1.PodDisruptionBudget](files.pdbs, "PodDisruptionBudget", ignore); err != nil {
			return nil, contractSummary{}, err
		}
	}
	nodeList, err := readNodes(files.nodes, ignore)
	if err != nil {
		return nil, contractSummary{}, err
	}
	nodes := map[string]*checkedNode{}
	for _, n := range nodeList {
		cn := &checkedNode{alive: true, pods: map[string]bool{}, labels: n.Labels}
		if np := pools[n.Labels["karpenter.sh/nodepool"]]; np != nil && n.Labels["karpenter.sh/initialized"] == "true" {
			cn.ours, cn.pool = true, np.Name
			p, ok := price(n.Labels["node.kubernetes.io/instance-type"], n.Labels["topology.kubernetes.io/zone"], n.Labels["karpenter.sh/capacity-type"])
			if !ok {
				fail("node %s: no catalog offering for its labels", n.Name)
			}
			cn.price = p
		}
		nodes[n.Name] = cn
	}
	podList, err := readPods(files.pods, ignore)
	if err != nil {
		return nil, contractSummary{}, err
	}
	pods := map[string]*checkedPod{}
	for _, p := range podList {
		if p.Spec.NodeName == "" || nodes[p.Spec.NodeName] == nil || !mustMove(p) {
			continue
		}
		cp := &checkedPod{key: p.Namespace + "/" + p.Name, labels: p.Labels, namespace: p.Namespace,
			doNotDisrupt: p.Annotations["karpenter.sh/do-not-disrupt"] == "true"}
		for _, c := range p.Spec.Containers {
			cp.cpu += c.Resources.Requests.Cpu().MilliValue()
			cp.mem += c.Resources.Requests.Memory().Value()
		}
		pods[cp.key] = cp
		nodes[p.Spec.NodeName].pods[cp.key] = true
	}
	pdbBlocks := func(p *checkedPod) bool {
		for _, b := range pdbs {
			if b.Namespace != p.namespace || b.Spec.Selector == nil {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
			if err == nil && sel.Matches(labels.Set(p.labels)) && b.Status.DisruptionsAllowed == 0 {
				return true
			}
		}
		return false
	}

	costBefore := 0.0
	for _, n := range nodes {
		if n.ours {
			costBefore += n.price
		}
	}
	if math.Abs(costBefore-*doc.CostBeforePerHour) > priceTolerance {
		fail("costBeforePerHour %.6f, want the catalog prices of Nodewright's nodes, %.6f", *doc.CostBeforePerHour, costBefore)
	}

	// The replay.
	sum := contractSummary{commands: len(doc.Commands), kept: map[string]string{}}
	tick := 0
	startCount := map[string]int{}
	disruptedInTick := map[string]int{}
	launchedInTick := map[string]bool{}
	replacementNames := map[string]bool{}
	totalSavings := 0.0
	for i, c := range doc.Commands {
		where := fmt.Sprintf("commands[%d] (tick %d)", i, c.Tick)
		if c.Tick != tick && c.Tick != tick+1 {
			fail("%s: ticks must start at 1 and follow each other; previous tick %d", where, tick)
		}
		if c.Tick != tick {
			tick = c.Tick
			clear(startCount)
			clear(disruptedInTick)
			clear(launchedInTick)
			for _, n := range nodes {
				if n.alive && n.ours {
					startCount[n.pool]++
				}
			}
		}
		switch {
		case c.Reason != "Empty" && c.Reason != "Underutilized":
			fail("%s: reason %q", where, c.Reason)
		case (c.Method == "empty") != (c.Reason == "Empty"):
			fail("%s: method %s with reason %s", where, c.Method, c.Reason)
		case !slices.Contains([]string{"empty", "multi", "single"}, c.Method):
			fail("%s: method %q", where, c.Method)
		case c.Action == "delete" && len(c.Replacements) != 0, c.Action == "replace" && len(c.Replacements) == 0,
			c.Action != "delete" && c.Action != "replace":
			fail("%s: action %s with %d replacements", where, c.Action, len(c.Replacements))
		case len(c.Replacements) > max(1, len(c.Nodes)-1):
			// One node is replaced by one; several by fewer than they are.
			fail("%s: action %s with %d replacements", where, c.Action, len(c.Replacements))
		case c.Method == "single" && len(c.Nodes) != 1:
			fail("%s: single-node command on %d nodes", where, len(c.Nodes))
		case c.Why == "":
			fail("%s: no why", where)
		}
		if len(c.Nodes) == 0 {
			fail("%s: no nodes", where)
		}
		// The nodes: live Nodewright nodes, not launched in this tick, each within its pool's budget.
		inCommand := map[string]bool{}
		moving := map[string]bool{}
		savings := 0.0
		for _, name := range c.Nodes {
			n := nodes[name]
			switch {
			case n == nil:
				fail("%s: node %s does not exist", where, name)
				continue
			case !n.alive:
				fail("%s: node %s was already disrupted", where, name)
			case !n.ours:
				fail("%s: node %s is not Nodewright's", where, name)
			case launchedInTick[name]:
				fail("%s: replacement %s disrupted in the tick that launched it", where, name)
			case inCommand[name]:
				fail("%s: node %s listed twice", where, name)
			}
			inCommand[name] = true
			savings += n.price
			np := pools[n.pool]
			if np != nil && np.Spec.Disruption.ConsolidationPolicy == apis.ConsolidationPolicyWhenEmpty && len(n.pods) > 0 {
				fail("%s: node %s of WhenEmpty NodePool %s has %d pods to move", where, name, n.pool, len(n.pods))
			}
			if c.Reason == "Empty" && len(n.pods) > 0 {
				fail("%s: node %s is not empty (%d pods)", where, name, len(n.pods))
			}
			for key := range n.pods {
				moving[key] = true
				p := pods[key]
				if p.doNotDisrupt {
					fail("%s: node %s runs do-not-disrupt pod %s", where, name, key)
				}
				if pdbBlocks(p) {
					fail("%s: node %s runs pod %s whose PDB allows no disruption", where, name, key)
				}
			}
			// Every node of the pool disrupted in the tick counts against the budget of each reason,
			// as nodes already disrupting do (Karpenter's rule), so the check is cumulative.
			disruptedInTick[n.pool]++
			if np != nil {
				if allowed := budgetAllowance(np, c.Reason, startCount[n.pool]); disruptedInTick[n.pool] > allowed {
					fail("%s: %d nodes of NodePool %s disrupted in tick %d, its budget for %s allows %d of %d nodes",
						where, disruptedInTick[n.pool], n.pool, c.Tick, c.Reason, allowed, startCount[n.pool])
				}
			}
		}
		// The replacements: unique names, offered in their zone and capacity type, priced from the catalog.
		ownReplacement := map[string]bool{}
		for _, r := range c.Replacements {
			ownReplacement[r.Name] = true
			if replacementNames[r.Name] || nodes[r.Name] != nil {
				fail("%s: replacement name %s is not unique", where, r.Name)
			}
			replacementNames[r.Name] = true
			if pools[r.NodePool] == nil {
				fail("%s: replacement %s's NodePool %q is not configured", where, r.Name, r.NodePool)
			}
			if !slices.Contains(r.InstanceTypeOptions, r.InstanceType) {
				fail("%s: replacement %s launches %s, not among its options", where, r.Name, r.InstanceType)
			}
			p, ok := offer(r.InstanceType, r.Zone, r.CapacityType)
			if !ok || math.Abs(p-r.PricePerHour) > priceTolerance {
				fail("%s: replacement %s priced %.6f, the catalog offering %s/%s/%s is %.6f (found %v)", where, r.Name, r.PricePerHour, r.InstanceType, r.Zone, r.CapacityType, p, ok)
			}
			savings -= r.PricePerHour
			var cpu, mem int64
			for _, m := range c.Moves {
				if m.To == r.Name && pods[m.Pod] != nil {
					cpu += pods[m.Pod].cpu
					mem += pods[m.Pod].mem
				}
			}
			for _, opt := range r.InstanceTypeOptions {
				e, known := catalog[opt]
				if _, ok := offer(opt, r.Zone, r.CapacityType); !known || !ok {
					fail("%s: replacement %s option %s is not offered in %s %s", where, r.Name, opt, r.Zone, r.CapacityType)
					continue
				}
				if e.Allocatable == nil {
					fail("%s: the checker needs allocatable for %s in the catalog", where, opt)
					continue
				}
				if cpu+overheadCPU > e.Allocatable.CPUMillis || mem+overheadMem > e.Allocatable.MemoryMiB<<20 {
					fail("%s: replacement %s option %s (%dm, %dMiB) cannot hold the %dm and %d bytes moved to it plus daemon overhead",
						where, r.Name, opt, e.Allocatable.CPUMillis, e.Allocatable.MemoryMiB, cpu, mem)
				}
			}
			nodes[r.Name] = &checkedNode{pool: r.NodePool, price: r.PricePerHour, ours: true, alive: true, tick: c.Tick, pods: map[string]bool{}}
			launchedInTick[r.Name] = true
		}
		// The moves: every pod of the disrupted nodes exactly once, to a live node outside the command
		// or to one of the command's own replacements.
		moved := map[string]bool{}
		for _, m := range c.Moves {
			if !moving[m.Pod] {
				fail("%s: move of pod %s, which is not on the command's nodes", where, m.Pod)
				continue
			}
			if moved[m.Pod] {
				fail("%s: pod %s moved twice", where, m.Pod)
			}
			moved[m.Pod] = true
			dest := nodes[m.To]
			switch {
			case dest == nil:
				fail("%s: pod %s moves to unknown node %s", where, m.Pod, m.To)
				continue
			case ownReplacement[m.To]:
			case inCommand[m.To]:
				fail("%s: pod %s moves to %s, which the command disrupts", where, m.Pod, m.To)
			case !dest.alive:
				fail("%s: pod %s moves to %s, which was disrupted", where, m.Pod, m.To)
			case launchedInTick[m.To]:
				fail("%s: pod %s moves to %s, a replacement of another command of the tick", where, m.Pod, m.To)
			}
			dest.pods[m.Pod] = true
		}
		for key := range moving {
			if !moved[key] {
				fail("%s: pod %s of a disrupted node has no move", where, key)
			}
		}
		if math.Abs(savings-c.SavingsPerHour) > priceTolerance {
			fail("%s: savingsPerHour %.6f, but the nodes cost %.6f more than the replacements", where, c.SavingsPerHour, savings)
		}
		if c.Reason == "Underutilized" && c.SavingsPerHour <= 0 || c.SavingsPerHour < 0 {
			fail("%s: saves %.6f", where, c.SavingsPerHour)
		}
		balanced := map[string]bool{}
		for name := range inCommand {
			if n := nodes[name]; n != nil && pools[n.pool] != nil && pools[n.pool].Spec.Disruption.ConsolidationPolicy == apis.ConsolidationPolicyBalanced && c.Reason == "Underutilized" {
				balanced[n.pool] = true
			}
		}
		checkScore(where, c.Score, c.SavingsPerHour, balanced, fail)
		if c.Score != nil && !c.Score.Approved {
			fail("%s: a command the Balanced policy rejects was taken", where)
		}
		totalSavings += c.SavingsPerHour
		for name := range inCommand {
			if n := nodes[name]; n != nil {
				n.alive = false
				n.pods = map[string]bool{}
				sum.disrupted = append(sum.disrupted, name)
			}
		}
	}
	sum.ticks = tick

	// The end: every live Nodewright node kept with a reason, and the costs add up.
	costAfter := 0.0
	for name, n := range nodes {
		if n.alive && n.ours {
			costAfter += n.price
			sum.kept[name] = ""
		}
	}
	seen := map[string]bool{}
	for _, k := range doc.Kept {
		if _, ok := sum.kept[k.Node]; !ok || seen[k.Node] {
			fail("kept lists %s, which is not a remaining Nodewright node (or is listed twice)", k.Node)
			continue
		}
		seen[k.Node] = true
		if k.Reason == "" {
			fail("kept node %s has no reason", k.Node)
		}
		sum.kept[k.Node] = k.Reason
	}
	for name := range sum.kept {
		if !seen[name] {
			fail("remaining Nodewright node %s is not in kept", name)
		}
	}
	if math.Abs(costAfter-*doc.CostAfterPerHour) > priceTolerance*float64(1+len(nodes)) {
		fail("costAfterPerHour %.6f, the remaining Nodewright nodes cost %.6f", *doc.CostAfterPerHour, costAfter)
	}
	if math.Abs(*doc.CostBeforePerHour-*doc.CostAfterPerHour-totalSavings) > priceTolerance*float64(1+len(doc.Commands)) {
		fail("cost before - after = %.6f, but the commands save %.6f", *doc.CostBeforePerHour-*doc.CostAfterPerHour, totalSavings)
	}
	if *doc.SolveSeconds < 0 {
		fail("solveSeconds %f", *doc.SolveSeconds)
	}
	// The moves the Balanced policy rejected: nodes still there at the end, of Balanced pools,
	// scored below the threshold.
	if doc.RejectedMoves == nil {
		fail("rejectedMoves must be present (a list, not null)")
	}
	for i, m := range doc.RejectedMoves {
		where := fmt.Sprintf("rejectedMoves[%d]", i)
		balanced := map[string]bool{}
		for _, name := range m.Nodes {
			n := nodes[name]
			if n == nil || !n.alive || !n.ours {
				fail("%s: node %s is not a remaining Nodewright node", where, name)
				continue
			}
			if np := pools[n.pool]; np != nil && np.Spec.Disruption.ConsolidationPolicy == apis.ConsolidationPolicyBalanced {
				balanced[n.pool] = true
			}
		}
		checkScore(where, &m.Score, m.SavingsPerHour, balanced, fail)
		if m.Score.Approved {
			fail("%s: an approved move listed as rejected", where)
		}
	}
	return errs, sum, nil
}

// mustMove reports whether a pod has to move when its node goes: not finished, not a DaemonSet pod,
// not a static pod.
func mustMove(p *corev1.Pod) bool {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || p.DeletionTimestamp != nil {
		return false
	}
	if _, mirror := p.Annotations[corev1.MirrorPodAnnotationKey]; mirror {
		return false
	}
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" || o.Kind == "Node" {
			return false
		}
	}
	return true
}

// budgetAllowance is how many of total nodes the NodePool's budgets let go for reason with every
// schedule active: the smallest budget covering the reason, percentages rounded up; 10% when the
// pool has no budgets.
func budgetAllowance(np *apis.NodePool, reason string, total int) int {
	budgets := np.Spec.Disruption.Budgets
	if budgets == nil {
		budgets = []apis.Budget{{Nodes: "10%"}}
	}
	allowed := math.MaxInt
	for _, b := range budgets {
		if len(b.Reasons) > 0 && !slices.ContainsFunc(b.Reasons, func(r apis.DisruptionReason) bool { return string(r) == reason }) {
			continue
		}
		nodes := b.Nodes
		if nodes == "" {
			nodes = "10%"
		}
		var n int
		if pct, ok := strings.CutSuffix(nodes, "%"); ok {
			p, _ := strconv.Atoi(pct)
			n = int(math.Ceil(float64(p) * float64(total) / 100))
		} else {
			n, _ = strconv.Atoi(nodes)
		}
		allowed = min(allowed, n)
	}
	return allowed
}

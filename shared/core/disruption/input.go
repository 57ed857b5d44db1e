package disruption

import (
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	storagev1 "k8s.io/api/storage/v1"

	"github.com/nodewright/nodewright/shared/core/scheduling"
)

// Reason is why nodes are disrupted; budgets can be limited to reasons.
type Reason string

const (
	ReasonEmpty         Reason = "Empty"
	ReasonUnderutilized Reason = "Underutilized"
	ReasonDrifted       Reason = "Drifted"
	// ReasonExpired removes a node whose claim reached its NodePool's expireAfter; ReasonManual one an
	// operator asked to disrupt (`nodewright disrupt`). Both are forceful, as in Karpenter: budgets,
	// do-not-disrupt and PDBs do not hold back the start (the drain is bounded by the claim's
	// terminationGracePeriod), but replacement capacity is launched first when the pods need it.
	ReasonExpired Reason = "Expired"
	ReasonManual  Reason = "Manual"
	// ReasonUnhealthy removes a node node repair asked to replace (Node.Unhealthy): forceful as the two
	// above, and first of them.
	ReasonUnhealthy Reason = "Unhealthy"
)

// Policy is a NodePool's consolidation policy.
type Policy string

const (
	// WhenEmpty removes only empty nodes.
	WhenEmpty Policy = "WhenEmpty"
	// WhenEmptyOrUnderutilized also deletes or replaces underused nodes (Karpenter's default).
	WhenEmptyOrUnderutilized Policy = "WhenEmptyOrUnderutilized"
	// Balanced deletes or replaces underused nodes too, but only through moves whose share of the
	// pool's cost saved is worth their share of the pool's disruption (balanced.go).
	Balanced Policy = "Balanced"
)

// Well-known keys the engine reads.
const (
	// AnnotationDoNotDisrupt on a node ("true") or pod ("true" or a duration since the pod started,
	// see DoNotDisrupt) blocks voluntary disruption.
	AnnotationDoNotDisrupt = "karpenter.sh/do-not-disrupt"
	// AnnotationPodDeletionCost is the ReplicaSet scale-down cost that also weighs evictions.
	AnnotationPodDeletionCost = "controller.kubernetes.io/pod-deletion-cost"
	// AnnotationMirrorPod marks a static pod mirrored by the kubelet.
	AnnotationMirrorPod = "kubernetes.io/config.mirror"
)

// MinSpotToSpotTypes is how many cheaper spot instance types a single-node spot-to-spot replacement
// needs, and how many of the cheapest it launches with (Karpenter's
// MinInstanceTypesForSpotToSpotConsolidation).
const MinSpotToSpotTypes = 15

// Input is one snapshot of the cluster as the engine sees it. Decide does not modify it, and the
// order of its slices does not matter.
type Input struct {
	// Now is the time of the snapshot; budgets' schedules and consolidateAfter are evaluated at it.
	Now time.Time
	// Incomplete, when not empty, says what the caller could not read (nodes, pods, catalog,
	// state...). Decide then decides nothing: Nodewright never scales down on partial data.
	Incomplete string

	Nodes []Node
	// InFlight are claims launched whose nodes have not registered; they count as capacity but a
	// pod moved there makes a consolidation invalid, as does a pod moved to an uninitialized node.
	InFlight []scheduling.InFlightClaim
	// PendingPods are the provisionable pods; they are simulated with the moved pods, so capacity
	// they need is not removed.
	PendingPods []*corev1.Pod
	NodePools   []NodePool
	PDBs        []*policyv1.PodDisruptionBudget

	// What the scheduler needs to simulate; see scheduling.Input.
	InstanceTypes          []*scheduling.InstanceType
	DaemonSets             []*appsv1.DaemonSet
	Unavailable            scheduling.UnavailableOfferings
	Namespaces             []*corev1.Namespace
	PersistentVolumeClaims []*corev1.PersistentVolumeClaim
	PersistentVolumes      []*corev1.PersistentVolume
	StorageClasses         []*storagev1.StorageClass
	// CSINodes limit the CSI volumes each node attaches (scheduling.Input.CSINodes): a pod is not
	// moved onto a node whose limit its volumes would exceed.
	CSINodes        []*storagev1.CSINode
	MinValuesPolicy scheduling.MinValuesPolicy
	// IgnorePreferences drops the pods' preferences in every simulation (Karpenter's
	// PREFERENCE_POLICY=Ignore), as provisioning does.
	IgnorePreferences bool

	Options Options
}

// Options tune the search.
type Options struct {
	// SpotToSpotConsolidation allows replacing spot nodes with cheaper spot nodes (Karpenter's
	// feature gate of the same name, off by default).
	SpotToSpotConsolidation bool
	// MaxSimulations caps the scheduling simulations of one Decide or Validate; 0 means no cap.
	MaxSimulations int
	// TimeLeft, when set, is asked before each simulation; when it answers false the search stops
	// and the best command found so far (if any) is returned. The engine never reads a clock.
	TimeLeft func() bool
	// fullSimulation turns off compactNodes (tests compare both).
	fullSimulation bool
	// failedSingle are candidates whose single-node simulation already failed earlier in the same
	// Sequence tick, with the reason; single-node does not simulate them again when that cannot
	// change the answer (see engine.memoSafe). Set by Sequence only.
	failedSingle map[string]string
	// pods memoizes per-pod requests and validity (podcache.go); Decide and Validate make one
	// when it is nil, Sequence shares one across its runs.
	pods *podCache
	// prepared is the previous Decide's scheduler preparation of the same cluster in the same
	// Sequence (the same pools, catalog and DaemonSets; only nodes changed): the simulations'
	// destinations are prepared from it, reading again only the nodes that changed
	// (scheduling.PrepareFrom). Set by Sequence only.
	prepared *scheduling.Prepared
	// multiFailed says that multi-node found nothing earlier in the same Sequence tick; it then
	// does not try the whole list first (newPrefixSearch). Set by Sequence only.
	multiFailed bool
	// pdbs are in.PDBs read once for a whole Sequence, which never changes them; Decide reads
	// them itself when nil.
	pdbs *pdbs
	// searchesInTurn makes multi-node run its searches one after the other instead of together
	// (runSearches), for tests that compare the two.
	searchesInTurn bool
	// width is how many simulations the engine solves together (engine.width); 0 means
	// GOMAXPROCS. For tests.
	width int
}

// Node is one node of the cluster with what the engine needs to know about it.
type Node struct {
	Node *corev1.Node
	// Pods bound to the node.
	Pods []*corev1.Pod
	// NodePool manages the node; "" for nodes Nodewright does not manage.
	NodePool string
	// Claim is the node's NodeClaim name.
	Claim string
	// Initialized is Karpenter's Initialized condition (registered, ready, startup taints gone).
	Initialized bool
	// InstanceType, Zone and CapacityType identify the node's offering and Price its hourly price.
	InstanceType string
	Zone         string
	CapacityType string
	Price        float64
	// InitializedAt is when the claim was initialized (zero: unknown; LaunchedAt, when the claim
	// launched, stands in for it). LastPodEvent is when a pod was last bound to or removed from the
	// node (zero: none since). consolidateAfter counts from the later of the two (settledSince).
	InitializedAt time.Time
	LaunchedAt    time.Time
	LastPodEvent  time.Time
	// ReplacementLaunchedAt is set when the node was launched to replace consolidated nodes.
	ReplacementLaunchedAt time.Time
	// Drifted is the drift kind of the node's claim (Karpenter's Drifted condition reason, "" when the
	// claim has not drifted) and DriftWhy what drifted, for the command's explanation.
	Drifted  string
	DriftWhy string
	// DriftedSince is when the claim's Drifted condition was set (Karpenter's lastTransitionTime of the
	// condition): drift rolls the nodes that drifted first first. Zero counts as the oldest.
	DriftedSince time.Time
	// TerminationGracePeriod is the claim's terminationGracePeriod (zero: none). With one, drift takes
	// the node even when do-not-disrupt pods or PodDisruptionBudgets would hold it (Karpenter's eventual
	// disruption): the drain deletes what still blocks it once the period is over.
	TerminationGracePeriod time.Duration
	// ExpiresAt is when the claim expires (zero: never, or unknown); the node is expired from then on.
	ExpiresAt time.Time
	// Requested is set when an operator asked for the node's disruption; RequestReason is their text.
	Requested     bool
	RequestReason string
	// Unhealthy says what node repair found wrong with the node ("Ready=False for 31m0s..."); set, node
	// repair asked for its replacement (reason Unhealthy) and no pod of another node moves onto it.
	Unhealthy string
	// Disrupting is set when the node is already on its way out: tainted karpenter.sh/disrupted,
	// draining or deleting. Such nodes count against budgets and are not destinations.
	Disrupting bool
	// Allocatable and Capacity backfill the Node's status while it is zero.
	Allocatable, Capacity scheduling.Resources
	// closed marks a replacement Sequence launched in the current tick: it holds the pods its own
	// command moved there and takes no other pod (see engine.closeNode).
	closed bool
}

// Name is the Node's name.
func (n *Node) Name() string { return n.Node.Name }

// NodePool is a NodePool's scheduling view and its disruption settings.
type NodePool struct {
	Scheduling scheduling.NodePool
	// Policy defaults to WhenEmptyOrUnderutilized when empty.
	Policy Policy
	// ConsolidateAfter is how long a node must have had no pod event before consolidation considers
	// it; nil means Never (no consolidation at all).
	ConsolidateAfter *time.Duration
	// Budgets limit how many nodes may be disrupted at once. nil means the default, one budget of
	// 10%; an empty non-nil slice means no limit.
	Budgets []Budget
}

// Name is the NodePool's name.
func (p *NodePool) Name() string { return p.Scheduling.Name }

// Budget is one disruption budget of a NodePool.
type Budget struct {
	// Reasons the budget applies to; empty means all.
	Reasons []Reason
	// Nodes is a count ("5") or a percentage of the pool's nodes ("10%").
	Nodes string
	// Schedule (cron, evaluated in UTC) and Duration make the budget active only for Duration after
	// each hit of the schedule; with no Schedule the budget is always active.
	Schedule string
	Duration time.Duration
}

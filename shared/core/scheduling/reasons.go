package scheduling

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Constraint names the kind of rule that kept a pod off a node or NodePool.
type Constraint string

// The constraints a rejection can cite.
const (
	ConstraintValidation  Constraint = "Validation"
	ConstraintUnsupported Constraint = "Unsupported"
	ConstraintTaint       Constraint = "Taint"
	ConstraintRequirement Constraint = "Requirement"
	ConstraintResources   Constraint = "Resources"
	ConstraintOffering    Constraint = "Offering"
	ConstraintReservation Constraint = "Reservation"
	ConstraintLimits      Constraint = "Limits"
	ConstraintMinValues   Constraint = "MinValues"
	ConstraintHostPort    Constraint = "HostPort"
	ConstraintTopology    Constraint = "Topology"
	ConstraintVolume      Constraint = "Volume"
	ConstraintVolumeLimit Constraint = "VolumeLimit"
	ConstraintNoNodePool  Constraint = "NoNodePool"
	// ConstraintConsolidateAfter: the node is still inside its NodePool's consolidateAfter and takes
	// no pod of the nodes a consolidation removes (SolveJob.Settling).
	ConstraintConsolidateAfter Constraint = "ConsolidateAfter"
)

// Rejection says why one NodePool (or the existing nodes, when NodePool is empty) cannot take a pod.
type Rejection struct {
	NodePool   string     `json:"nodePool,omitempty"`
	Constraint Constraint `json:"constraint"`
	Detail     string     `json:"detail"`
}

func (r Rejection) String() string {
	if r.NodePool == "" {
		return r.Detail
	}
	return fmt.Sprintf("nodepool %s: %s", r.NodePool, r.Detail)
}

// PodFailure explains why a pod could not be placed.
type PodFailure struct {
	Pod *corev1.Pod `json:"-"`
	// PodName is namespace/name.
	PodName string `json:"pod"`
	// Reason is a one-line summary of Rejections.
	Reason     string      `json:"reason"`
	Rejections []Rejection `json:"rejections,omitempty"`
	// Relaxed lists the preferences given up before failing, if any.
	Relaxed string `json:"relaxed,omitempty"`
}

func newPodFailure(pod *corev1.Pod, relaxed string, rejections []Rejection) PodFailure {
	parts := make([]string, len(rejections))
	for i, r := range rejections {
		parts[i] = r.String()
	}
	reason := strings.Join(parts, "; ")
	if relaxed != "" {
		reason += " (after relaxing: " + relaxed + ")"
	}
	return PodFailure{Pod: pod, PodName: podName(pod), Reason: reason, Rejections: rejections, Relaxed: relaxed}
}

func podName(pod *corev1.Pod) string { return pod.Namespace + "/" + pod.Name }

// nodeRejections counts why existing nodes refused a pod, to summarise them in one rejection.
type nodeRejections struct {
	total  int
	counts map[Constraint]int
	first  map[Constraint]string
}

func (n *nodeRejections) add(c Constraint, detail string) {
	if n.counts == nil {
		n.counts, n.first = map[Constraint]int{}, map[Constraint]string{}
	}
	n.total++
	if n.counts[c] == 0 {
		n.first[c] = detail
	}
	n.counts[c]++
}

func (n *nodeRejections) rejection() (Rejection, bool) {
	if n.total == 0 {
		return Rejection{}, false
	}
	var parts []string
	dominant, most := ConstraintResources, 0
	for _, c := range []Constraint{ConstraintTaint, ConstraintRequirement, ConstraintHostPort, ConstraintVolumeLimit, ConstraintConsolidateAfter, ConstraintTopology, ConstraintResources} {
		if k := n.counts[c]; k > 0 {
			parts = append(parts, fmt.Sprintf("%d %s (e.g. %s)", k, strings.ToLower(string(c)), n.first[c]))
			if k > most {
				dominant, most = c, k
			}
		}
	}
	return Rejection{Constraint: dominant, Detail: fmt.Sprintf("%d existing node(s) rejected it: %s", n.total, strings.Join(parts, ", "))}, true
}

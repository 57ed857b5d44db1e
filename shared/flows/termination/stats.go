package termination

import "time"

// stepStats is what one delivery did that the metrics count.
type stepStats struct {
	// evictions counts eviction requests by the API server's answer (HTTP status code, or "error").
	evictions map[string]int
	// podsDrained counts pods this delivery evicted or deleted.
	podsDrained int
	// drained: this delivery found the Node drained for the first time.
	drained bool
	// terminated: this delivery marked the claim deleted; took is how long since the request was made.
	terminated bool
	took       time.Duration
	// gone is the claim that was terminated (zone, capacity type, whether it had a Node, its lifetime).
	gone Termination
}

func (a *stepStats) add(b stepStats) {
	for code, n := range b.evictions {
		if a.evictions == nil {
			a.evictions = map[string]int{}
		}
		a.evictions[code] += n
	}
	a.podsDrained += b.podsDrained
	a.drained = a.drained || b.drained
	if b.terminated {
		a.terminated, a.took, a.gone = true, b.took, b.gone
	}
}

// Termination is one claim the batch finished terminating.
type Termination struct {
	NodePool, Zone, CapacityType string
	// Took is from the first termination request to the claim's deletion.
	Took time.Duration
	// Node says the claim had a Node; Lifetime is from the Node's registration to its deletion.
	Node     bool
	Lifetime time.Duration
}

// BatchStats is what one batch did, for the function's metrics.
type BatchStats struct {
	// Drained counts Nodes found drained for the first time, by NodePool.
	Drained map[string]int
	// Terminated are the claims whose instance was terminated and Node deleted.
	Terminated []Termination
	// PodsDrained counts pods evicted or deleted, by the termination's reason.
	PodsDrained map[string]int
	// Evictions counts eviction requests by answer: "200", "429", "404", "500" or "error".
	Evictions map[string]int
	// Redriven counts requests sent back to the queue to look again later.
	Redriven int
	// MirrorsWritten counts the NodeClaim mirrors written after the requests' steps; MirrorsLeft those
	// left to the lifecycle's next sweep (the follower's bounds).
	MirrorsWritten, MirrorsLeft int
}

func newBatchStats() BatchStats {
	return BatchStats{Drained: map[string]int{}, PodsDrained: map[string]int{}, Evictions: map[string]int{}}
}

// count adds one delivery's stats.
func (b *BatchStats) count(pool, reason string, s stepStats) {
	if s.drained {
		b.Drained[pool]++
	}
	if s.terminated {
		t := s.gone
		t.NodePool, t.Took = pool, s.took
		b.Terminated = append(b.Terminated, t)
	}
	if s.podsDrained > 0 {
		b.PodsDrained[reason] += s.podsDrained
	}
	for code, n := range s.evictions {
		b.Evictions[code] += n
	}
}

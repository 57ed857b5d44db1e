package provisioning

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
)

// SharedInputsMaxAge is how long a run plans with the inputs an earlier run of this process read that
// do not say where capacity is: the configuration, the offerings and subnets recently found without
// capacity, the launch failures per EC2NodeClass and the observed memory. A burst's chained runs follow
// one another about once a second, and each read those five from DynamoDB again beside the cluster and
// the claims, though they change only when an operator applies a NodePool or a launch fails. Only the
// cluster snapshot and the claims (what is running and in flight) are read fresh by every run.
//
// What this process writes itself is never missed: a run that marked an offering or subnet unavailable
// (a launch that ran out of capacity or addresses) makes the next run read everything again. What others
// write — a NodePool applied, a spot interruption marking an offering, a liveness check recording a
// class's failure — reaches a run at most this much later, as it would had it arrived during the run.
const SharedInputsMaxAge = 2 * time.Second

// sharedInputs keeps the last complete read's shared inputs (runInputs without the snapshot and the
// claims) for SharedInputsMaxAge.
type sharedInputs struct {
	mu    sync.Mutex
	in    runInputs // snap and claims nil
	at    time.Time
	marks uint64 // markCounter's count when in was read
	ok    bool
}

// get returns the kept inputs when they were read no longer than SharedInputsMaxAge before now and no
// offering or subnet was marked unavailable since (marks is markCounter's count now).
func (s *sharedInputs) get(now time.Time, marks uint64) (runInputs, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ok || s.marks != marks || now.Sub(s.at) > SharedInputsMaxAge || now.Before(s.at) {
		return runInputs{}, false
	}
	return s.in, true
}

// put keeps in's shared inputs, read at at with the mark count marks (taken before the read began, so a
// mark written during the read makes the next run read again).
func (s *sharedInputs) put(in runInputs, at time.Time, marks uint64) {
	in.snap, in.claims = nil, nil
	s.mu.Lock()
	defer s.mu.Unlock()
	s.in, s.at, s.marks, s.ok = in, at, marks, true
}

// markCounter is the provisioner's Store, counting the offerings and subnets it marks unavailable (see
// SharedInputsMaxAge). Whatever else the Store does passes through.
type markCounter struct {
	Store
	marks *atomic.Uint64
}

func (m markCounter) MarkUnavailable(ctx context.Context, o state.Offering, reason string, ttl time.Duration) error {
	defer m.marks.Add(1)
	return m.Store.MarkUnavailable(ctx, o, reason, ttl)
}

func (m markCounter) MarkSubnetUnavailable(ctx context.Context, subnetID, zone, reason string, ttl time.Duration) error {
	defer m.marks.Add(1)
	return m.Store.MarkSubnetUnavailable(ctx, subnetID, zone, reason, ttl)
}

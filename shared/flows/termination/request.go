// Package termination drains and removes one claim's node: the work behind the termination queue.
package termination

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Request is one termination-queue message: take this claim's node out of the cluster and terminate its
// instance. Whoever decides a disruption (interruption, disruption, lifecycle) sends it; the termination
// function re-drives it with a delay until the claim is deleted.
type Request struct {
	// Claim is the claim record's name (the NodeClaim name).
	Claim string `json:"claim"`
	// Reason is why the node goes: Interrupted, Drifted, Expired, Empty, Underutilized, ...
	Reason string `json:"reason"`
	// Deadline is when the instance will be gone anyway (a spot interruption's two-minute notice), so
	// every pod must be off by then whatever PDBs and do-not-disrupt say. Nil when there is none.
	Deadline *time.Time `json:"deadline,omitempty"`
	// RequestedAt is when the termination was first asked for; re-drives keep it.
	RequestedAt time.Time `json:"requestedAt"`
	// Attempt counts deliveries of this request, starting at 1.
	Attempt int `json:"attempt,omitempty"`
	// Chain names the chain of re-drives this request belongs to (see chain.go); empty on a request a
	// sender makes, set by the termination flow on its re-drives.
	Chain string `json:"chain,omitempty"`
}

// Body is the request as a queue message body.
func (r Request) Body() (string, error) {
	if err := r.Validate(); err != nil {
		return "", err
	}
	b, err := json.Marshal(r)
	return string(b), err
}

// Validate names the first field that is missing.
func (r Request) Validate() error {
	switch {
	case r.Claim == "":
		return errors.New("termination request: claim is required")
	case r.Reason == "":
		return errors.New("termination request: reason is required")
	case r.RequestedAt.IsZero():
		return errors.New("termination request: requestedAt is required")
	}
	return nil
}

// ParseRequest reads a queue message body and names what is wrong. Fields it does not know are ignored:
// during a rolling deploy a newer sender's request reaches an older function (and a re-drive carries
// it back), so rejecting them would drop the request as malformed and leave its node undrained.
func ParseRequest(body string) (Request, error) {
	var r Request
	if err := json.NewDecoder(strings.NewReader(body)).Decode(&r); err != nil {
		return Request{}, fmt.Errorf("termination request: %w", err)
	}
	return r, r.Validate()
}

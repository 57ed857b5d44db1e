package main

import (
	"time"

	"github.com/nodewright/nodewright/shared/adapters/state"
	"github.com/nodewright/nodewright/shared/core/drift"
)

// expiringSoon is how close an expiry counts as coming up in status's per-NodePool totals.
const expiringSoon = 24 * time.Hour

// claimExpiry is when a claim expires, as status and explain show it: CreatedAt + ExpireAfter, judged
// the way the disruption run judges it (drift.Expired).
type claimExpiry struct {
	// At is the expiry time; nil when the claim never expires or its expiry is unknown.
	At *time.Time `json:"expiresAt,omitempty"`
	// Never is set for a claim whose NodePool's expireAfter was "Never".
	Never bool `json:"expiresNever,omitempty"`
	// Expired is set once now has reached At.
	Expired bool `json:"expired,omitempty"`
}

func expiryOf(c state.Claim, now time.Time) claimExpiry {
	if c.ExpireAfter == state.ExpireNever {
		return claimExpiry{Never: true}
	}
	expired, at := drift.Expired(drift.Lifetime{CreatedAt: c.CreatedAt, ExpireAfter: c.ExpireAfter}, now)
	if at.IsZero() {
		return claimExpiry{}
	}
	at = at.UTC()
	return claimExpiry{At: &at, Expired: expired}
}

// within reports whether the claim has not expired yet but will within d of now.
func (e claimExpiry) within(d time.Duration, now time.Time) bool {
	return e.At != nil && !e.Expired && e.At.Sub(now) <= d
}

// short is the status column: "in 26d", "expired", "Never", or "-" when unknown.
func (e claimExpiry) short(now time.Time) string {
	switch {
	case e.Never:
		return "Never"
	case e.At == nil:
		return "-"
	case e.Expired:
		return "expired"
	}
	return "in " + age(e.At.Sub(now))
}

// long is the explain line's text, with the absolute time.
func (e claimExpiry) long(now time.Time) string {
	switch {
	case e.Never:
		return "never expires (expireAfter Never)"
	case e.At == nil:
		return "expiry unknown (no expireAfter recorded on the claim)"
	case e.Expired:
		return "expired at " + e.At.Format(time.RFC3339) + " (" + age(now.Sub(*e.At)) + " ago)"
	}
	return "expires at " + e.At.Format(time.RFC3339) + " (in " + age(e.At.Sub(now)) + ")"
}

package drift

import "time"

// ExpireNever is the ExpireAfter of a claim that never expires (its NodePool's expireAfter was "Never").
const ExpireNever = "Never"

// Lifetime is what a claim's expiry is judged from.
type Lifetime struct {
	// CreatedAt is when the claim was created (Karpenter counts from the NodeClaim's creation).
	CreatedAt time.Time
	// ExpireAfter is the expireAfter stamped on the claim at launch: a Go duration ("720h0m0s"),
	// ExpireNever, or empty when unknown.
	ExpireAfter string
}

// Expired reports whether the claim has reached its expiry at now, and when it expires (or expired): at
// CreatedAt + ExpireAfter, itself included, as Karpenter expires a NodeClaim once now is not before that
// time. A claim that never expires, whose ExpireAfter is unknown or does not parse, or that has no
// creation time, is not expired, and its expiry is the zero time.
func Expired(l Lifetime, now time.Time) (bool, time.Time) {
	if l.ExpireAfter == "" || l.ExpireAfter == ExpireNever || l.CreatedAt.IsZero() {
		return false, time.Time{}
	}
	d, err := time.ParseDuration(l.ExpireAfter)
	if err != nil || d < 0 {
		return false, time.Time{}
	}
	at := l.CreatedAt.Add(d)
	return !now.Before(at), at
}

package apis

import (
	"regexp"
	"time"
)

// Never is the NillableDuration value that disables a timer (expireAfter, consolidateAfter).
const Never = "Never"

var (
	// durationPattern is the pattern Karpenter's CRDs put on terminationGracePeriod: hours, minutes and
	// seconds only, no fractions, no sign.
	durationPattern = regexp.MustCompile(`^([0-9]+(s|m|h))+$`)
	// nillableDurationPattern additionally allows Never.
	nillableDurationPattern = regexp.MustCompile(`^(([0-9]+(s|m|h))+|Never)$`)
	// budgetDurationPattern allows hours and minutes only (cron has no seconds), with the "0s" that
	// time.Duration.String appends.
	budgetDurationPattern = regexp.MustCompile(`^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$`)
)

// Duration is a duration written as in a manifest ("90s", "1h30m"). It is kept as text so validation can
// check it against the pattern Karpenter's CRD uses; Parse gives the value.
type Duration string

// Parse returns the duration's value.
func (d Duration) Parse() (time.Duration, error) { return time.ParseDuration(string(d)) }

// NillableDuration is a Duration that may also be "Never". The empty value means "not set" and is replaced
// by the field's default.
type NillableDuration string

// IsNever reports whether the duration is "Never".
func (d NillableDuration) IsNever() bool { return d == Never }

// Duration returns the value, or nil for Never, unset or malformed text (validation rejects the latter).
func (d NillableDuration) Duration() *time.Duration {
	if d == "" || d == Never {
		return nil
	}
	v, err := time.ParseDuration(string(d))
	if err != nil {
		return nil
	}
	return &v
}

// canonical returns a form equal for equal values ("60m" and "1h" both give "1h0m0s").
func (d NillableDuration) canonical() string {
	if v := d.Duration(); v != nil {
		return v.String()
	}
	return string(d)
}

func (d Duration) canonical() string {
	if v, err := d.Parse(); err == nil {
		return v.String()
	}
	return string(d)
}

package apis

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
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
	// goDurationSyntax is the syntax time.ParseDuration reads (kubelet durations are written in it): text
	// in it that does not parse is out of range.
	goDurationSyntax = regexp.MustCompile(`^[-+]?(0|((([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(ns|us|µs|μs|ms|s|m|h))+)$`)
)

// MaxDuration is the longest duration Nodewright's timers hold (a Go time.Duration, about 292 years).
const MaxDuration = time.Duration(math.MaxInt64)

// durationTooLong is the reason a duration longer than MaxDuration is refused: every timer built from
// it (a drain deadline, an expiry) would fail, so the setting would be accepted and then never work.
var durationTooLong = fmt.Sprintf("is longer than the longest duration nodewright can time (%s, about 292 years)",
	MaxDuration.Truncate(time.Second))

// validateDuration checks a manifest duration against its field's pattern, then parses it: text the
// pattern allows ("999999999999h") may still not fit in a time.Duration. "Never" is accepted when the
// pattern allows it.
func validateDuration(path *field.Path, text string, re *regexp.Regexp) field.ErrorList {
	if errs := validatePattern(path, text, re); len(errs) > 0 {
		return errs
	}
	if text == Never {
		return nil
	}
	if _, err := time.ParseDuration(text); err != nil {
		return field.ErrorList{field.Invalid(path, text, durationTooLong)}
	}
	return nil
}

// goDurationProblem parses text written as time.ParseDuration reads it and says what is wrong with it:
// "" when nothing is, so the caller can name the field.
func goDurationProblem(text string) (time.Duration, string) {
	d, err := time.ParseDuration(text)
	switch {
	case err == nil:
		return d, ""
	case goDurationSyntax.MatchString(text):
		return 0, durationTooLong
	default:
		return 0, "must be a duration such as 1m30s"
	}
}

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

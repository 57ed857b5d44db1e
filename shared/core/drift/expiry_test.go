package drift

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestExpired(t *testing.T) {
	created := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	at := created.Add(720 * time.Hour)
	cases := []struct {
		name        string
		expireAfter string
		now         time.Time
		expired     bool
		expiresAt   time.Time
	}{
		{"before expiry", "720h0m0s", at.Add(-time.Nanosecond), false, at},
		{"exactly at expiry", "720h0m0s", at, true, at},
		{"after expiry", "720h0m0s", at.Add(time.Hour), true, at},
		{"short expiry", "2m0s", created.Add(2 * time.Minute), true, created.Add(2 * time.Minute)},
		{"Never", ExpireNever, created.Add(100 * 365 * 24 * time.Hour), false, time.Time{}},
		{"unknown on an old claim", "", created.Add(100 * 365 * 24 * time.Hour), false, time.Time{}},
		{"malformed", "soon", created.Add(100 * 365 * 24 * time.Hour), false, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expired, expiresAt := Expired(Lifetime{CreatedAt: created, ExpireAfter: tc.expireAfter}, tc.now)
			assert.Equal(t, tc.expired, expired)
			assert.Equal(t, tc.expiresAt, expiresAt)
		})
	}
	expired, _ := Expired(Lifetime{ExpireAfter: "1s"}, created)
	assert.False(t, expired, "a claim without a creation time is not judged")
}

package webhooktoken

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

// SecretsAPI is the Secrets Manager call the source makes; *secretsmanager.Client satisfies it.
type SecretsAPI interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

var _ SecretsAPI = (*secretsmanager.Client)(nil)

// Version stages the source reads.
const (
	StageCurrent  = "AWSCURRENT"
	StagePrevious = "AWSPREVIOUS"
)

// Defaults for Options.
const (
	// DefaultTTL is how long tokens read are trusted before a request re-reads them.
	DefaultTTL = 5 * time.Minute
	// DefaultRefreshInterval is the least time between two reads: a flood of wrong tokens (or a Secrets
	// Manager that does not answer) costs one read per interval, not one per request.
	DefaultRefreshInterval = 10 * time.Second
	// DefaultOverlap is how long after a new version is created the previous token stays valid: the time
	// an operator has to re-apply the webhook registration with the new URL.
	DefaultOverlap = time.Hour
	// DefaultFetchTimeout bounds one refresh (both reads, retries included) so that a slow Secrets Manager
	// cannot push the webhook's answer past the API server's timeout.
	DefaultFetchTimeout = 400 * time.Millisecond
)

// Options configure a Source. Zero durations take the defaults above.
type Options struct {
	// SecretID is the secret's ARN (or name).
	SecretID        string
	TTL             time.Duration
	RefreshInterval time.Duration
	Overlap         time.Duration
	FetchTimeout    time.Duration
	Now             func() time.Time
	Log             *slog.Logger
}

// Source answers whether a presented token is accepted. It is safe for concurrent use; concurrent
// requests share one refresh.
type Source struct {
	secrets SecretsAPI
	o       Options

	mu          sync.Mutex
	loaded      bool
	current     version
	previous    version // empty outside the overlap window or when there is none
	overlapEnd  time.Time
	fetchedAt   time.Time // last successful refresh
	lastAttempt time.Time // last refresh, successful or not
	currentSeen time.Time // when this instance first read the current version
}

type version struct {
	id    string
	value []byte
}

// New returns a Source reading the secret o.SecretID.
func New(secrets SecretsAPI, o Options) (*Source, error) {
	if o.SecretID == "" {
		return nil, errors.New("webhook token: SecretID is required (the ARN of the token's secret)")
	}
	if secrets == nil {
		return nil, errors.New("webhook token: a Secrets Manager client is required")
	}
	for name, d := range map[string]*time.Duration{"TTL": &o.TTL, "RefreshInterval": &o.RefreshInterval,
		"Overlap": &o.Overlap, "FetchTimeout": &o.FetchTimeout} {
		if *d < 0 {
			return nil, fmt.Errorf("webhook token: %s must not be negative, got %s", name, *d)
		}
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.RefreshInterval == 0 {
		o.RefreshInterval = DefaultRefreshInterval
	}
	if o.Overlap == 0 {
		o.Overlap = DefaultOverlap
	}
	if o.FetchTimeout == 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Source{secrets: secrets, o: o}, nil
}

// Valid reports whether presented is the current token, or the previous one inside the overlap window.
// It reads the secret when the tokens held are older than the TTL, and again when presented matches
// neither — each at most once per refresh interval. It never fails: a token that cannot be checked (the
// secret never read) is not valid.
func (s *Source) Valid(ctx context.Context, presented string) bool {
	if presented == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.o.Now()
	if (!s.loaded || now.Sub(s.fetchedAt) >= s.o.TTL) && s.mayRefresh(now) {
		s.refresh(ctx, now)
	}
	if s.accepts(presented, now) {
		return true
	}
	if !s.mayRefresh(now) {
		return false
	}
	s.refresh(ctx, now)
	return s.accepts(presented, now)
}

func (s *Source) mayRefresh(now time.Time) bool {
	return s.lastAttempt.IsZero() || now.Sub(s.lastAttempt) >= s.o.RefreshInterval
}

// accepts compares presented with both tokens in constant time.
func (s *Source) accepts(presented string, now time.Time) bool {
	if !s.loaded {
		return false
	}
	p := []byte(presented)
	ok := subtle.ConstantTimeCompare(p, s.current.value)
	if len(s.previous.value) > 0 && now.Before(s.overlapEnd) {
		ok |= subtle.ConstantTimeCompare(p, s.previous.value)
	}
	return ok == 1
}

// refresh reads AWSCURRENT and, inside the overlap window, AWSPREVIOUS. On failure it keeps what it
// held and logs why (never a value).
func (s *Source) refresh(ctx context.Context, now time.Time) {
	s.lastAttempt = now
	ctx, cancel := context.WithTimeout(ctx, s.o.FetchTimeout)
	defer cancel()
	cur, created, err := s.read(ctx, StageCurrent)
	if err != nil {
		s.o.Log.WarnContext(ctx, "reading the webhook token failed; keeping the tokens held", "stage", StageCurrent,
			"held", s.loaded, "error", err.Error())
		return
	}
	seen := now
	if s.loaded && s.current.id == cur.id {
		seen = s.currentSeen
	}
	if created.IsZero() {
		created = seen
	}
	overlapEnd := created.Add(s.o.Overlap)
	var prev version
	if now.Before(overlapEnd) {
		p, _, err := s.read(ctx, StagePrevious)
		var notFound *smtypes.ResourceNotFoundException
		switch {
		case err == nil:
			prev = p
		case errors.As(err, &notFound): // a secret never rotated has no previous version
		case s.loaded && s.current.id != cur.id: // PutSecretValue made the version held the previous one
			prev = s.current
		case s.loaded:
			prev = s.previous
		}
		if err != nil && !errors.As(err, &notFound) {
			s.o.Log.WarnContext(ctx, "reading the previous webhook token failed", "stage", StagePrevious, "error", err.Error())
		}
	}
	if s.loaded && s.current.id != cur.id {
		s.o.Log.InfoContext(ctx, "webhook token rotated", "versionId", cur.id, "previousVersionId", prev.id,
			"previousValidUntil", overlapEnd.UTC().Format(time.RFC3339))
	}
	s.current, s.previous, s.overlapEnd, s.currentSeen = cur, prev, overlapEnd, seen
	s.loaded, s.fetchedAt = true, now
}

func (s *Source) read(ctx context.Context, stage string) (version, time.Time, error) {
	out, err := s.secrets.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{
		SecretId: aws.String(s.o.SecretID), VersionStage: aws.String(stage)})
	if err != nil {
		return version{}, time.Time{}, fmt.Errorf("reading %s of the webhook token secret: %w", stage, err)
	}
	if aws.ToString(out.SecretString) == "" {
		return version{}, time.Time{}, fmt.Errorf("the %s webhook token is empty (SecretString must hold the token)", stage)
	}
	return version{id: aws.ToString(out.VersionId), value: []byte(aws.ToString(out.SecretString))}, aws.ToTime(out.CreatedDate), nil
}

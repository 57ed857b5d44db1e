package faults

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"sync"
)

// Injector decides, per call, whether and which fault the call meets. The decision for the n-th call
// of one operation depends only on the seed, the operation and n, so a run's faults repeat with its seed
// as far as its calls do. Its zero rule set injects nothing; Arm and Disarm switch rules at run time.
type Injector struct {
	seed uint64

	mu     sync.Mutex
	rules  []Rule
	hits   []int // faults per rule since Arm
	seen   map[string]uint64
	calls  map[Target]int
	faults map[Target]map[Kind]int
}

// New returns an injector with seed and rules (which it validates).
func New(seed uint64, rules ...Rule) (*Injector, error) {
	i := &Injector{seed: seed, seen: map[string]uint64{}, calls: map[Target]int{}, faults: map[Target]map[Kind]int{}}
	if err := i.Arm(rules...); err != nil {
		return nil, err
	}
	return i, nil
}

// Seed is the injector's seed.
func (i *Injector) Seed() uint64 { return i.seed }

// Arm replaces the rules; on a bad rule it keeps the old ones and names the rule and its field.
func (i *Injector) Arm(rules ...Rule) error {
	for n, r := range rules {
		if err := r.Validate(); err != nil {
			return fmt.Errorf("fault rule %d: %w", n, err)
		}
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.rules = append([]Rule(nil), rules...)
	i.hits = make([]int, len(rules))
	return nil
}

// Disarm drops every rule: calls pass untouched (and are no longer counted).
func (i *Injector) Disarm() { _ = i.Arm() }

// Decide counts the call and returns the rule whose fault it meets, if any: the first matching rule
// whose draw falls under its probability.
func (i *Injector) Decide(c Call) (Rule, bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if len(i.rules) == 0 {
		return Rule{}, false
	}
	key := c.key()
	n := i.seen[key]
	i.seen[key]++
	i.calls[c.Target]++
	for idx, r := range i.rules {
		if !r.matches(c) || r.Probability <= 0 || (r.Limit > 0 && i.hits[idx] >= r.Limit) {
			continue
		}
		if draw(i.seed, key, n, idx) < r.Probability {
			if i.faults[c.Target] == nil {
				i.faults[c.Target] = map[Kind]int{}
			}
			i.faults[c.Target][r.Kind]++
			i.hits[idx]++
			return r, true
		}
	}
	return Rule{}, false
}

// draw is a uniform number in [0, 1) fixed by its arguments.
func draw(seed uint64, key string, n uint64, rule int) float64 {
	h := fnv.New64a()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], seed)
	binary.LittleEndian.PutUint64(b[8:], n)
	binary.LittleEndian.PutUint64(b[16:], uint64(rule))
	h.Write(b[:])
	h.Write([]byte(key))
	x := h.Sum64()
	// splitmix64's finaliser spreads FNV's bits.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / float64(uint64(1)<<53)
}

// Stats are what the injector saw and did while armed.
type Stats struct {
	Seed uint64 `json:"seed"`
	// Calls counts the calls eligible for faults, by target.
	Calls map[Target]int `json:"calls"`
	// Injected counts the faults by "target/kind" (aws/throttle, kube/dropped-connection, ...).
	Injected map[string]int `json:"injected"`
	// Total counts every fault; Failing those that failed their call (all but latency).
	Total   int `json:"total"`
	Failing int `json:"failing"`
	// FailingShare is Failing over the calls, by target.
	FailingShare map[Target]float64 `json:"failingShare"`
}

// Stats returns the counters so far.
func (i *Injector) Stats() Stats {
	i.mu.Lock()
	defer i.mu.Unlock()
	s := Stats{Seed: i.seed, Calls: map[Target]int{}, Injected: map[string]int{}, FailingShare: map[Target]float64{}}
	for t, n := range i.calls {
		s.Calls[t] = n
		failing := 0
		for k, m := range i.faults[t] {
			s.Injected[string(t)+"/"+string(k)] = m
			s.Total += m
			if k.Failing() {
				failing += m
			}
		}
		s.Failing += failing
		if n > 0 {
			s.FailingShare[t] = math.Round(float64(failing)/float64(n)*1000) / 1000
		}
	}
	return s
}

// Marker is in the message of every injected failure, so a log or an error report tells them apart.
const Marker = "injected fault"

// Error is the error of a call that met a Drop fault; it unwraps to what the network would have
// returned.
type Error struct {
	Kind Kind
	Call Call
	Err  error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s (%s on %s %s%s): %v", Marker, e.Kind, e.Call.Service, e.Call.Operation, e.Call.Resource, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// IsInjected says whether err came from an injected fault: a Drop's error, or a service error whose
// message carries Marker.
func IsInjected(err error) bool {
	var fe *Error
	return err != nil && (errors.As(err, &fe) || strings.Contains(err.Error(), Marker))
}

type exemptKey struct{}

// Exempt marks ctx's calls as none of the functions' own (a platform's poller, a test's set-up): the
// layer passes them untouched and does not count them.
func Exempt(ctx context.Context) context.Context { return context.WithValue(ctx, exemptKey{}, true) }

func exempt(ctx context.Context) bool { v, _ := ctx.Value(exemptKey{}).(bool); return v }

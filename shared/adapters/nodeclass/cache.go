package nodeclass

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sync"
	"time"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// DefaultCacheAge is how long a warm function keeps an EC2NodeClass's resolution: every provisioner
// run and disruption read resolved every class again (DescribeSubnets, DescribeSecurityGroups,
// DescribeImages, the SSM parameters behind aliases, GetInstanceProfile), several calls a class a
// minute from each function, against account-wide EC2 and SSM throttling buckets. Five minutes is
// what a new AMI behind an alias or a newly tagged subnet waits at most to be used; an answer that says
// a cached value is gone drops it at once (Forget).
const DefaultCacheAge = 5 * time.Minute

// Resolving is what Cache wraps; *Resolver satisfies it.
type Resolving interface {
	Resolve(ctx context.Context, nc *apis.EC2NodeClass, k8sVersion string) (Resolution, error)
}

var _ Resolving = (*Resolver)(nil)

// Cache keeps each EC2NodeClass's Ready resolution for the life of a warm function, up to a bounded
// age, keyed by the class's name and a hash of its spec and the Kubernetes version: a changed spec
// resolves at once. It keeps no error and no class that is not Ready (the operator is likely fixing
// it), and no class that selects capacity reservations (their available counts change with every
// launch). Safe for concurrent use.
type Cache struct {
	r      Resolving
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]cached
}

type cached struct {
	key string
	res Resolution
	at  time.Time
}

// NewCache wraps r; maxAge zero or less is DefaultCacheAge.
func NewCache(r Resolving, maxAge time.Duration, now func() time.Time) *Cache {
	if maxAge <= 0 {
		maxAge = DefaultCacheAge
	}
	return &Cache{r: r, maxAge: maxAge, now: now, entries: map[string]cached{}}
}

// Resolve answers from the cache when it holds nc's resolution for the same spec and version, younger
// than the cache's age; otherwise it resolves nc and keeps the answer if it may (see Cache).
func (c *Cache) Resolve(ctx context.Context, nc *apis.EC2NodeClass, k8sVersion string) (Resolution, error) {
	key, err := specKey(nc, k8sVersion)
	if err != nil {
		return c.r.Resolve(ctx, nc, k8sVersion)
	}
	c.mu.Lock()
	e, ok := c.entries[nc.Name]
	c.mu.Unlock()
	if ok && e.key == key && c.now().Sub(e.at) < c.maxAge {
		return e.res, nil
	}
	at := c.now()
	res, err := c.r.Resolve(ctx, nc, k8sVersion)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || !res.Ready || len(nc.Spec.CapacityReservationSelectorTerms) > 0 {
		delete(c.entries, nc.Name)
		return res, err
	}
	c.entries[nc.Name] = cached{key: key, res: res, at: at}
	return res, nil
}

// Forget drops the class's resolution, so the next Resolve asks AWS again: an answer said a value it
// holds is gone (StaleAnswer).
func (c *Cache) Forget(class string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, class)
}

// specKey identifies what a resolution depends on besides AWS: the class's spec and the version.
func specKey(nc *apis.EC2NodeClass, k8sVersion string) (string, error) {
	b, err := json.Marshal(nc.Spec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(b, "\x00"+k8sVersion...))
	return hex.EncodeToString(sum[:]), nil
}

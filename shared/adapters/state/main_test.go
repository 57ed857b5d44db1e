package state

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
)

func TestMain(m *testing.M) { os.Exit(awstest.Main(m)) }

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newStore creates a fresh state table in the shared moto and returns a store over it.
func newStore(t *testing.T, opts ...Option) (*Store, *clock) {
	t.Helper()
	moto := awstest.Shared(t)
	db := NewClient(moto.Config())
	_, err := db.CreateTable(context.Background(), CreateTableInput("state"))
	require.NoError(t, err)
	c := newClock()
	return New(db, "state", append([]Option{WithClock(c.Now)}, opts...)...), c
}

// race runs fn in n goroutines started together and returns their errors.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			errs[i] = fn(i)
		}(i)
	}
	close(start)
	wg.Wait()
	return errs
}

var _ DynamoDB = (*dynamodb.Client)(nil)

package awscalls

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

type functionKey struct{}

// WithFunction labels the calls made with ctx as function's, for a configuration instrumented without a
// fixed function (Instrument with function "").
func WithFunction(ctx context.Context, function string) context.Context {
	return context.WithValue(ctx, functionKey{}, function)
}

// FunctionOf is the function ctx's calls are labelled as ("" for none).
func FunctionOf(ctx context.Context) string { return functionOf(ctx) }

func functionOf(ctx context.Context) string {
	f, _ := ctx.Value(functionKey{}).(string)
	return f
}

// Instrument returns a copy of cfg whose clients record each call into $NODEWRIGHT_AWS_CALLS, or cfg
// unchanged when that is unset. function labels every call; with "" only calls whose context carries
// WithFunction's label are recorded (the others are a test's own set-up). d is what the calls run
// against; its account is the one the ARNs name (moto's). Tags of existing resources are read at call
// time through cfg's own, unrecorded clients.
func Instrument(cfg aws.Config, d Deployment, function string) aws.Config {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		return cfg
	}
	if err := d.save(dir); err != nil {
		panic(fmt.Sprintf("awscalls: saving the deployment into %s: %v", dir, err))
	}
	r := &recorder{function: function, deployment: d.ID(), out: sink(dir), auth: newAuthorizer(cfg, d.Account)}
	out := cfg.Copy()
	out.APIOptions = append(append([]func(*middleware.Stack) error{}, cfg.APIOptions...), func(s *middleware.Stack) error {
		return s.Initialize.Add(r, middleware.After)
	})
	return out
}

// recorder is the middleware: it works out the call's checks before the call (a deleted resource's
// tags are gone afterwards) and writes the call once it returned.
type recorder struct {
	function   string
	deployment string
	out        *file
	auth       *authorizer
}

func (r *recorder) ID() string { return "nodewright.awscalls" }

func (r *recorder) HandleInitialize(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
	middleware.InitializeOutput, middleware.Metadata, error) {
	fn := r.function
	if fn == "" {
		fn = functionOf(ctx)
	}
	if fn == "" {
		return next.HandleInitialize(ctx, in)
	}
	service, op := awsmiddleware.GetServiceID(ctx), awsmiddleware.GetOperationName(ctx)
	region := awsmiddleware.GetRegion(ctx)
	call := Call{Function: fn, Deployment: r.deployment, Service: service, Operation: op}
	// The look-ups run on clients without this middleware, under a context without the label.
	checks, lookupErr := r.auth.checks(context.WithoutCancel(WithFunction(ctx, "")), region, service, op, in.Parameters)
	call.Checks = checks
	out, md, err := next.HandleInitialize(ctx, in)
	if err != nil {
		call.Error = err.Error()
	}
	if lookupErr != nil {
		// A check that cannot be worked out fails the proof rather than passing unseen.
		call.Checks = append(call.Checks, Check{Action: "awscalls:Unresolved", Resource: lookupErr.Error()})
	}
	r.out.write(call)
	return out, md, err
}

// file is one process's recording file, created on the first call; lines are appended whole.
type file struct {
	dir  string
	once sync.Once
	mu   sync.Mutex
	f    *os.File
	err  error
}

var (
	sinksMu sync.Mutex
	sinks   = map[string]*file{}
)

func sink(dir string) *file {
	sinksMu.Lock()
	defer sinksMu.Unlock()
	if s, ok := sinks[dir]; ok {
		return s
	}
	s := &file{dir: dir}
	sinks[dir] = s
	return s
}

func (s *file) write(c Call) {
	s.once.Do(func() {
		if s.err = os.MkdirAll(s.dir, 0o755); s.err != nil {
			return
		}
		s.f, s.err = os.CreateTemp(s.dir, fmt.Sprintf("calls-%d-*.jsonl", os.Getpid()))
	})
	if s.err != nil {
		// Recording is on only in tests; a lost recording must not pass silently.
		panic(fmt.Sprintf("awscalls: cannot record into %s: %v", filepath.Clean(s.dir), s.err))
	}
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("awscalls: encoding a call: %v", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.f.Write(append(b, '\n')); err != nil {
		panic(fmt.Sprintf("awscalls: writing %s: %v", s.f.Name(), err))
	}
}

package awstest

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// DefaultRegion is the region Config uses; moto holds the same instance data for every region.
const DefaultRegion = "us-east-1"

// AccountID is the account moto reports for the dummy credentials.
const AccountID = "123456789012"

// Moto is a running moto_server on a loopback port.
type Moto struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:41234.
	Endpoint string
	proc     *testenv.Process
}

// Start starts a moto_server on a free 127.0.0.1 port and waits until it answers.
func Start(ctx context.Context) (*Moto, error) {
	path, args, err := command()
	if err != nil {
		return nil, err
	}
	if path == "" { // the serializing launcher: written next to nothing else, removed with the server
		script, err := os.CreateTemp("", "nodewright-moto-*.py")
		if err != nil {
			return nil, err
		}
		defer os.Remove(script.Name()) // python has read it once the server answers
		if _, err := script.Write(launcher); err != nil {
			return nil, err
		}
		script.Close()
		path, args = args[0], []string{script.Name()}
	}
	var last error
	for attempt := 0; attempt < 3; attempt++ { // a port found free can be taken before moto binds it
		port, err := testenv.FreePort()
		if err != nil {
			return nil, err
		}
		m, err := startOn(ctx, path, hostPortArgs(path, args, port), port)
		if err == nil {
			return m, nil
		}
		last = err
	}
	return nil, last
}

func startOn(ctx context.Context, path string, args []string, port int) (*Moto, error) {
	proc, err := testenv.StartProcess("moto_server", path, args, "")
	if err != nil {
		return nil, err
	}
	m := &Moto{Endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), proc: proc}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	err = testenv.Poll(ctx, 100*time.Millisecond, proc.Exited(), func(ctx context.Context) error {
		return m.post(ctx, "/moto-api/reset")
	})
	if err != nil {
		proc.Stop(5 * time.Second)
		return nil, fmt.Errorf("waiting for moto_server on port %d: %w\n%s", port, err, proc.Output())
	}
	return m, nil
}

// launcher runs moto's server application with requests serialized (see motoserver.py for why).
//
//go:embed motoserver.py
var launcher []byte

// command finds how to run moto. By default it is python3 with moto installed running the serializing
// launcher: path is "" and args[0] is the interpreter. $MOTO_SERVER names another moto_server-compatible
// command (taking -H HOST -p PORT) instead.
func command() (string, []string, error) {
	if p := os.Getenv("MOTO_SERVER"); p != "" {
		return p, nil, nil
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		return "", nil, fmt.Errorf("python3 not found: moto needs it (pip install 'moto[server]')")
	}
	if out, err := exec.Command(py, "-c", "import moto.server, werkzeug.serving").CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("python3 cannot import moto's server: install it with pip install 'moto[server]' (make test does): %s", out)
	}
	return "", []string{py}, nil
}

// hostPortArgs adds the listening address in the form the command takes.
func hostPortArgs(path string, args []string, port int) []string {
	if os.Getenv("MOTO_SERVER") == path && path != "" {
		return append(args, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	}
	return append(args, "127.0.0.1", strconv.Itoa(port))
}

// Config returns an AWS configuration for DefaultRegion pointed at this server with dummy credentials.
func (m *Moto) Config() aws.Config { return m.ConfigFor(DefaultRegion) }

// ConfigFor returns an AWS configuration for region pointed at this server with dummy credentials.
func (m *Moto) ConfigFor(region string) aws.Config {
	return aws.Config{
		Region:           region,
		Credentials:      credentials.NewStaticCredentialsProvider("testing", "testing", ""),
		BaseEndpoint:     aws.String(m.Endpoint),
		RetryMaxAttempts: 3,
	}
}

// Reset drops every resource in every service and region.
func (m *Moto) Reset(ctx context.Context) error {
	if err := m.post(ctx, "/moto-api/reset"); err != nil {
		return fmt.Errorf("resetting moto: %w", err)
	}
	return nil
}

// PID is the server's process id.
func (m *Moto) PID() int { return m.proc.PID() }

// Stop stops the server by PID.
func (m *Moto) Stop() { m.proc.Stop(5 * time.Second) }

func (m *Moto) post(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.Endpoint+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: HTTP %d", path, resp.StatusCode)
	}
	return nil
}

var shared struct {
	mu   sync.Mutex
	moto *Moto
}

// Shared returns this test binary's moto (starting it on first use) with all state reset, or stops the
// test through testenv.Unavailable when it cannot start.
func Shared(tb testing.TB) *Moto {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	ctx := context.Background()
	if shared.moto == nil {
		m, err := Start(ctx)
		if err != nil {
			testenv.Unavailable(tb, "moto_server", err)
			return nil
		}
		shared.moto = m
	} else if err := shared.moto.Reset(ctx); err != nil {
		tb.Fatalf("moto_server stopped answering: %v", err)
	}
	return shared.moto
}

// Main runs the package's tests and then stops the shared moto. Call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// StopShared stops the shared moto if it runs. A TestMain that needs more than moto calls it after
// m.Run instead of using Main.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.moto != nil {
		shared.moto.Stop()
		shared.moto = nil
	}
}

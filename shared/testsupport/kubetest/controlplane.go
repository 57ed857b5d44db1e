package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// Options chooses the components beyond etcd and kube-apiserver.
type Options struct {
	// Scheduler runs kube-scheduler, which binds pods to Nodes.
	Scheduler bool
	// ControllerManager runs kube-controller-manager (PDB status, ReplicaSets, Deployments, DaemonSets,
	// garbage collection, namespaces). Its node-lifecycle controller stays off: the Nodes tests create have
	// no kubelet and would be tainted unreachable.
	ControllerManager bool
	// APIServerEnv is added to kube-apiserver's environment (for example GOGC or GOMEMLIMIT, to hold a
	// very large cluster's watch cache in less memory).
	APIServerEnv []string
}

// ControlPlane is a running local control plane.
type ControlPlane struct {
	// Config is an admin (system:masters) client configuration that verifies the serving certificate.
	Config *rest.Config
	// Client is a clientset built from Config.
	Client kubernetes.Interface
	// Kubeconfig is the path of a kubeconfig file with the same admin credentials.
	Kubeconfig string
	// EtcdURL is etcd's client URL, for loaders that write a large cluster straight into the API
	// server's storage.
	EtcdURL string

	dir   string
	pki   *pki
	procs map[string]*testenv.Process
	ports map[string]int // each component's secure port
}

// Start starts etcd and kube-apiserver, then the components opts asks for, and waits until each is ready.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nodewright-kube-")
	if err != nil {
		return nil, err
	}
	cp := &ControlPlane{dir: dir, procs: map[string]*testenv.Process{}, ports: map[string]int{}}
	if err := cp.start(ctx, bins, opts); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context, bins binaries, opts Options) error {
	var err error
	if cp.pki, err = newPKI(cp.dir, time.Now()); err != nil {
		return err
	}
	token, err := randomToken()
	if err != nil {
		return err
	}
	if err := cp.startEtcdOnFreePorts(ctx, bins.etcd); err != nil {
		return err
	}
	if err := cp.startOnFreePorts("kube-apiserver", func() error {
		return cp.startAPIServer(ctx, bins.apiserver, cp.EtcdURL, token, opts.APIServerEnv)
	}); err != nil {
		return err
	}
	return cp.Ensure(ctx, opts)
}

// Ensure starts the components in opts that are not running yet.
func (cp *ControlPlane) Ensure(ctx context.Context, opts Options) error {
	bins, err := findBinaries()
	if err != nil {
		return err
	}
	if opts.Scheduler && cp.procs["kube-scheduler"] == nil {
		if err := cp.startOnFreePorts("kube-scheduler", func() error {
			return cp.startComponent(ctx, "kube-scheduler", bins.scheduler, nil)
		}); err != nil {
			return err
		}
	}
	if opts.ControllerManager && cp.procs["kube-controller-manager"] == nil {
		extra := []string{
			"--controllers=*,-node-lifecycle-controller,-node-ipam-controller",
			"--service-account-private-key-file=" + cp.pki.SAPrivateFile,
			"--root-ca-file=" + cp.pki.CAFile,
			"--use-service-account-credentials=false",
			"--concurrent-gc-syncs=5",
		}
		if err := cp.startOnFreePorts("kube-controller-manager", func() error {
			return cp.startComponent(ctx, "kube-controller-manager", bins.controllerManager, extra)
		}); err != nil {
			return err
		}
	}
	return nil
}

func (cp *ControlPlane) startEtcd(ctx context.Context, bin string) (string, error) {
	clientPort, err := testenv.FreePort()
	if err != nil {
		return "", err
	}
	peerPort, err := testenv.FreePort()
	if err != nil {
		return "", err
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	args := []string{
		"--name=default",
		"--data-dir=" + filepath.Join(cp.dir, "etcd"),
		"--listen-client-urls=" + clientURL, "--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--unsafe-no-fsync", "--log-level=warn",
	}
	if err := cp.run(ctx, "etcd", bin, args, func(ctx context.Context) error {
		return httpGetOK(ctx, http.DefaultClient, clientURL+"/health")
	}); err != nil {
		return "", err
	}
	return clientURL, nil
}

func (cp *ControlPlane) startAPIServer(ctx context.Context, bin, etcdURL, token string, env []string) error {
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	tokens := filepath.Join(cp.dir, "tokens.csv")
	lines := token + `,admin,admin,"system:masters"` + "\n"
	if err := os.WriteFile(tokens, []byte(lines), 0o600); err != nil {
		return err
	}
	host := "https://127.0.0.1:" + strconv.Itoa(port)
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none",
		"--tls-cert-file=" + cp.pki.CertFile, "--tls-private-key-file=" + cp.pki.KeyFile,
		"--client-ca-file=" + cp.pki.CAFile,
		// Front-proxy settings fill the extension-apiserver-authentication ConfigMap that the scheduler and
		// controller-manager read at start; without them both log an error every few seconds.
		"--requestheader-client-ca-file=" + cp.pki.CAFile,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--token-auth-file=" + tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cp.pki.SAPublicFile,
		"--service-account-signing-key-file=" + cp.pki.SAPrivateFile,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--allow-privileged=true",
		"--disable-admission-plugins=ServiceAccount",
		"--enable-priority-and-fairness=false",
		// Room for the raised client QPS of the scheduler and controller-manager during a burst.
		"--max-requests-inflight=1000", "--max-mutating-requests-inflight=500",
		"--cert-dir=" + filepath.Join(cp.dir, "certs"),
	}
	cp.Config = &rest.Config{
		Host:            host,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.pki.CAPEM},
		QPS:             500,
		Burst:           1000,
	}
	transport, err := rest.TransportFor(cp.Config)
	if err != nil {
		return err
	}
	probe := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	if err := cp.runWithEnv(ctx, "kube-apiserver", bin, args, env, func(ctx context.Context) error {
		return httpGetOK(ctx, probe, host+"/readyz")
	}); err != nil {
		return err
	}
	if cp.Client, err = kubernetes.NewForConfig(cp.Config); err != nil {
		return err
	}
	cp.Kubeconfig = filepath.Join(cp.dir, "admin.kubeconfig")
	return writeKubeconfig(cp.Kubeconfig, host, cp.pki.CAFile, token)
}

// startComponent starts kube-scheduler or kube-controller-manager with the admin kubeconfig.
func (cp *ControlPlane) startComponent(ctx context.Context, name, bin string, extra []string) error {
	port, err := testenv.FreePort()
	if err != nil {
		return err
	}
	args := append([]string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port),
		"--cert-dir=" + filepath.Join(cp.dir, name+"-certs"),
		"--leader-elect=false",
		// The defaults (controller-manager 20 QPS, scheduler 50) make a burst of a thousand pods wait
		// on the client-side rate limiter: the ReplicaSet controller would create 20 pods a second.
		"--kube-api-qps=500", "--kube-api-burst=1000",
	}, extra...)
	cp.ports[name] = port
	// The component serves a self-signed certificate of its own; the probe only asks whether it is up.
	probe := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe
	}}
	return cp.run(ctx, name, bin, args, func(ctx context.Context) error {
		return httpGetOK(ctx, probe, fmt.Sprintf("https://127.0.0.1:%d/healthz", port))
	})
}

// run starts a process and waits until ready succeeds; on failure the error carries the process output.
func (cp *ControlPlane) run(ctx context.Context, name, bin string, args []string, ready func(context.Context) error) error {
	return cp.runWithEnv(ctx, name, bin, args, nil, ready)
}

// runWithEnv is run with env added to the process's environment.
func (cp *ControlPlane) runWithEnv(ctx context.Context, name, bin string, args, env []string, ready func(context.Context) error) error {
	proc, err := testenv.StartProcessWithEnv(name, bin, args, env, filepath.Join(cp.dir, name+".log"))
	if err != nil {
		return err
	}
	cp.procs[name] = proc
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := testenv.Poll(ctx, 100*time.Millisecond, proc.Exited(), ready); err != nil {
		return fmt.Errorf("waiting for %s: %w\n--- %s output (tail) ---\n%s", name, err, name, proc.Output())
	}
	return nil
}

// Stop stops every component (newest first) and removes the run's folder.
func (cp *ControlPlane) Stop() {
	for _, name := range []string{"kube-controller-manager", "kube-scheduler", "kube-apiserver", "etcd"} {
		if p := cp.procs[name]; p != nil {
			p.Stop(10 * time.Second)
		}
	}
	_ = os.RemoveAll(cp.dir)
}

// As returns a client configuration that acts as user in groups (and system:authenticated), as an EKS
// access entry makes an IAM role act: the admin credentials impersonate them, so each request is
// authorized as that identity alone and has only the rights its groups' bindings give.
func (cp *ControlPlane) As(user string, groups ...string) *rest.Config {
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: append(append([]string(nil), groups...), "system:authenticated")}
	return cfg
}

// Logs returns the tail of a component's output, for failure messages.
func (cp *ControlPlane) Logs(component string) string {
	if p := cp.procs[component]; p != nil {
		return p.Output()
	}
	return ""
}

func httpGetOK(ctx context.Context, c *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func writeKubeconfig(path, host, caFile, token string) error {
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: local
  context: {cluster: local, user: admin}
current-context: local
`, host, caFile, token)
	return os.WriteFile(path, []byte(cfg), 0o600)
}

var errNoBinaries = errors.New("control plane binaries not found")

// PIDs are the process ids of the components running, by name (etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager).
func (cp *ControlPlane) PIDs() map[string]int {
	out := map[string]int{}
	for name, p := range cp.procs {
		out[name] = p.PID()
	}
	return out
}

package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	coreapis "sigs.k8s.io/karpenter/pkg/apis"
)

// kubeVersion is the release `make kube-bin` builds the local control plane from
// (shared/testsupport/kubetest.KubeVersion).
const kubeVersion = "v1.34.4"

// kubeBinDir is where etcd and kube-apiserver are: $KUBEBUILDER_ASSETS, else $NW_KUBE_BIN, else
// ~/.cache/nodewright/kube-<version>, the folder `make kube-bin` fills (shared/testsupport/kubetest.BinDir).
func kubeBinDir() string {
	for _, env := range []string{"KUBEBUILDER_ASSETS", "NW_KUBE_BIN"} {
		if d := os.Getenv(env); d != "" {
			return d
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "nodewright", "kube-"+kubeVersion)
}

// apiServer is a local etcd and kube-apiserver (envtest) with Karpenter's CRDs installed, and a
// client to it that reads from an informer cache as Karpenter's operator does (newCachedClient).
type apiServer struct {
	env    *envtest.Environment
	kube   client.Client
	cancel context.CancelFunc
}

func startAPIServer() (*apiServer, error) {
	dir := kubeBinDir()
	for _, b := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return nil, fmt.Errorf("%s is missing: run `make kube-bin` or set KUBEBUILDER_ASSETS", filepath.Join(dir, b))
		}
	}
	env := &envtest.Environment{Scheme: scheme.Scheme, CRDs: coreapis.CRDs, BinaryAssetsDirectory: dir, ErrorIfCRDPathMissing: false}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver from %s: %w", dir, err)
	}
	// No client-side rate limit: the comparison loads tens of thousands of objects.
	cfg.QPS, cfg.Burst = 1e6, 1e6
	ctx, cancel := context.WithCancel(context.Background())
	kube, err := newCachedClient(ctx, cfg)
	if err != nil {
		cancel()
		_ = env.Stop()
		return nil, err
	}
	a := &apiServer{env: env, kube: kube, cancel: cancel}
	running.Lock()
	running.servers[a] = true
	running.Unlock()
	return a, nil
}

func (a *apiServer) stop() error {
	running.Lock()
	delete(running.servers, a)
	running.Unlock()
	a.cancel()
	return a.env.Stop()
}

// running are the API servers started and not stopped yet.
var running = struct {
	sync.Mutex
	servers map[*apiServer]bool
}{servers: map[*apiServer]bool{}}

// stopAPIServersOnSignal stops every running etcd and kube-apiserver and exits when the program is
// interrupted, so that none outlives it.
func stopAPIServersOnSignal() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-signals
		running.Lock()
		for a := range running.servers {
			a.cancel()
			_ = a.env.Stop()
		}
		os.Exit(130)
	}()
}

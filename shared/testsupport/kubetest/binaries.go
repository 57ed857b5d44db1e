package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
)

// KubeVersion is the Kubernetes release the local control plane is built from; its minor matches the
// project's client-go. .ci/kube-bin.sh builds the same version by default.
const KubeVersion = "v1.34.4"

type binaries struct {
	etcd, apiserver, scheduler, controllerManager string
}

// BinDir is where the control plane binaries are looked for: $NW_KUBE_BIN, else
// ~/.cache/nodewright/kube-<KubeVersion>, the folder `make kube-bin` fills.
func BinDir() string {
	if d := os.Getenv("NW_KUBE_BIN"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, ".cache", "nodewright", "kube-"+KubeVersion)
}

func findBinaries() (binaries, error) {
	dir := BinDir()
	b := binaries{
		etcd:              filepath.Join(dir, "etcd"),
		apiserver:         filepath.Join(dir, "kube-apiserver"),
		scheduler:         filepath.Join(dir, "kube-scheduler"),
		controllerManager: filepath.Join(dir, "kube-controller-manager"),
	}
	for _, p := range []string{b.etcd, b.apiserver, b.scheduler, b.controllerManager} {
		if st, err := os.Stat(p); err != nil || st.Mode()&0o111 == 0 {
			return binaries{}, fmt.Errorf("%w: %s is missing; run `make kube-bin` (it builds them into %s)", errNoBinaries, p, dir)
		}
	}
	return b, nil
}

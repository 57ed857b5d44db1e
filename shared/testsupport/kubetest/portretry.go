package kubetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

// portAttempts bounds the starts of one component whose port was taken by another process between the
// moment it was chosen and the moment the component bound it.
const portAttempts = 3

// startOnFreePorts calls start, which chooses its ports afresh each time, again when component name
// exited because a port it was given was taken meanwhile. A free port is found by binding it and letting
// it go, so on a busy machine (CI runs test packages side by side, each starting servers on loopback
// ports) another process can take it before the component binds it: etcd then exits with "address
// already in use". Any other failure is returned at once.
func (cp *ControlPlane) startOnFreePorts(name string, start func() error) error {
	var err error
	for range portAttempts {
		if err = start(); err == nil || !portTaken(err) {
			return err
		}
		if p := cp.procs[name]; p != nil {
			p.Stop(5 * time.Second)
			delete(cp.procs, name)
		}
	}
	return err
}

// startEtcdOnFreePorts starts etcd (startOnFreePorts) and sets EtcdURL.
func (cp *ControlPlane) startEtcdOnFreePorts(ctx context.Context, bin string) error {
	return cp.startOnFreePorts("etcd", func() (err error) {
		_ = os.RemoveAll(filepath.Join(cp.dir, "etcd")) // what an etcd that lost its port left
		cp.EtcdURL, err = cp.startEtcd(ctx, bin)
		return err
	})
}

// portTaken reports whether err is a component's exit because its port was in use.
func portTaken(err error) bool {
	return errors.Is(err, testenv.ErrExited) && strings.Contains(err.Error(), "address already in use")
}

package kubetest

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nodewright/nodewright/shared/testsupport/awstest"
	"github.com/nodewright/nodewright/shared/testsupport/testenv"
)

var shared struct {
	mu sync.Mutex
	cp *ControlPlane
}

// Shared returns this test binary's control plane, starting it (or the extra components opts asks for) on
// first use. It stops the test through testenv.Unavailable when the control plane cannot start.
func Shared(tb testing.TB, opts Options) *ControlPlane {
	tb.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	ctx := context.Background()
	if shared.cp == nil {
		cp, err := Start(ctx, opts)
		if err != nil {
			testenv.Unavailable(tb, "the local control plane", err)
			return nil
		}
		shared.cp = cp
		return cp
	}
	if err := shared.cp.Ensure(ctx, opts); err != nil {
		testenv.Unavailable(tb, "a control plane component", err)
		return nil
	}
	return shared.cp
}

// Main runs the package's tests and then stops the shared control plane. Call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// MainWithMoto runs the package's tests and then stops the shared control plane and the shared moto, for
// packages whose tests use both. Call it from TestMain.
func MainWithMoto(m *testing.M) int {
	code := m.Run()
	awstest.StopShared()
	StopShared()
	return code
}

// StopShared stops the shared control plane if it runs. A TestMain that needs more than the control
// plane calls it after m.Run instead of using Main.
func StopShared() {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.cp != nil {
		shared.cp.Stop()
		shared.cp = nil
	}
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// Namespace creates a namespace named after the test and deletes it when the test ends.
func (cp *ControlPlane) Namespace(tb testing.TB) string {
	tb.Helper()
	base := strings.Trim(nonDNS.ReplaceAllString(strings.ToLower(tb.Name()), "-"), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: base + "-"}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	created, err := cp.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	if err != nil {
		tb.Fatalf("creating test namespace: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = cp.Client.CoreV1().Namespaces().Delete(ctx, created.Name, metav1.DeleteOptions{})
	})
	return created.Name
}

// String names the control plane for messages.
func (cp *ControlPlane) String() string {
	return fmt.Sprintf("kube-apiserver %s at %s", KubeVersion, cp.Config.Host)
}

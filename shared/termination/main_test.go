package termination

import (
	"os"
	"testing"

	"github.com/nodewright/nodewright/shared/awstest"
	"github.com/nodewright/nodewright/shared/kubetest"
)

// TestMain runs the tests once and stops both shared servers.
func TestMain(m *testing.M) {
	code := m.Run()
	awstest.StopShared()
	kubetest.StopShared()
	os.Exit(code)
}

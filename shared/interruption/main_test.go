package interruption_test

import (
	"os"
	"testing"

	"github.com/nodewright/nodewright/shared/awstest"
	"github.com/nodewright/nodewright/shared/kubetest"
)

// TestMain runs the tests and then stops moto and the local control plane when a test started them.
func TestMain(m *testing.M) {
	code := m.Run()
	awstest.StopShared()
	kubetest.StopShared()
	os.Exit(code)
}

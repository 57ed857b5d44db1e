package e2e

import (
	"os"
	"testing"

	"github.com/nodewright/nodewright/shared/testsupport/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.MainWithMoto(m)) }

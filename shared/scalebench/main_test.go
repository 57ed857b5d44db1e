package scalebench

import (
	"os"
	"testing"

	"github.com/nodewright/nodewright/shared/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

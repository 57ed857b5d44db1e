package layout

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository keeps its import rules.
func TestRepositoryKeepsTheImportRules(t *testing.T) {
	violations, err := Check(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	for _, v := range violations {
		t.Error(v)
	}
}

func write(t *testing.T, root, rel, src string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(src), 0o644))
}

// Each rule is enforced: a core package importing an adapter, an adapter importing a flow, a function
// importing test support and a package outside every group are all reported; test files, helper packages
// named *test and the CLI's use of the sandbox are not.
func TestCheckReportsEachForbiddenDirection(t *testing.T) {
	root := t.TempDir()
	imp := func(paths ...string) string {
		s := "package x\n\nimport (\n"
		for _, p := range paths {
			s += "\t_ \"" + Module + "/" + p + "\"\n"
		}
		return s + ")\n"
	}
	write(t, root, "shared/core/scheduling/a.go", imp("shared/core/apis", "shared/adapters/kube"))
	write(t, root, "shared/adapters/state/a.go", imp("shared/core/apis", "shared/flows/provisioning"))
	write(t, root, "shared/flows/lifecycle/a.go", imp("shared/adapters/state", "shared/flows/termination"))
	write(t, root, "shared/flows/lifecycle/a_test.go", imp("shared/testsupport/kubetest"))
	write(t, root, "shared/flows/interruption/interruptiontest/a.go", imp("shared/testsupport/awstest"))
	write(t, root, "functions/webhook/main.go", imp("shared/flows/podwebhook", "shared/testsupport/faults", "shared/flows/interruption/interruptiontest"))
	write(t, root, "cmd/nodewright/demo.go", imp("shared/testsupport/sandbox"))
	write(t, root, "shared/loose/a.go", "package loose\n")
	write(t, root, "other/go.mod", "module other\n")
	write(t, root, "other/a.go", imp("shared/testsupport/sandbox"))

	violations, err := Check(root)
	require.NoError(t, err)
	var got []string
	for _, v := range violations {
		got = append(got, v.String())
	}
	assert.Equal(t, []string{
		"functions/webhook/main.go imports " + Module + "/shared/flows/interruption/interruptiontest: functions may import only shared/core, shared/adapters, shared/flows",
		"functions/webhook/main.go imports " + Module + "/shared/testsupport/faults: functions may import only shared/core, shared/adapters, shared/flows",
		"shared/adapters/state/a.go imports " + Module + "/shared/flows/provisioning: shared/adapters may import only shared/core, shared/adapters",
		"shared/core/scheduling/a.go imports " + Module + "/shared/adapters/kube: shared/core may import only shared/core",
		"shared/loose/a.go: every package under shared/ belongs to a group: core, adapters, flows or testsupport",
	}, got)
}

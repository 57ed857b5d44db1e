package scheduling_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPureImports keeps the scheduling core pure: non-test files import only the standard library,
// k8s.io/api and k8s.io/apimachinery.
func TestPureImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		parsed, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range parsed.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			first, _, _ := strings.Cut(path, "/")
			allowed := !strings.Contains(first, ".") || strings.HasPrefix(path, "k8s.io/api/") || strings.HasPrefix(path, "k8s.io/apimachinery/")
			assert.True(t, allowed, "%s imports %s", f, path)
			for _, banned := range []string{"time", "math/rand", "math/rand/v2", "os", "net/http", "log", "log/slog"} {
				assert.NotEqual(t, banned, path, "%s imports %s: the core has no clock, randomness, I/O or logging", f, path)
			}
		}
	}
}

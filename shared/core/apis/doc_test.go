package apis_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestImportsArePure keeps the package pure: the standard library, Kubernetes API types and helpers, YAML
// and JSON decoding, and cron — no AWS SDK, no clients, nothing that does I/O on its own.
func TestImportsArePure(t *testing.T) {
	allowed := []string{"k8s.io/api/", "k8s.io/apimachinery/", "sigs.k8s.io/yaml", "sigs.k8s.io/json", "github.com/robfig/cron/v3"}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			if !strings.Contains(strings.Split(path, "/")[0], ".") {
				continue // standard library
			}
			ok := false
			for _, prefix := range allowed {
				ok = ok || strings.HasPrefix(path, prefix)
			}
			assert.True(t, ok, "%s imports %s", file, path)
		}
	}
}

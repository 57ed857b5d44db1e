package drift_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPureImports keeps the drift core pure: non-test files import only the standard library, with no
// randomness, I/O or logging; they may use package time for values but never read the clock or wait.
func TestPureImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true, "Tick": true, "NewTicker": true, "NewTimer": true}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		require.NoError(t, err)
		for _, imp := range parsed.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			first, _, _ := strings.Cut(path, "/")
			allowed := !strings.Contains(first, ".")
			assert.True(t, allowed, "%s imports %s", f, path)
			for _, banned := range []string{"math/rand", "math/rand/v2", "crypto/rand", "os", "net/http", "log", "log/slog", "sync", "unsafe"} {
				assert.NotEqual(t, banned, path, "%s imports %s: the core has no randomness, I/O, logging or shared state", f, path)
			}
		}
		ast.Inspect(parsed, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" && clock[sel.Sel.Name] {
				t.Errorf("%s calls time.%s: the core takes the time as an argument", f, sel.Sel.Name)
			}
			return true
		})
	}
}

package main

import (
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPreflightReservedConcurrencyMatchesInfra: the concurrency preflight asks the account for is what the
// CDK app reserves: every `reserved:` worker spec and the webhook's ReservedConcurrency in infra/, their
// constants evaluated from infra's own source.
func TestPreflightReservedConcurrencyMatchesInfra(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join("..", "..", "infra", "*.go"))
	require.NoError(t, err)
	files := map[string]*ast.File{}
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		require.NoError(t, err)
		files[p] = f
	}
	require.NotEmpty(t, files)

	// Every constant of the package whose value needs nothing but other constants.
	consts := map[string]int64{}
	var decls []*ast.ValueSpec
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					decls = append(decls, s.(*ast.ValueSpec))
				}
			}
		}
	}
	for progress := true; progress; {
		progress = false
		for _, spec := range decls {
			for i, name := range spec.Names {
				if _, done := consts[name.Name]; done || i >= len(spec.Values) {
					continue
				}
				if v, ok := evalInt(spec.Values[i], consts); ok {
					consts[name.Name], progress = v, true
				}
			}
		}
	}

	var workers, webhook int64
	var found []string
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			key, ok := kv.Key.(*ast.Ident)
			if !ok || (key.Name != "reserved" && key.Name != "ReservedConcurrency") {
				return true
			}
			v, ok := evalInt(kv.Value, consts)
			if !ok { // a pass-through such as ReservedConcurrency: spec.reserved
				return true
			}
			found = append(found, filepath.Base(name)+":"+key.Name)
			if filepath.Base(name) == "webhook.go" {
				webhook += v
			} else {
				workers += v
			}
			return true
		})
	}
	assert.Len(t, found, 6, "five workers and the webhook reserve concurrency: %v", found)
	assert.Equal(t, int64(workersReservedConcurrency), workers, "workers' reserved concurrency, %v", found)
	assert.Equal(t, int64(webhookReservedConcurrency), webhook, "the webhook's reserved concurrency")
}

// evalInt evaluates an integer constant expression over known constants.
func evalInt(e ast.Expr, consts map[string]int64) (int64, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.INT {
			return 0, false
		}
		v, ok := constant.Int64Val(constant.MakeFromLiteral(e.Value, e.Kind, 0))
		return v, ok
	case *ast.Ident:
		v, ok := consts[e.Name]
		return v, ok
	case *ast.ParenExpr:
		return evalInt(e.X, consts)
	case *ast.BinaryExpr:
		x, okx := evalInt(e.X, consts)
		y, oky := evalInt(e.Y, consts)
		if !okx || !oky {
			return 0, false
		}
		v := constant.BinaryOp(constant.MakeInt64(x), e.Op, constant.MakeInt64(y))
		if v.Kind() != constant.Int {
			return 0, false
		}
		r, ok := constant.Int64Val(v)
		return r, ok
	}
	return 0, false
}

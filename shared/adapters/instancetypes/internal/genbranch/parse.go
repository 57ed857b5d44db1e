package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// parseLimits reads the map literal `var Limits = map[string]*VPCLimits{"type": {...}, ...}` and returns
// each trunking-compatible type's BranchInterface count. A type whose entry has no IsTrunkingCompatible
// field, or false, supports no branch interfaces and is left out.
func parseLimits(src []byte) (map[string]int64, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "limits.go", src, 0)
	if err != nil {
		return nil, err
	}
	var limits *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "Limits" || len(vs.Values) != 1 {
			return true
		}
		limits, _ = vs.Values[0].(*ast.CompositeLit)
		return false
	})
	if limits == nil {
		return nil, fmt.Errorf("no `var Limits = map[...]...{...}` literal")
	}
	out := map[string]int64{}
	for _, el := range limits.Elts {
		kv, ok := el.(*ast.KeyValueExpr)
		if !ok {
			return nil, fmt.Errorf("an element of Limits is not `key: value`")
		}
		name, err := stringLit(kv.Key)
		if err != nil {
			return nil, err
		}
		entry, ok := kv.Value.(*ast.CompositeLit)
		if !ok {
			return nil, fmt.Errorf("%s: the value is not a struct literal", name)
		}
		trunking, branches := false, int64(-1)
		for _, f := range entry.Elts {
			fkv, ok := f.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			field, _ := fkv.Key.(*ast.Ident)
			if field == nil {
				continue
			}
			switch field.Name {
			case "IsTrunkingCompatible":
				id, _ := fkv.Value.(*ast.Ident)
				trunking = id != nil && id.Name == "true"
			case "BranchInterface":
				lit, ok := fkv.Value.(*ast.BasicLit)
				if !ok || lit.Kind != token.INT {
					return nil, fmt.Errorf("%s: BranchInterface is not an integer literal", name)
				}
				if branches, err = strconv.ParseInt(lit.Value, 10, 64); err != nil {
					return nil, fmt.Errorf("%s: BranchInterface: %w", name, err)
				}
			}
		}
		if trunking {
			if branches < 0 {
				return nil, fmt.Errorf("%s: trunking compatible without a BranchInterface count", name)
			}
			out[name] = branches
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no trunking-compatible instance type found")
	}
	return out, nil
}

func stringLit(e ast.Expr) (string, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", fmt.Errorf("a key of Limits is not a string literal")
	}
	return strconv.Unquote(lit.Value)
}

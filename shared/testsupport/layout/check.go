package layout

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Violation is one import a group may not make, or one package outside every group.
type Violation struct {
	File   string // repository-relative, slash-separated
	Import string // the import path; empty when the file's package is in no group
	Reason string
}

func (v Violation) String() string {
	if v.Import == "" {
		return fmt.Sprintf("%s: %s", v.File, v.Reason)
	}
	return fmt.Sprintf("%s imports %s: %s", v.File, v.Import, v.Reason)
}

// skipDirs are never walked: dependencies, build outputs, and modules of their own.
var skipDirs = map[string]bool{".git": true, "node_modules": true, "cdk.out": true, "testdata": true, "vendor": true}

// Check parses the imports of every non-test Go file of the main module under root and returns the
// imports its group may not make, sorted by file. A folder holding a go.mod of its own is another module
// and is left out (the Karpenter comparison module).
func Check(root string) ([]Violation, error) {
	var out []Violation
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			if skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if isModule(path) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		dir := pathDir(rel)
		from, ok := GroupOf(dir)
		if !ok {
			if strings.HasPrefix(dir, "shared/") || dir == "shared" {
				out = append(out, Violation{File: rel, Reason: "every package under shared/ belongs to a group: core, adapters, flows or testsupport"})
			}
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		for _, is := range f.Imports {
			imp, _ := strconv.Unquote(is.Path.Value)
			if !strings.HasPrefix(imp, Module+"/") {
				continue
			}
			to, ok := GroupOf(strings.TrimPrefix(imp, Module+"/"))
			if !ok {
				out = append(out, Violation{File: rel, Import: imp, Reason: "the imported package is in no group"})
				continue
			}
			if !allowed(from, to) {
				out = append(out, Violation{File: rel, Import: imp, Reason: fmt.Sprintf("%s may import only %s", from, groupList(mayImport[from]))})
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b Violation) int { return strings.Compare(a.String(), b.String()) })
	return out, err
}

// isModule says whether dir holds a go.mod of its own.
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

// pathDir is the slash-separated directory of a repository-relative file.
func pathDir(rel string) string {
	if i := strings.LastIndex(rel, "/"); i >= 0 {
		return rel[:i]
	}
	return "."
}

func groupList(gs []Group) string {
	s := make([]string, len(gs))
	for i, g := range gs {
		s[i] = string(g)
	}
	return strings.Join(s, ", ")
}

package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nodewright/nodewright/shared/core/apis"
)

// Stdin is the path that stands for standard input.
const Stdin = "-"

// Load reads every path — a file, a directory walked (recursively, in lexical order) for *.yaml, *.yml
// and *.json, or Stdin — and decodes all the NodePools, EC2NodeClasses and NodeOverlays in them. It goes on past bad
// files and documents and returns each problem as its own error: an I/O error, or an *apis.DecodeError
// naming the file and document. Objects are neither defaulted nor validated; see Check.
func Load(stdin io.Reader, paths ...string) (apis.Objects, []error) {
	var objs apis.Objects
	var errs []error
	for _, path := range paths {
		inputs, err := read(path, stdin)
		if err != nil {
			errs = append(errs, err)
		}
		for _, in := range inputs {
			decoded, err := apis.Decode(in.name, in.data)
			objs.Append(decoded)
			var derrs apis.DecodeErrors
			switch {
			case errors.As(err, &derrs):
				for _, e := range derrs {
					errs = append(errs, e)
				}
			case err != nil:
				errs = append(errs, fmt.Errorf("%s: %w", in.name, err))
			}
		}
	}
	return objs, errs
}

// Check loads paths as Load does, then defaults and validates everything read (apis.DefaultAndValidate),
// and returns the defaulted objects with every problem found, in order: reading and decoding problems
// first, then validation errors (apis.ObjectError). No problems means the configuration may be deployed.
// Finding no object at all is a problem too.
func Check(stdin io.Reader, paths ...string) (apis.Objects, []error) {
	objs, errs := Load(stdin, paths...)
	for _, e := range apis.DefaultAndValidate(objs) {
		errs = append(errs, e)
	}
	if len(errs) == 0 && len(objs.NodePools)+len(objs.EC2NodeClasses)+len(objs.NodeOverlays) == 0 {
		errs = append(errs, fmt.Errorf("no NodePool or EC2NodeClass found in %s", strings.Join(paths, ", ")))
	}
	return objs, errs
}

type input struct {
	name string
	data []byte
}

func read(path string, stdin io.Reader) ([]input, error) {
	if path == Stdin {
		data, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		return []input{{name: Stdin, data: data}}, nil
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return []input{{name: path, data: data}}, nil
	}
	var out []input
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !IsManifestFile(p) {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, input{name: p, data: data})
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// IsManifestFile reports whether a directory walk reads the file: *.yaml, *.yml or *.json.
func IsManifestFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/apis/manifest"
)

func init() {
	register("validate", command{summary: "check NodePool and EC2NodeClass manifests as Karpenter would", run: runValidate})
}

// fileList is a repeatable -f flag.
type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(v string) error { *f = append(*f, v); return nil }

// runValidate reads every manifest named by -f (a file, a directory walked for *.yaml, *.yml and *.json,
// or - for standard input), then decodes, defaults and validates all of them together. It prints each
// problem on its own line on stderr — file, document, kind/name, field and reason — and exits 1 if there is
// any, or prints a one-line summary on stdout and exits 0. Usage errors exit 2.
func runValidate(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright validate", flag.ContinueOnError)
	fset.SetOutput(stderr)
	var files fileList
	fset.Var(&files, "f", "manifest `FILE`, DIR (walked for *.yaml, *.yml, *.json) or - for stdin; repeatable")
	gates := addGatesFlag(fset)
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nodewright validate -f FILE|DIR|- [-f ...] [--feature-gates Name=true,...]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Checks Karpenter v1 NodePool and EC2NodeClass (and v1alpha1 NodeOverlay) manifests: strict decoding, defaults, and every")
		fmt.Fprintln(stderr, "rule Karpenter enforces. Prints one line per problem and exits 1 if there is any.")
		fmt.Fprintln(stderr)
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(files) == 0 || fset.NArg() > 0 {
		fset.Usage()
		return 2
	}
	fg, ok := gates.parse(stderr)
	if !ok {
		return 2
	}

	objs, problems := manifest.Check(stdin, files...)
	problems = append(problems, gateProblems(objs, fg)...)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		fmt.Fprintf(stderr, "%d %s found\n", len(problems), plural(len(problems), "problem", "problems"))
		return 1
	}
	for _, w := range apis.MissingNodeClasses(objs) {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	overlays := ""
	if n := len(objs.NodeOverlays); n > 0 {
		overlays = fmt.Sprintf(", %d %s", n, plural(n, "NodeOverlay", "NodeOverlays"))
	}
	fmt.Fprintf(stdout, "%d %s, %d %s%s valid\n",
		len(objs.NodePools), plural(len(objs.NodePools), "NodePool", "NodePools"),
		len(objs.EC2NodeClasses), plural(len(objs.EC2NodeClasses), "EC2NodeClass", "EC2NodeClasses"), overlays)
	return 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

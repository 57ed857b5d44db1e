package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/nodewright/nodewright/shared/apis"
	"github.com/nodewright/nodewright/shared/apis/manifest"
	"github.com/nodewright/nodewright/shared/settings"
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
	featureGates := fset.String("feature-gates", "", "the deployment's feature gates in Karpenter's form (as the CDK context value featureGates), "+
		"such as StaticCapacity=true; fields whose gate is off are refused")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nodewright validate -f FILE|DIR|- [-f ...] [--feature-gates Name=true,...]")
		fmt.Fprintln(stderr)
		fmt.Fprintln(stderr, "Checks Karpenter v1 NodePool and EC2NodeClass manifests: strict decoding, defaults, and every")
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

	gates, err := settings.ParseFeatureGates(*featureGates)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright validate: --feature-gates:", err)
		return 2
	}
	objs, problems := manifest.Check(stdin, files...)
	for _, p := range apis.RefuseGated(objs, apis.Gates{StaticCapacity: gates.StaticCapacity}) {
		problems = append(problems, p)
	}
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
	fmt.Fprintf(stdout, "%d %s, %d %s valid\n",
		len(objs.NodePools), plural(len(objs.NodePools), "NodePool", "NodePools"),
		len(objs.EC2NodeClasses), plural(len(objs.EC2NodeClasses), "EC2NodeClass", "EC2NodeClasses"))
	return 0
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Command genbranch writes data/branch-enis.json: the number of branch network interfaces (the pods that
// can each get their own security groups, resource vpc.amazonaws.com/pod-eni) of every instance type
// that supports ENI trunking. EC2's DescribeInstanceTypes does not report them; the figures are published
// only as the generated VPC limits table of aws/karpenter-provider-aws
// (pkg/providers/instancetype/zz_generated.vpclimits.go), which this command reads as Go source.
//
//	go run ./shared/adapters/instancetypes/internal/genbranch -in zz_generated.vpclimits.go -source "..." -generated-at 2026-08-06T04:02:42Z > shared/adapters/instancetypes/data/branch-enis.json
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/nodewright/nodewright/shared/adapters/instancetypes"
)

func main() {
	in := flag.String("in", "", "the VPC limits Go source to read")
	source := flag.String("source", "", "where the file comes from (repository, path and commit)")
	generatedAt := flag.String("generated-at", "", "when the file was generated (RFC 3339)")
	flag.Parse()
	if err := run(*in, *source, *generatedAt); err != nil {
		fmt.Fprintln(os.Stderr, "genbranch:", err)
		os.Exit(1)
	}
}

func run(in, source, generatedAt string) error {
	if in == "" || source == "" || generatedAt == "" {
		return fmt.Errorf("-in, -source and -generated-at are all required")
	}
	src, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	counts, err := parseLimits(src)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	out, err := instancetypes.EncodeBranchTable(instancetypes.BranchTable{Source: source, GeneratedAt: generatedAt, Types: counts})
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

func init() {
	register("preflight", command{summary: "say before a deploy whether Nodewright will work with a cluster and the CDK context values", run: runPreflight})
}

const preflightUsage = "Usage: nodewright preflight --cluster NAME --region REGION [--endpoint-url URL] [-c key=value ...]"

// runPreflight reads the cluster (eks:DescribeCluster: endpoint access, authentication mode, IP family,
// version, control-plane egress), the subnets and security groups the VPC settings name (their VPC, their
// default route, whether the control plane accepts the groups on 443) and the account (Function URLs in
// the region, unreserved Lambda
// concurrency, the spot service-linked role, the stack's access entries once deployed) and judges them
// against the deployment's context values: one line per item, works / warning / will not work / not
// checked, with the -c value that fixes it when one does. Exit 1 when any item will not work, 2 for bad
// flags or values.
func runPreflight(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright preflight", flag.ContinueOnError)
	fset.SetOutput(stderr)
	cluster := fset.String("cluster", "", "the EKS cluster `NAME` Nodewright will manage (required)")
	region := fset.String("region", "", "the cluster's AWS `REGION` (required)")
	endpoint := fset.String("endpoint-url", "", "send every AWS call to `URL` (e.g. a local moto_server)")
	ctxValues := contextFlag{}
	fset.Var(ctxValues, "c", "a CDK context value `KEY=VALUE` as given to cdk deploy (repeatable): "+
		"vpcSubnetIds, vpcSecurityGroupIds, vpcEndpoints, isolatedVPC, pendingPodWebhook")
	fset.Usage = func() {
		fmt.Fprintln(stderr, preflightUsage)
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usageErr := func(msg string) int {
		fmt.Fprintln(stderr, "nodewright preflight:", msg)
		fmt.Fprintln(stderr, preflightUsage)
		return 2
	}
	switch {
	case fset.NArg() > 0:
		return usageErr(fmt.Sprintf("unexpected arguments %q", fset.Args()))
	case *cluster == "":
		return usageErr("--cluster is required")
	case !clusterNamePattern.MatchString(*cluster):
		return usageErr(fmt.Sprintf("--cluster %q is not an EKS cluster name", *cluster))
	case *region == "": // never the environment's: the answer is about one region's cluster and Lambda
		return usageErr("--region is required")
	case !regionPattern.MatchString(*region):
		return usageErr(fmt.Sprintf("--region %q is not an AWS region name", *region))
	}
	settings, err := ctxValues.settings()
	if err != nil {
		return usageErr(err.Error())
	}
	if r := ctxValues["region"]; r != "" && r != *region {
		return usageErr(fmt.Sprintf("-c region=%s differs from --region %s", r, *region))
	}
	if n := ctxValues["clusterName"]; n != "" && n != *cluster {
		return usageErr(fmt.Sprintf("-c clusterName=%s differs from --cluster %s", n, *cluster))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := loadAWSConfig(ctx, *region)
	if err != nil {
		fmt.Fprintln(stderr, "nodewright preflight: loading AWS configuration:", err)
		return 1
	}
	apis := newPreflightAPIs(cfg, *endpoint)
	c, err := readCluster(ctx, apis.EKS, *cluster)
	if err != nil {
		fmt.Fprintf(stderr, "nodewright preflight: %v (region %s)\n", err, *region)
		return 1
	}
	findings := judge(c, readAccount(ctx, apis, *region, c, settings), settings)
	return printFindings(stdout, findings)
}

// printFindings writes one line per item and a verdict; the exit code is 1 when any item will not work.
func printFindings(w io.Writer, findings []finding) int {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	count := map[verdict]int{}
	for _, f := range findings {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.Item, f.Verdict, f.line())
		count[f.Verdict]++
	}
	tw.Flush()
	var unchecked string
	if n := count[notChecked]; n > 0 {
		unchecked = fmt.Sprintf(" %d item(s) could not be checked.", n)
	}
	if n := count[willNotWork]; n > 0 {
		fmt.Fprintf(w, "\nNodewright will not work as configured: %d item(s) will not work, each saying what to change.%s\n", n, unchecked)
		return 1
	}
	fmt.Fprintf(w, "\nNodewright can work as configured.%s\n", unchecked)
	return 0
}

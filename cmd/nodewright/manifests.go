package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/nodewright/nodewright/shared/adapters/capacitybuffer"
	"github.com/nodewright/nodewright/shared/adapters/footprint"
)

func init() {
	register("manifests", command{summary: "print the mirror CRDs, RBAC and webhook registration Nodewright needs in the cluster", run: runManifests})
}

// runManifests prints, as multi-document YAML for kubectl apply, the mirror CRDs of nodewright.sh and the
// ValidatingAdmissionPolicy that keeps them read-only (footprint.Mirrors), each function's ClusterRole and
// its ClusterRoleBinding to that function's group (footprint.RBAC) and the ValidatingWebhookConfiguration
// pointing at the webhook URL (the stack outputs WebhookFunctionUrl and, in Secrets Manager, the path token).
func runManifests(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("nodewright manifests", flag.ContinueOnError)
	fset.SetOutput(stderr)
	webhookURL := fset.String("webhook-url", "", "the webhook's full https `URL`, secret path token included")
	caFile := fset.String("ca-bundle", "", "PEM `FILE` of the CA that signs the webhook's certificate (local sandbox only)")
	noWebhook := fset.Bool("no-webhook", false, "print the footprint without the webhook, for a deployment with pendingPodWebhook=false "+
		"(pending pods are then found by the provisioner's one-minute backstop)")
	bufferCRD := fset.Bool("capacity-buffer-crd", false, "print only the CapacityBuffer CustomResourceDefinition (autoscaling.x-k8s.io/v1beta1, "+
		"SIG Autoscaling's API) for a cluster that lacks it and runs the CapacityBuffer gate; never printed otherwise")
	fset.Usage = func() {
		fmt.Fprintln(stderr, "Usage: nodewright manifests --webhook-url https://<function-url-host>/webhook/<token> [--ca-bundle FILE]")
		fmt.Fprintln(stderr, "       nodewright manifests --no-webhook")
		fmt.Fprintln(stderr, "       nodewright manifests --capacity-buffer-crd")
		fset.PrintDefaults()
	}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *bufferCRD {
		// The CRD belongs to SIG Autoscaling (Cluster Autoscaler and Karpenter install it too): printed on
		// request only, alone, so applying the footprint never replaces a copy another autoscaler owns.
		if *webhookURL != "" || *noWebhook || *caFile != "" || fset.NArg() > 0 {
			fmt.Fprintln(stderr, "nodewright manifests: --capacity-buffer-crd prints the CRD alone: drop --webhook-url, --no-webhook and --ca-bundle")
			return 2
		}
		_, _ = stdout.Write(capacitybuffer.CRD)
		return 0
	}
	if (*webhookURL == "") == !*noWebhook || (*noWebhook && *caFile != "") || fset.NArg() > 0 {
		fset.Usage()
		return 2
	}
	objs := append(footprint.Mirrors(), footprint.RBAC()...)
	if *noWebhook {
		return printManifests(objs, stdout, stderr)
	}
	var ca []byte
	if *caFile != "" {
		var err error
		if ca, err = os.ReadFile(*caFile); err != nil {
			fmt.Fprintln(stderr, "nodewright manifests:", err)
			return 1
		}
		if err := footprint.CheckCABundle(ca); err != nil {
			fmt.Fprintf(stderr, "nodewright manifests: --ca-bundle %s: %v\n", *caFile, err)
			return 1
		}
	}
	vwc, err := footprint.ValidatingWebhookConfiguration(footprint.WebhookOptions{URL: *webhookURL, CABundle: ca})
	if err != nil {
		fmt.Fprintln(stderr, "nodewright manifests:", err)
		return 1
	}
	return printManifests(append(objs, vwc), stdout, stderr)
}

// printManifests writes objs as multi-document YAML.
func printManifests(objs []any, stdout, stderr io.Writer) int {
	for i, obj := range objs {
		out, err := yaml.Marshal(obj)
		if err != nil {
			fmt.Fprintln(stderr, "nodewright manifests:", err)
			return 1
		}
		if i > 0 {
			fmt.Fprintln(stdout, "---")
		}
		_, _ = stdout.Write(out)
	}
	return 0
}

package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/nodewright/nodewright/shared/core/apis"
	"github.com/nodewright/nodewright/shared/core/apis/manifest"
	"github.com/nodewright/nodewright/shared/core/settings"
)

// gatesFlag is --feature-gates, Karpenter's FEATURE_GATES form ("NodeOverlay=true"), for the commands that
// read manifests without a deployment: what they accept depends on the gates, as the CDK app's synth
// does on its featureGates context value.
type gatesFlag struct{ text *string }

func addGatesFlag(fset *flag.FlagSet) gatesFlag {
	return gatesFlag{text: fset.String("feature-gates", "", "Karpenter's feature gates, such as `StaticCapacity=true,NodeOverlay=true` "+
		"(the CDK context value featureGates); static NodePools and NodeOverlays are refused unless their gate is on")}
}

// parse reads the flag, printing why it is malformed on stderr.
func (g gatesFlag) parse(stderr io.Writer) (settings.FeatureGates, bool) {
	fg, err := settings.ParseFeatureGates(*g.text)
	if err != nil {
		fmt.Fprintln(stderr, "--feature-gates:", err)
		return fg, false
	}
	return fg, true
}

// gateProblems are the objects the gates refuse (static NodePools while StaticCapacity is off,
// NodeOverlays while NodeOverlay is off).
func gateProblems(objs apis.Objects, gates settings.FeatureGates) []error {
	var out []error
	for _, e := range manifest.Gated(objs, gates) {
		out = append(out, e)
	}
	return out
}

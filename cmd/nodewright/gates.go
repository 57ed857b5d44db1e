package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/nodewright/nodewright/shared/apis"
	"github.com/nodewright/nodewright/shared/nodeoverlay"
	"github.com/nodewright/nodewright/shared/settings"
)

// gatesFlag is --feature-gates, Karpenter's FEATURE_GATES form ("NodeOverlay=true"), for the commands that
// read manifests without a deployment: what they accept depends on the gates, as the CDK app's synth
// does on its featureGates context value.
type gatesFlag struct{ text *string }

func addGatesFlag(fset *flag.FlagSet) gatesFlag {
	return gatesFlag{text: fset.String("feature-gates", "", "Karpenter's feature gates, such as `NodeOverlay=true` "+
		"(the CDK context value featureGates); NodeOverlays are refused unless NodeOverlay=true")}
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

// gateProblems are the objects the gates refuse (NodeOverlays while NodeOverlay is off).
func gateProblems(objs apis.Objects, gates settings.FeatureGates) []error {
	var out []error
	for _, e := range nodeoverlay.GateErrors(objs, gates) {
		out = append(out, e)
	}
	return out
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testdata = "../../shared/core/apis/testdata"

func runValidateArgs(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = dispatch(append([]string{"validate"}, args...), strings.NewReader(stdin), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestValidateCommand(t *testing.T) {
	validFile := filepath.Join(testdata, "valid", "general-purpose.yaml")
	validStdin, err := os.ReadFile(validFile)
	require.NoError(t, err)

	cases := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		stdout     string   // exact, when code is 0
		stderrHas  []string // substrings of stderr
		stderrNone bool
	}{
		{name: "valid file", args: []string{"-f", validFile}, code: 0, stdout: "1 NodePool, 1 EC2NodeClass valid\n", stderrNone: true},
		{name: "valid directory", args: []string{"-f", filepath.Join(testdata, "valid")}, code: 0, stdout: "21 NodePools, 15 EC2NodeClasses valid\n", stderrNone: true},
		{name: "valid stdin", stdin: string(validStdin), args: []string{"-f", "-"}, code: 0, stdout: "1 NodePool, 1 EC2NodeClass valid\n", stderrNone: true},
		{name: "repeated -f", args: []string{"-f", validFile, "-f", filepath.Join(testdata, "valid", "gpu.yaml")}, code: 0, stdout: "2 NodePools, 2 EC2NodeClasses valid\n", stderrNone: true},
		{name: "invalid file", args: []string{"-f", filepath.Join(testdata, "invalid", "nodepool.yaml")}, code: 1, stderrHas: []string{
			`nodepool.yaml: document 1: NodePool/broken: spec.template.spec.requirements[0].operator: Unsupported value: "Matches": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte"`,
			`nodepool.yaml: document 1: NodePool/broken: spec.template.spec.expireAfter: Invalid value: "30d"`,
			`nodepool.yaml: document 1: NodePool/broken: spec.weight: Invalid value: 0`,
			"3 problems found",
		}},
		{name: "invalid directory", args: []string{"-f", filepath.Join(testdata, "invalid")}, code: 1, stderrHas: []string{
			`unknown-field.yaml: document 1: strict decoding error: unknown field "spec.disruption.consolidateAfterr"`,
			`ec2nodeclass.yaml: document 1: EC2NodeClass/broken: spec.instanceProfile: Forbidden: must specify exactly one of ['role', 'instanceProfile']`,
			`ec2nodeclass.yaml: document 1: EC2NodeClass/broken: spec.blockDeviceMappings[1].rootVolume`,
			"7 problems found",
		}},
		{name: "settings that could never work", args: []string{"-f", filepath.Join(testdata, "unsupported")}, code: 1, stderrHas: []string{
			`windows.yaml: document 2: EC2NodeClass/windows2022: spec.amiSelectorTerms[0].alias: Forbidden: not supported yet by nodewright: Windows nodes (windows2022@latest); use AL2023, AL2, Bottlerocket, or Custom with a Linux AMI`,
			`durations.yaml: document 1: NodePool/forever: spec.template.spec.expireAfter: Invalid value: "2562048h": is longer than the longest duration nodewright can time (2562047h47m16s, about 292 years)`,
			`durations.yaml: document 1: NodePool/forever: spec.template.spec.terminationGracePeriod: Invalid value: "9999999999h": is longer than the longest duration nodewright can time (2562047h47m16s, about 292 years)`,
			`long-name.yaml: document 1: NodePool/general-purpose-on-demand-capacity-for-the-payments-teams: metadata.name: Invalid value: "general-purpose-on-demand-capacity-for-the-payments-teams": must be no more than 56 characters`,
			`tenancy.yaml: document 1: NodePool/dedicated: spec.template.spec.requirements[0].values: Invalid value: ["dedicated"]: Nodewright launches shared-tenancy instances only`,
			"5 problems found",
		}},
		{name: "invalid stdin", stdin: "apiVersion: karpenter.sh/v1beta1\nkind: NodePool\n", args: []string{"-f", "-"}, code: 1, stderrHas: []string{
			`-: document 1: unsupported apiVersion "karpenter.sh/v1beta1" for kind NodePool: want karpenter.sh/v1`,
		}},
		{name: "duplicate names across files", args: []string{"-f", validFile, "-f", validFile}, code: 1, stderrHas: []string{
			`NodePool/general-purpose: metadata.name: Duplicate value: "general-purpose"`,
		}},
		{name: "missing file", args: []string{"-f", filepath.Join(testdata, "nope.yaml")}, code: 1, stderrHas: []string{"nope.yaml: no such file"}},
		{name: "nothing to validate", stdin: "# empty\n", args: []string{"-f", "-"}, code: 1, stderrHas: []string{"no NodePool or EC2NodeClass found"}},
		{name: "warning for a missing EC2NodeClass", args: []string{"-f", filepath.Join(testdata, "valid", "spot.yaml")}, code: 0,
			stdout: "1 NodePool, 0 EC2NodeClasses valid\n", stderrHas: []string{`warning: ` + filepath.Join(testdata, "valid", "spot.yaml") + `: document 1: NodePool/spot: spec.template.spec.nodeClassRef.name: EC2NodeClass "default" is not in the given manifests`}},
		{name: "no -f", args: nil, code: 2, stderrHas: []string{"Usage: nodewright validate"}},
		{name: "stray argument", args: []string{"-f", validFile, "extra"}, code: 2, stderrHas: []string{"Usage: nodewright validate"}},
		{name: "unknown flag", args: []string{"-x"}, code: 2, stderrHas: []string{"flag provided but not defined: -x"}},
		{name: "help", args: []string{"-h"}, code: 0, stderrHas: []string{"Usage: nodewright validate"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runValidateArgs(t, c.stdin, c.args...)
			assert.Equal(t, c.code, code, "stderr:\n%s", stderr)
			if c.stdout != "" {
				assert.Equal(t, c.stdout, stdout)
			}
			if c.code != 0 {
				assert.Empty(t, stdout)
			}
			for _, want := range c.stderrHas {
				assert.Contains(t, stderr, want)
			}
			if c.stderrNone {
				assert.Empty(t, stderr)
			}
		})
	}
}

func TestValidateIsRegistered(t *testing.T) {
	var out bytes.Buffer
	assert.Equal(t, 0, dispatch(nil, strings.NewReader(""), &out, &out))
	assert.Contains(t, out.String(), "validate")
}
